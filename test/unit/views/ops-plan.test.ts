/**
 * Where a plan's comparisons came from: codes set by src/ops/plan.ts and src/ops/owners.ts, words
 * in the text, the pull-request comment and the JSON plan (and so in saved plans), as before.
 */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/plan/types.js';
import { approvalsMarkdown, approvalsText } from '../../../src/views/approvals.js';
import { wordedPlan } from '../../../src/views/notes.js';
import { baseNoteText, ownersSourceText } from '../../../src/views/ops-plan.js';

const ALONE = ': every change counts as introduced by this pull request';

describe("a plan's sources in words", () => {
  it('says why the base could not be compared', () => {
    expect(baseNoteText({ code: 'base_missing', where: 'desired', missing: 'does not exist', ref: 'main' })).toBe(
      `desired does not exist at main${ALONE}`,
    );
    expect(
      baseNoteText({ code: 'base_has_errors', ref: 'main', first: 'a.yaml:3:5: users[0].email: is invalid', more: 0 }),
    ).toBe(`the desired state at main has errors (a.yaml:3:5: users[0].email: is invalid)${ALONE}`);
    expect(baseNoteText({ code: 'base_has_errors', ref: 'main', first: 'a.yaml: x', more: 2 })).toBe(
      `the desired state at main has errors (a.yaml: x, and 2 more)${ALONE}`,
    );
    expect(baseNoteText({ code: 'base_unplannable', ref: 'origin/main', problems: ['two rules overlap'] })).toBe(
      `origin/main's files cannot be planned (two rules overlap)${ALONE}`,
    );
    expect(baseNoteText('a saved plan says so')).toBe('a saved plan says so');
  });

  it('says where settings.owners was read', () => {
    expect(ownersSourceText({ code: 'files' })).toBe('the files');
    expect(ownersSourceText({ code: 'files_base_missing', base: 'main (0123456789ab)' })).toBe(
      'the files (main (0123456789ab) has no desired state there)',
    );
    expect(ownersSourceText({ code: 'files_base_errors', base: 'main' })).toBe(
      "the files (main's desired state has errors)",
    );
    expect(ownersSourceText({ code: 'base', base: 'main (0123456789ab)' })).toBe('main (0123456789ab)');
  });

  it('puts the words in the approvals lines and in the JSON plan, each where it was', () => {
    const plan = {
      changes: [],
      warnings: [],
      limits: [],
      base: { ref: 'main', note: { code: 'base_unplannable', ref: 'main', problems: ['e'] } },
      owners: { from: { code: 'base', base: 'main' }, required: [{ owner: '@org/db', because: [] }] },
    } as unknown as Plan;
    expect(approvalsText(plan)[0]).toBe('Approvals (settings.owners of main):');
    expect(approvalsMarkdown(plan)[1]).toBe('> Approvals (`settings.owners` of `main`):');
    const worded = wordedPlan(plan);
    expect(Object.keys(worded)).toEqual(['changes', 'warnings', 'limits', 'base', 'owners']);
    expect(worded.base).toEqual({ ref: 'main', note: `main's files cannot be planned (e)${ALONE}` });
    expect(worded.owners!.from).toBe('main');
  });
});
