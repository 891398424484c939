/**
 * RuleIndex finds the rules of a list that meet an address range: exactly those filtering the whole
 * list finds, in the list's order (evaluation order decides which rule wins), on random lists of
 * hosts, blocks, overlapping and nested ranges, duplicates and the whole family.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledRule } from '../../../src/access/model.js';
import { RuleIndex } from '../../../src/access/rule-index.js';
import { int, prng } from '../../helpers/access-random.js';
import { counted, rounds } from '../../helpers/rounds.js';

function rule(start: bigint, end: bigint, n: number): CompiledRule {
  return {
    rule: { owner: null, action: n % 2 ? 'accept' : 'drop', destination: `r${n}`, port_type: null, port_range: null },
    family: 4,
    start,
    end,
    portType: null,
    low: 0,
    high: 65535,
    stage: 0,
  } as CompiledRule;
}

const meets = (r: CompiledRule, a0: bigint, a1: bigint) => r.end >= a0 && r.start <= a1;

describe('RuleIndex', () => {
  it('finds nothing in an empty list, and every rule for the whole family', () => {
    expect(new RuleIndex([]).meeting(0n, 100n)).toEqual([]);
    const rules = [rule(5n, 5n, 0), rule(0n, 2n ** 32n - 1n, 1), rule(3n, 9n, 2)];
    expect(new RuleIndex(rules).meeting(0n, 2n ** 32n - 1n)).toEqual(rules);
    expect(new RuleIndex(rules).meeting(6n, 6n)).toEqual([rules[1], rules[2]]);
  });

  const n = rounds(200);
  it(`gives what filtering the list gives, in the list's order (${counted(n)} random lists)`, () => {
    for (let seed = 1; seed <= n; seed++) {
      const random = prng(seed);
      const size = int(random, 0, 60);
      const rules: CompiledRule[] = [];
      for (let i = 0; i < size; i++) {
        const start = BigInt(int(random, 0, 1000));
        const wide = random() < 0.1 ? int(random, 0, 1000) : int(random, 0, 8);
        rules.push(rule(start, start + BigInt(wide), i));
        if (random() < 0.1) rules.push(rules[int(random, 0, rules.length - 1)]!);
      }
      const index = new RuleIndex(rules);
      for (let q = 0; q < 30; q++) {
        const a0 = BigInt(int(random, 0, 1100));
        const a1 = a0 + BigInt(random() < 0.2 ? int(random, 0, 500) : int(random, 0, 4));
        expect(index.meeting(a0, a1), `seed ${seed}, ${a0}..${a1}`).toEqual(rules.filter((r) => meets(r, a0, a1)));
      }
    }
  });
});
