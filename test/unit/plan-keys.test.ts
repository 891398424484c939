/** Natural keys as the planner uses them: the fast path of normalizeDestination agrees with full parsing. */
import { describe, expect, it } from 'vitest';
import { normalizeDestination } from '../../src/model/keys.js';
import { parseCidrOrAddress } from '../../src/model/net.js';

describe('normalizeDestination', () => {
  it("gives the parser's canonical text for every spelling", () => {
    const samples: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const octets = Array.from({ length: 4 }, (_, j) => (i * 37 + j * 101) % 256);
      const text = octets.join('.');
      samples.push(text, `${text}/${i % 33}`, `${text}/${(i % 33).toString().padStart(2, '0')}`, ` ${text} `);
    }
    samples.push(
      '10.0.0.1',
      '255.255.255.255/32',
      '0.0.0.0/0',
      '010.0.0.1',
      '10.0.0.0/33',
      '1.2.3',
      '::1',
      'FD00:0::3:2:0/120',
      '2001:db8::',
    );
    for (const s of samples) {
      const parsed = parseCidrOrAddress(s);
      expect(normalizeDestination(s), s).toBe(parsed ? parsed.canonical : s.trim());
    }
  });
});
