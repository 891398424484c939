/**
 * A user's difference from the fleet's shared one: a user with own rules reaches, under 0.7.36
 * and under 1.x, what a user with the global rules only reaches, except inside the blocks of its
 * own rules. So its difference is the shared difference outside those blocks and its own inside
 * them: the shared buckets are computed once, and each user's are the shared ones patched inside
 * its blocks. The entries written are the same as those of the whole difference (diff.ts), at a
 * cost that grows with the user's own blocks, not with the fleet. Pure.
 */
import type { IpFamily } from '../model/net.js';
import {
  countCidrs,
  entriesOf,
  firstCidrs,
  MAX_LISTED_BLOCKS,
  PlainRanges,
  type Bucket,
  type Buckets,
  sortEntries,
  type Difference,
  type Key,
  type RangesView,
} from './diff.js';
import type { DiffEntry, MigrateCode } from './types.js';

type Range = [bigint, bigint];

/** A shared bucket with the running count of CIDR blocks of its ranges (`cum[i]`: the blocks of ranges before i). */
interface SharedBucket {
  bucket: Bucket;
  cum: number[];
  /** The first CIDR blocks of a range (at most MAX_LISTED_BLOCKS), by index, once written. */
  cidrs: Map<number, string[]>;
}

/** The first index of a sorted list whose range ends at or after `x`. */
function firstEndingFrom(ranges: readonly Range[], x: bigint): number {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid]![1] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether every range of `list` lies inside one of the sorted, disjoint `blocks`. */
function inside(list: readonly Range[], blocks: readonly Range[]): boolean {
  for (const [a0, a1] of list) {
    const b = blocks[firstEndingFrom(blocks, a0)];
    if (!b || b[0] > a0 || b[1] < a1) return false;
  }
  return true;
}

/** The addresses in exactly one of two sorted lists of disjoint ranges. */
function symmetricDifference(a: readonly Range[], b: readonly Range[]): Range[] {
  const points: [bigint, number][] = [];
  for (const [x, y] of a) points.push([x, 1], [y + 1n, -1]);
  for (const [x, y] of b) points.push([x, 2], [y + 1n, -2]);
  points.sort((p, q) => (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : 0));
  const out: Range[] = [];
  let inA = 0;
  let inB = 0;
  for (let i = 0; i < points.length;) {
    const x = points[i]![0];
    const wasOdd = inA > 0 !== inB > 0;
    while (i < points.length && points[i]![0] === x) {
      const d = points[i]![1];
      if (d === 1 || d === -1) inA += d;
      else inB += d / 2;
      i++;
    }
    const isOdd = inA > 0 !== inB > 0;
    if (!wasOdd && isOdd) out.push([x, x]);
    else if (wasOdd && !isOdd) out[out.length - 1]![1] = x - 1n;
  }
  return out;
}

/** A run of untouched shared ranges (indices i0 ≤ i < i1), or a range of its own. */
type Item = { i0: number; i1: number } | { a0: bigint; a1: bigint };

