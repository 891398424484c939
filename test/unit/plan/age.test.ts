import { describe, expect, it } from 'vitest';
import { checkPlanAge, parsePlanMaxAge } from '../../../src/plan/age.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('parsePlanMaxAge', () => {
  it('reads a whole number and a unit, or 0 for none', () => {
    expect(parsePlanMaxAge('7d')).toBe(7 * DAY);
    expect(parsePlanMaxAge(' 12h ')).toBe(12 * HOUR);
    expect(parsePlanMaxAge('30m')).toBe(30 * 60_000);
    expect(parsePlanMaxAge('90s')).toBe(90_000);
    expect(parsePlanMaxAge('2w')).toBe(14 * DAY);
    expect(parsePlanMaxAge('0')).toBe(0);
  });

  it('refuses anything else', () => {
    for (const bad of ['', '7', '-1d', '1.5d', '0d', 'd', '7 d', '7D', 'week', '1e3d', '9999999999d'])
      expect(parsePlanMaxAge(bad), bad).toBeNull();
  });
});

describe('checkPlanAge', () => {
  const now = new Date('2026-11-29T12:00:00.000Z');
  it('passes a plan within the bound, and anything with the bound 0', () => {
    expect(checkPlanAge('2026-11-22T12:00:00.000Z', 7 * DAY, now)).toEqual({ status: 'fresh' });
    expect(checkPlanAge('2026-11-29T13:00:00.000Z', 7 * DAY, now)).toEqual({ status: 'fresh' });
    expect(checkPlanAge('2020-01-01T00:00:00.000Z', 0, now)).toEqual({ status: 'fresh' });
    expect(checkPlanAge(undefined, 0, now)).toEqual({ status: 'fresh' });
  });

  it('refuses a plan older than the bound by a millisecond, with its age', () => {
    expect(checkPlanAge('2026-11-22T11:59:59.999Z', 7 * DAY, now)).toEqual({
      status: 'expired',
      ageMs: 7 * DAY + 1,
      maxAgeMs: 7 * DAY,
    });
  });

  it('calls a plan with no readable date undated', () => {
    for (const bad of [undefined, null, 7, '', 'yesterday', '2026-13-45T00:00:00Z', 'Sun Nov 29 2026'])
      expect(checkPlanAge(bad, 7 * DAY, now), String(bad)).toEqual({ status: 'undated' });
  });
});
