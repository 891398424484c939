import { describe, expect, it } from 'vitest';
import { formatInstant, parseInstant } from '../../../src/model/instant.js';

describe('instants in the desired state and on the command line', () => {
  it('reads a date as 00:00 UTC that day and a date-time by its offset', () => {
    expect(parseInstant('2026-12-31')).toEqual({ ok: true, instant: new Date('2026-12-31T00:00:00Z') });
    expect(parseInstant('2026-12-31T18:00:00+01:00')).toEqual({ ok: true, instant: new Date('2026-12-31T17:00:00Z') });
    expect(parseInstant('2026-12-31T18:00Z')).toEqual({ ok: true, instant: new Date('2026-12-31T18:00:00Z') });
  });

  it('refuses days that do not exist, date-times without an offset and non-strings', () => {
    expect(parseInstant('2026-02-29')).toMatchObject({ ok: false, reason: 'no such day: 2026-02-29' });
    expect(parseInstant('2028-02-29').ok).toBe(true);
    expect(parseInstant('2026-12-31T18:00:00')).toMatchObject({ ok: false, reason: expect.stringMatching(/offset/) });
    expect(parseInstant('2026-12-31T24:00:00Z')).toMatchObject({ ok: false });
    expect(parseInstant(new Date())).toMatchObject({ ok: false, reason: expect.stringMatching(/quoted string/) });
    expect(parseInstant('tomorrow')).toMatchObject({ ok: false });
  });

  it('writes midnight UTC back as a date, anything else as a UTC date-time', () => {
    expect(formatInstant(new Date('2026-12-31T00:00:00Z'))).toBe('2026-12-31');
    expect(formatInstant(new Date('2026-12-31T17:00:00Z'))).toBe('2026-12-31T17:00:00Z');
  });
});
