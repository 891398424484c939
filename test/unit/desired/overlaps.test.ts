/**
 * The overlap check of validate stays close to linear (security review 2026-11b, the bench's
 * adversarial files): ten thousand rules that all overlap get a bounded answer at once, and random
 * rules get the same verdict as comparing every pair.
 */
import { describe, expect, it } from 'vitest';
import { findOverlaps, MAX_OVERLAP_REPORTS } from '../../../src/desired/check/find-overlaps.js';
import { parseRule, rulesOverlap, type ParsedRule } from '../../../src/model/rule.js';

type Item = { parsed: ParsedRule; order: number };

function item(
  order: number,
  destination: string,
  ports: string | null = null,
  action: 'accept' | 'drop' = 'drop',
): Item {
  const parsed = parseRule({ action, destination, port_type: ports ? 'tcp' : null, port_range: ports, owner: null });
  return { parsed: parsed!, order };
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

describe('overlapping rules', () => {
  it('10,000 rules of one block that all overlap: at most the limit named, the rest counted, at once', () => {
    const items = Array.from({ length: 10_000 }, (_, i) => item(i, '10.0.0.0/8', `${i + 1}-60000`));
    const started = performance.now();
    const { found, more } = findOverlaps(items, () => false);
    expect(performance.now() - started).toBeLessThan(5000); // every pair: 50 million, and as many lines
    expect(found).toHaveLength(MAX_OVERLAP_REPORTS);
    expect(found.length + more).toBe(9_999);
    for (const { later, earlier } of found) expect(rulesOverlap(later.parsed, earlier.parsed)).toBe(true);
  });

  it('100,000 port rules on one block, none overlapping: none found, at once', () => {
    const items = Array.from({ length: 100_000 }, (_, i) =>
      item(i, '10.0.0.0/8', `${(i % 50_000) + 1}`, i < 50_000 ? 'drop' : 'accept'),
    );
    const started = performance.now();
    expect(findOverlaps(items, () => false)).toEqual({ found: [], more: 0, firstUnnamed: null });
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it("20,000 users' port rules, each user its own group: one overlap found, at once (no tree per group)", () => {
    const items = Array.from({ length: 40_000 }, (_, i) => {
      const owner = `user-${i >> 1}@corp.test`;
      const ports = i === 39_999 ? '440-450' : i % 2 === 0 ? '443' : '22';
      const parsed = parseRule({
        action: 'accept',
        destination: '10.0.0.0/8',
        port_type: 'tcp',
        port_range: ports,
        owner,
      });
      return { parsed: parsed!, order: i };
    });
    const started = performance.now();
    const { found, more } = findOverlaps(items, () => false);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(found.map(({ later, earlier }) => [earlier.order, later.order])).toEqual([[39_998, 39_999]]);
    expect(more).toBe(0);
  });

  it('random rules: an overlap is found exactly when some pair overlaps, and every one named is real', () => {
    const next = random(4242);
    const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)]!;
    for (let round = 0; round < 400; round++) {
      const items = Array.from({ length: 2 + Math.floor(next() * 8) }, (_, i) => {
        const prefix = pick([8, 16, 24, 32]);
        const destination = `10.${pick([0, 1])}.${pick([0, 2])}.${pick([0, 3])}/${prefix}`.replace(/\/32$/, '');
        const low = 1 + Math.floor(next() * 20);
        const ports = next() < 0.5 ? null : `${low}-${low + Math.floor(next() * 10)}`;
        return { ...item(i, destination, ports, pick(['accept', 'drop'])), text: `${destination} ${ports}` };
      });
      const { found } = findOverlaps(items, () => false);
      let any = false;
      for (let i = 0; i < items.length; i++)
        for (let j = i + 1; j < items.length; j++) if (rulesOverlap(items[i]!.parsed, items[j]!.parsed)) any = true;
      expect(found.length > 0, items.map((x) => `${x.parsed.action} ${x.text}`).join(', ')).toBe(any);
      for (const { later, earlier } of found) {
        expect(rulesOverlap(later.parsed, earlier.parsed)).toBe(true);
        expect(earlier.order).toBeLessThan(later.order);
      }
    }
  });
});
