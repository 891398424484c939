/** The access delta's two sides: codes from the operations, words in JSON and in check's headline. */
import { describe, expect, it } from 'vitest';
import { comparedText, deltaSideText, wordedDelta } from '../../../src/views/ops-compared.js';
import type { AccessDelta } from '../../../src/access/delta.js';

describe('the sides an access delta compares', () => {
  it('words every code as the delta has always shown it', () => {
    expect(deltaSideText({ code: 'server_now' })).toBe('the server now');
    expect(deltaSideText({ code: 'after_apply' })).toBe('after apply');
    expect(deltaSideText({ code: 'after_apply_of_files' })).toBe('after apply of the files');
    expect(deltaSideText({ code: 'files_at', ref: 'origin/main' })).toBe('the files at origin/main');
    expect(deltaSideText({ code: 'files_now' })).toBe('the files now');
    expect(deltaSideText({ code: 'after_apply_of_base', ref: 'main' })).toBe("after apply of main's changes");
    expect(deltaSideText({ code: 'after_apply_of_pr' })).toBe("after apply of this pull request's changes too");
  });

  it('keeps the words of a saved plan, and puts words in the JSON delta', () => {
    expect(comparedText({ before: 'the server now', after: { code: 'after_apply' } })).toBe(
      'the server now → after apply',
    );
    const delta: AccessDelta = {
      version: 1,
      compared: { before: { code: 'files_at', ref: 'main' }, after: { code: 'files_now' } },
      entries: [],
      blast_radius: {} as AccessDelta['blast_radius'],
    };
    expect(wordedDelta(delta).compared).toEqual({ before: 'the files at main', after: 'the files now' });
    expect(delta.compared.before).toEqual({ code: 'files_at', ref: 'main' });
  });
});
