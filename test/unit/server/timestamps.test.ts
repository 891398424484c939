/**
 * The contract's timestamps as the server writes them: the text up to the seconds is made once a
 * second and reused; every microsecond must still read exactly as Date's own ISO text with six
 * digits of fraction, across second, minute, day and year boundaries, in any order.
 */
import { describe, expect, it } from 'vitest';
import { formatTimestamp, parseTimestamp } from '../../../server/clock.js';

/** The timestamp made afresh from Date, the way the contract defines it. */
function expected(micros: bigint): string {
  const iso = new Date(Number(micros / 1000n)).toISOString();
  return `${iso.slice(0, 19)}.${(micros % 1_000_000n).toString().padStart(6, '0')}Z`;
}

describe('formatTimestamp', () => {
  it('reads as Date writes it, around every kind of boundary and back and forth', () => {
    const edges = ['1970-01-01T00:00:00Z', '2026-12-31T23:59:59Z', '2028-02-29T23:59:59Z', '2030-06-01T12:00:00Z'];
    const values: bigint[] = [];
    for (const edge of edges) {
      const second = BigInt(Date.parse(edge)) * 1000n;
      for (const offset of [-1_000_001n, -1_000_000n, -999_999n, -1n, 0n, 1n, 999_999n, 1_000_000n, 1_000_001n])
        if (second + offset >= 0n) values.push(second + offset);
    }
    // Going back to a second formatted before must not reuse the later one's text.
    values.push(...[...values].reverse());
    let seed = 7n;
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) % (1n << 63n);
      values.push(seed % 4_102_444_800_000_000n);
    }
    for (const micros of values) {
      const text = formatTimestamp(micros);
      expect(text).toBe(expected(micros));
      expect(parseTimestamp(text)).toBe(micros);
    }
  });
});
