/**
 * The email-glob matcher never backtracks (security review 2026-11b, G1): adversarial globs cost
 * what their length says, measured as a ratio to a one-star glob in the same run (never as an
 * absolute time, which would depend on the machine), and random globs agree with a reference.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { EMAIL_GLOB_MAX_LENGTH, emailGlobMatcher, emailGlobProblem } from '../../../src/model/email-glob.js';
import { emailGlobProblemText } from '../../../src/views/model-email.js';

/**
 * The time (ms) of one match: matches are repeated until `budget` ms have passed (once at least),
 * and the least per-match time over `rounds` rounds is kept, the least disturbed by other work.
 */
function timeOf(match: (email: string) => boolean, email: string, budget = 20, rounds = 3): number {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    let count = 0;
    let elapsed: number;
    do {
      match(email);
      count++;
      elapsed = performance.now() - start;
    } while (elapsed < budget);
    best = Math.min(best, elapsed / count);
  }
  return best;
}

/** A seeded generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The reference: globs of letters, `*` and `?` only, as a regular expression (fine on short emails). */
function reference(glob: string, email: string): boolean {
  const source = Array.from(glob, (c) => (c === '*' ? '.*' : c === '?' ? '.' : c)).join('');
  return new RegExp(`^${source}$`, 's').test(email);
}

describe('email globs match in linear time', () => {
  it('adversarial globs cost at most their length over a one-star glob, as a ratio in the same run', () => {
    const email = `${'a'.repeat(240)}@example.com`; // 252 characters, under the 255 an email may hold
    const oneStar = '*x';
    const firstBase = timeOf(emailGlobMatcher([oneStar]), email);
    const adversarial = [
      `${'*a'.repeat(3)}*x`, // first: a backtracking matcher fails here at once instead of hanging
      `${'*a'.repeat(14)}*x`,
      `${'*a'.repeat(60)}*x`,
      `${'*?'.repeat(40)}*x`,
      `${'*[a-z]'.repeat(20)}*x`,
      `${'*{a,aa}'.repeat(12)}*x`,
      `${'*{a,*a}'.repeat(12)}*x`,
      `${'{a,}*'.repeat(20)}x`,
    ];
    for (const glob of adversarial) {
      expect(emailGlobMatcher([glob])(email), glob).toBe(false);
      // Linear: the cost grows with the glob's length (its automaton's states), never with the
      // number of ways to split the email among the stars. A generous factor absorbs noise. On a
      // loaded machine a worker can wait for a core through all the rounds of one measurement
      // (a ratio of thousands, once, in CI): up to three measurements, each against a one-star
      // glob timed again just before it. A backtracking matcher is slow in every one (on these
      // globs it would not finish at all).
      const lengthRatio = Array.from(glob).length / oneStar.length;
      let ratio = Infinity;
      for (let attempt = 0; attempt < 3 && ratio >= 4 * lengthRatio; attempt++) {
        const base = attempt === 0 ? firstBase : timeOf(emailGlobMatcher([oneStar]), email);
        ratio = Math.min(ratio, timeOf(emailGlobMatcher([glob]), email) / base);
      }
      expect(ratio, `${glob.slice(0, 30)}…: ${ratio.toFixed(1)}× a one-star glob`).toBeLessThan(4 * lengthRatio);
    }
  });

  it('doubling the email doubles the time, about (a backtracking matcher takes 16 times as long)', () => {
    const match = emailGlobMatcher([`${'*a'.repeat(4)}*x`]);
    const short = timeOf(match, `${'a'.repeat(60)}@example.com`);
    const long = timeOf(match, `${'a'.repeat(120)}@example.com`);
    expect(long / short).toBeLessThan(5);
  });

  it('random globs of letters, `*` and `?` agree with a regular expression', () => {
    const next = random(20261129);
    const pick = (s: string): string => s[Math.floor(next() * s.length)]!;
    for (let n = 0; n < 3000; n++) {
      const glob = Array.from({ length: 1 + Math.floor(next() * 8) }, () => pick('ab*?')).join('');
      const email = Array.from({ length: Math.floor(next() * 9) }, () => pick('ab')).join('');
      expect(emailGlobMatcher([glob])(email), `${glob} ~ ${email}`).toBe(reference(glob, email));
    }
  });

  it(`refuses a glob longer than ${EMAIL_GLOB_MAX_LENGTH} characters`, () => {
    expect(emailGlobProblem(`${'a'.repeat(EMAIL_GLOB_MAX_LENGTH - 2)}@x`)).toBeNull();
    expect(emailGlobProblemText(emailGlobProblem(`${'a'.repeat(EMAIL_GLOB_MAX_LENGTH)}@x`)!)).toBe(
      `is ${EMAIL_GLOB_MAX_LENGTH + 2} characters long, more than the ${EMAIL_GLOB_MAX_LENGTH} a glob may hold`,
    );
  });
});
