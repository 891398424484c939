/**
 * A user's 1.x target as the fleet's shared target patched inside the blocks of its own rules
 * (outside them a user reaches what a user with the global rules only reaches): the part inside
 * the blocks, a key that is the same for two users exactly when their whole targets are the same,
 * and the whole target, built only for the one user a Group is made from. Pure.
 */
import type { TargetSegment } from './target.js';

type Range = readonly [bigint, bigint];

/** The first index of a sorted list whose segment ends at or after `x`. */
function firstEndingFrom(list: readonly { a1: bigint }[] | readonly Range[], x: bigint): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const item = list[mid]!;
    const end = 'a1' in item ? item.a1 : item[1];
    if (end < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The parts of a target inside the blocks (sorted, disjoint). */
export function targetInside(target: readonly TargetSegment[], blocks: readonly Range[]): TargetSegment[] {
  const out: TargetSegment[] = [];
  for (const [b0, b1] of blocks)
    for (let i = firstEndingFrom(target, b0); i < target.length && target[i]!.a0 <= b1; i++) {
      const t = target[i]!;
      out.push({ ...t, a0: t.a0 > b0 ? t.a0 : b0, a1: t.a1 < b1 ? t.a1 : b1 });
    }
  return out;
}

/** How many addresses a list of disjoint segments holds. */
export function sizeOf(list: readonly { a0: bigint; a1: bigint }[]): bigint {
  let n = 0n;
  for (const s of list) n += s.a1 - s.a0 + 1n;
  return n;
}

/**
 * Where the user's target differs from the shared one (inside the blocks), with what the user
 * has there (its filter key, or nothing), in maximal runs: the same text for two users exactly
 * when their whole targets are the same.
 */
export function patchKey(sharedInside: readonly TargetSegment[], own: readonly TargetSegment[]): string {
  const points = new Set<bigint>();
  for (const list of [sharedInside, own])
    for (const s of list) {
      points.add(s.a0);
      points.add(s.a1 + 1n);
    }
  const breaks = [...points].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const runs: { a0: bigint; a1: bigint; key: string }[] = [];
  let i = 0;
  let j = 0;
  for (let k = 0; k + 1 < breaks.length; k++) {
    const x = breaks[k]!;
    const end = breaks[k + 1]! - 1n;
    while (i < sharedInside.length && sharedInside[i]!.a1 < x) i++;
    while (j < own.length && own[j]!.a1 < x) j++;
    const s = sharedInside[i] && sharedInside[i]!.a0 <= x ? sharedInside[i]!.key : '';
    const o = own[j] && own[j]!.a0 <= x ? own[j]!.key : '';
    if (s === o) continue;
    const last = runs[runs.length - 1];
    if (last && last.key === o && last.a1 + 1n === x) last.a1 = end;
    else runs.push({ a0: x, a1: end, key: o });
  }
  return runs.map((r) => `${r.a0}-${r.a1}:${r.key}`).join(';');
}

/**
 * The user's whole target: the shared one outside the blocks, its own inside, adjacent segments
 * with the same filter list joined (the form targetOf gives for the whole reach).
 */
export function wholeTarget(
  shared: readonly TargetSegment[],
  own: readonly TargetSegment[],
  blocks: readonly Range[],
): TargetSegment[] {
  const parts: TargetSegment[] = [...own];
  for (const t of shared) {
    let a0 = t.a0;
    for (let k = firstEndingFrom(blocks, a0); k < blocks.length && blocks[k]![0] <= t.a1 && a0 <= t.a1; k++) {
      const [b0, b1] = blocks[k]!;
      if (b0 > a0) parts.push({ ...t, a0, a1: b0 - 1n });
      a0 = b1 + 1n;
    }
    if (a0 <= t.a1) parts.push({ ...t, a0 });
  }
  parts.sort((x, y) => (x.a0 < y.a0 ? -1 : x.a0 > y.a0 ? 1 : 0));
  const out: TargetSegment[] = [];
  for (const p of parts) {
    const last = out[out.length - 1];
    if (last && last.key === p.key && last.a1 + 1n === p.a0) last.a1 = p.a1;
    else out.push({ ...p });
  }
  return out;
}