/** A shared bucket's ranges outside the user's blocks, and the user's own ranges inside them. */
class PatchedRanges implements RangesView {
  readonly items: Item[];
  constructor(
    readonly bucket: Bucket,
    readonly family: IpFamily,
    readonly shared: SharedBucket | undefined,
    readonly local: readonly Range[],
    readonly blocks: readonly Range[],
    readonly owner: SharedDifference,
  ) {
    this.items = shared ? patchedItems(shared.bucket.ranges, local, blocks) : local.map(([a0, a1]) => ({ a0, a1 }));
  }
  isEmpty(): boolean {
    return this.items.length === 0;
  }
  first(): bigint {
    const item = this.items[0]!;
    return 'a0' in item ? item.a0 : this.shared!.bucket.ranges[item.i0]![0];
  }
  last(): bigint {
    const item = this.items[this.items.length - 1]!;
    return 'a1' in item ? item.a1 : this.shared!.bucket.ranges[item.i1 - 1]![1];
  }
  total(): number {
    let n = 0;
    for (const item of this.items)
      n +=
        'a0' in item
          ? countCidrs(this.family, item.a0, item.a1)
          : this.shared!.cum[item.i1]! - this.shared!.cum[item.i0]!;
    return n;
  }
  cidrs(n: number): string[] {
    const out: string[] = [];
    for (const item of this.items) {
      if ('a0' in item) {
        if (out.length >= n) break;
        out.push(...firstCidrs(this.family, item.a0, item.a1, n - out.length));
        continue;
      }
      for (let i = item.i0; i < item.i1 && out.length < n; i++)
        out.push(...this.#sharedCidrs(i).slice(0, n - out.length));
    }
    return out;
  }
  #sharedCidrs(i: number): string[] {
    const shared = this.shared!;
    let list = shared.cidrs.get(i);
    if (!list) {
      const [a0, a1] = shared.bucket.ranges[i]!;
      shared.cidrs.set(i, (list = firstCidrs(this.family, a0, a1, MAX_LISTED_BLOCKS)));
    }
    return list;
  }
  sameRanges(other: RangesView): boolean {
    if (!(other instanceof PatchedRanges) || other.blocks !== this.blocks) return false;
    const a = this.local;
    const b = other.local;
    if (a.length !== b.length || !a.every(([x, y], i) => b[i]![0] === x && b[i]![1] === y)) return false;
    // Outside the blocks both are their shared ranges: the same when these differ only inside the blocks.
    if (this.shared === other.shared) return true;
    return inside(this.owner.symmetric(this.shared, other.shared), this.blocks);
  }
}

/**
 * The items of `shared` with the blocks cut out and `local` (inside the blocks) put in: the
 * shared ranges that meet or touch a block are rewritten, every other one is kept as it is (it
 * can join nothing: shared ranges are never adjacent, and local ones lie inside the blocks).
 */
function patchedItems(shared: readonly Range[], local: readonly Range[], blocks: readonly Range[]): Item[] {
  const touched: number[] = [];
  for (const [b0, b1] of blocks) {
    for (let i = firstEndingFrom(shared, b0 - 1n); i < shared.length && shared[i]![0] <= b1 + 1n; i++)
      if (touched[touched.length - 1] === undefined || touched[touched.length - 1]! < i) touched.push(i);
  }
  const own: Range[] = [];
  for (const i of touched) {
    const a1 = shared[i]![1];
    let a0 = shared[i]![0];
    for (let k = firstEndingFrom(blocks, a0); k < blocks.length && blocks[k]![0] <= a1 && a0 <= a1; k++) {
      const [b0, b1] = blocks[k]!;
      if (b0 > a0) own.push([a0, b0 - 1n]);
      a0 = b1 + 1n;
    }
    if (a0 <= a1) own.push([a0, a1]);
  }
  own.push(...local.map(([a0, a1]) => [a0, a1] as Range));
  own.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const joined: Range[] = [];
  for (const [a0, a1] of own) {
    const last = joined[joined.length - 1];
    if (last && a0 <= last[1] + 1n) {
      if (a1 > last[1]) last[1] = a1;
    } else joined.push([a0, a1]);
  }
  // Untouched runs between the touched indices, and the rewritten ranges, in address order.
  const items: Item[] = [];
  let j = 0;
  const run = (i0: number, i1: number) => {
    while (i0 < i1) {
      const start = shared[i0]![0];
      for (; j < joined.length && joined[j]![0] < start; j++) items.push({ a0: joined[j]![0], a1: joined[j]![1] });
      // A rewritten range between two untouched ones splits the run there.
      let end = i1;
      if (j < joined.length && joined[j]![0] < shared[i1 - 1]![0]) {
        const x = joined[j]![0];
        let lo = i0;
        let hi = i1;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (shared[mid]![0] < x) lo = mid + 1;
          else hi = mid;
        }
        end = lo;
      }
      items.push({ i0, i1: end });
      i0 = end;
    }
  };
  let from = 0;
  for (const t of touched) {
    run(from, t);
    from = t + 1;
  }
  run(from, shared.length);
  for (; j < joined.length; j++) items.push({ a0: joined[j]![0], a1: joined[j]![1] });
  return items;
}

/** The difference of users with the global rules only, in one family, ready to be patched per user. */
/** One side (lost or gained) of the shared difference: its buckets, and its entries per cause. */
interface SharedSide {
  buckets: Map<Key, SharedBucket>;
  byCode: Map<MigrateCode, { keys: Key[]; entries: DiffEntry[] }>;
}

