import { describe, expect, it } from 'vitest';
import { formatInstant, parseInstant } from '../../../src/model/instant.js';
import { instantProblemText } from '../../../src/views/model-instant.js';
import { opWordsText } from '../../../src/views/op-errors.js';

describe('instants in the desired state and on the command line', () => {
  it('reads a date as 00:00 UTC that day and a date-time by its offset', () => {
    expect(parseInstant('2026-12-31')).toEqual({ ok: true, instant: new Date('2026-12-31T00:00:00Z') });
    expect(parseInstant('2026-12-31T18:00:00+01:00')).toEqual({ ok: true, instant: new Date('2026-12-31T17:00:00Z') });
    expect(parseInstant('2026-12-31T18:00Z')).toEqual({ ok: true, instant: new Date('2026-12-31T18:00:00Z') });
  });

  it('refuses days that do not exist, date-times without an offset and non-strings', () => {
    expect(parseInstant('2026-02-29')).toEqual({ ok: false, problem: { code: 'no_such_day', text: '2026-02-29' } });
    expect(parseInstant('2028-02-29').ok).toBe(true);
    expect(parseInstant('2026-12-31T18:00:00')).toEqual({ ok: false, problem: { code: 'not_an_instant' } });
    expect(parseInstant('2026-12-31T24:00:00Z')).toEqual({
      ok: false,
      problem: { code: 'no_such_instant', text: '2026-12-31T24:00:00Z' },
    });
    expect(parseInstant(new Date())).toEqual({ ok: false, problem: { code: 'not_a_string' } });
    expect(parseInstant('tomorrow')).toMatchObject({ ok: false });
  });

  it('words each refusal where it is printed (validate, --now, --until)', () => {
    const expected = 'expected a date (2026-12-31) or a date-time with an offset (2026-12-31T18:00:00Z)';
    expect(instantProblemText({ code: 'not_a_string' })).toBe(`${expected}, as a quoted string`);
    expect(instantProblemText({ code: 'not_an_instant' })).toBe(expected);
    expect(instantProblemText({ code: 'no_such_day', text: '2026-02-29' })).toBe('no such day: 2026-02-29');
    expect(instantProblemText({ code: 'no_such_instant', text: '2026-12-31T24:00Z' })).toBe(
      'no such instant: 2026-12-31T24:00Z',
    );
    expect(opWordsText({ code: 'until_not_an_instant', problem: { code: 'no_such_day', text: '2026-02-30' } })).toBe(
      '--until: no such day: 2026-02-30',
    );
  });

  it('writes midnight UTC back as a date, anything else as a UTC date-time', () => {
    expect(formatInstant(new Date('2026-12-31T00:00:00Z'))).toBe('2026-12-31');
    expect(formatInstant(new Date('2026-12-31T17:00:00Z'))).toBe('2026-12-31T17:00:00Z');
  });
});
