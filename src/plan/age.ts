/**
 * How old a saved plan may be when it is applied (`apply --plan-max-age`). A saved plan is a
 * sealed order to write: within its age it can be applied again wherever its key is accepted (a
 * stateless /v0 server cannot tell a second apply from the first), so its age bounds how long a
 * copy of it (a CI artifact kept 90 days, say) stays usable.
 */

/** The default bound: 7 days. */
export const DEFAULT_PLAN_MAX_AGE = '7d';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A duration such as `7d`, `12h`, `30m`, `90s` or `2w` in milliseconds; `0` for none (the check is
 * off). Null for anything else (no sign, no fraction, a unit after every number but 0).
 */
export function parsePlanMaxAge(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const match = /^(\d{1,9})([smhdw])$/.exec(trimmed);
  if (!match) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2]!]!;
  return ms > 0 ? ms : null;
}

export type PlanAgeCheck =
  | { status: 'fresh' }
  /** Older than the bound by its sealed `created_at`. */
  | { status: 'expired'; ageMs: number; maxAgeMs: number }
  /** Its `created_at` is not a date netform writes: its age is unknown. */
  | { status: 'undated' };

/** Whether a plan made at `createdAt` (its sealed ISO date) is within `maxAgeMs` of `now`; a bound of 0 always passes. */
export function checkPlanAge(createdAt: unknown, maxAgeMs: number, now: Date): PlanAgeCheck {
  if (maxAgeMs === 0) return { status: 'fresh' };
  const made = typeof createdAt === 'string' && /^\d{4}-\d\d-\d\dT/.test(createdAt) ? Date.parse(createdAt) : NaN;
  if (Number.isNaN(made)) return { status: 'undated' };
  const ageMs = now.getTime() - made;
  return ageMs > maxAgeMs ? { status: 'expired', ageMs, maxAgeMs } : { status: 'fresh' };
}