/** Whether a sorted list of ranges meets or touches (is adjacent to) one of the blocks. */
function touches(ranges: readonly Range[], blocks: readonly Range[]): boolean {
  for (const [b0, b1] of blocks) {
    const r = ranges[firstEndingFrom(ranges, b0 - 1n)];
    if (r && r[0] <= b1 + 1n) return true;
  }
  return false;
}

export class SharedDifference {
  readonly #lost: SharedSide;
  readonly #gained: SharedSide;
  readonly #symmetric = new Map<SharedBucket | undefined, Map<SharedBucket | undefined, Range[]>>();
  /** The entries of a user without own rules in this family. */
  readonly plain: Difference;

  constructor(
    buckets: Buckets,
    readonly family: IpFamily,
  ) {
    const sideOf = (map: Map<Key, Bucket>): SharedSide => {
      const out: SharedSide = { buckets: new Map(), byCode: new Map() };
      for (const [key, bucket] of map) {
        const cum = [0];
        for (const [a0, a1] of bucket.ranges) cum.push(cum[cum.length - 1]! + countCidrs(family, a0, a1));
        out.buckets.set(key, { bucket, cum, cidrs: new Map() });
        const code = out.byCode.get(bucket.code);
        if (code) code.keys.push(key);
        else out.byCode.set(bucket.code, { keys: [key], entries: [] });
      }
      // Entries never join buckets of two causes: each cause's entries are written on their own.
      for (const code of out.byCode.values())
        code.entries = entriesOf(
          code.keys.map((k) => new PlainRanges(map.get(k)!, family)),
          family,
        );
      return out;
    };
    this.#lost = sideOf(buckets.lost);
    this.#gained = sideOf(buckets.gained);
    const all = (side: SharedSide) => sortEntries([...side.byCode.values()].flatMap((c) => c.entries));
    this.plain = { lost: all(this.#lost), gained: all(this.#gained) };
  }

  /** The addresses in exactly one of two shared buckets (computed once per pair). */
  symmetric(a: SharedBucket | undefined, b: SharedBucket | undefined): Range[] {
    let row = this.#symmetric.get(a);
    if (!row) this.#symmetric.set(a, (row = new Map()));
    let out = row.get(b);
    if (!out) row.set(b, (out = symmetricDifference(a?.bucket.ranges ?? [], b?.bucket.ranges ?? [])));
    return out;
  }

  /**
   * A user's difference: this one outside `blocks` (sorted, disjoint), `local` (computed inside
   * them only) inside. The entries of a cause none of whose ranges meet or touch a block, and
   * that has nothing inside them, are the shared ones.
   */
  patched(local: Buckets, blocks: readonly Range[]): Difference {
    if (blocks.length === 0) return this.plain;
    const side = (shared: SharedSide, localMap: Map<Key, Bucket>) => {
      const changed = new Map<MigrateCode, Set<Key>>();
      const mark = (code: MigrateCode, key: Key) => {
        const keys = changed.get(code);
        if (keys) keys.add(key);
        else changed.set(code, new Set([key]));
      };
      for (const [key, b] of localMap) mark(b.code, key);
      for (const [key, b] of shared.buckets)
        if (changed.has(b.bucket.code) || touches(b.bucket.ranges, blocks)) mark(b.bucket.code, key);
      const out: DiffEntry[] = [];
      for (const [code, c] of shared.byCode) if (!changed.has(code)) out.push(...c.entries);
      for (const [code, keys] of changed) {
        for (const key of shared.byCode.get(code)?.keys ?? []) keys.add(key);
        const views: RangesView[] = [];
        for (const key of keys) {
          const own = localMap.get(key);
          const sharedBucket = shared.buckets.get(key);
          const bucket = (sharedBucket?.bucket ?? own)!;
          const view = new PatchedRanges(bucket, this.family, sharedBucket, own?.ranges ?? [], blocks, this);
          if (!view.isEmpty()) views.push(view);
        }
        out.push(...entriesOf(views, this.family));
      }
      return sortEntries(out);
    };
    return { lost: side(this.#lost, local.lost), gained: side(this.#gained, local.gained) };
  }
}
