/**
 * How many rounds a seeded randomized test runs. `npm test` (and so CI) runs half the count a test
 * is written for; `npm run test:fast` (NETFORM_TEST_TIER=fast, vitest.config.ts) a fifth of it;
 * NETFORM_TEST_ROUNDS=full the whole count (before a release, or to hunt a rare case). Always at
 * least one, and always the first rounds of the same seeded sequence, so that whatever a smaller
 * tier finds, a larger one finds too. A test's thresholds on what its inputs exercised scale with
 * `share`.
 */
export const FAST_TIER = process.env.NETFORM_TEST_TIER === 'fast';
const FULL = process.env.NETFORM_TEST_ROUNDS === 'full';

/** The rounds to run of a test written for `full`. */
export function rounds(full: number): number {
  if (FULL) return full;
  return Math.max(1, Math.round(full / (FAST_TIER ? 5 : 2)));
}

/** What part of its full count `rounds(full)` is (1 with NETFORM_TEST_ROUNDS=full). */
export function share(full: number): number {
  return rounds(full) / full;
}

/** A count as a test's title writes it: 5,000. */
export function counted(n: number): string {
  return n.toLocaleString('en-US');
}
