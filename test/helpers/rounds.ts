/**
 * How many rounds a seeded randomized test runs. `npm test` (and so CI) runs the full count;
 * `npm run test:fast` (NETFORM_TEST_TIER=fast, vitest.config.ts) a fifth of it, at least one: the
 * first rounds of the same seeded sequence, so that whatever the fast tier finds, the full run finds
 * too. A test's thresholds on what its inputs exercised scale with `share`.
 */
export const FAST_TIER = process.env.NETFORM_TEST_TIER === 'fast';

/** The rounds to run of a test written for `full`. */
export function rounds(full: number): number {
  return FAST_TIER ? Math.max(1, Math.round(full / 5)) : full;
}

/** What part of its full count `rounds(full)` is (1 in the full tier). */
export function share(full: number): number {
  return rounds(full) / full;
}

/** A count as a test's title writes it: 5,000. */
export function counted(n: number): string {
  return n.toLocaleString('en-US');
}
