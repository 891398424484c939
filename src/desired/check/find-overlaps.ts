/**
 * Which declared rules overlap under the server's rule (docs/api-v0.md section 6), in time close to
 * linear in the number of rules, whatever their shape (a bound of validate, docs/netform.md
 * "Bounds"). Rules that must not overlap share a group (owner, action, family, port type); within
 * one, destinations are CIDR blocks, which never cross: two either nest or are apart. Sorted by
 * start (the wider block first), each rule meets the blocks that contain it on a stack, and those
 * are the only earlier-sorted rules it can overlap. Portless rules overlap any of them; rules with
 * ports ask a segment tree over the 65,536 ports which ranges the stack holds.
 *
 * Each rule is reported once at most, at the later of the pair in declaration order, and at most
 * MAX_OVERLAP_REPORTS are named: a file of ten thousand rules that all overlap one another gets a
 * bounded answer, not fifty million lines.
 */
import { overlapGroup, rulesOverlap, type ParsedRule } from '../../model/rule.js';

/** The most overlapping rules validate names one by one; beyond it, it says how many more there are. */
export const MAX_OVERLAP_REPORTS = 1000;

export interface OverlapItem {
  parsed: ParsedRule;
  /** Position in declaration order. */
  order: number;
}

export interface OverlapFound<T> {
  /** The rule declared later, where the overlap is reported. */
  later: T;
  /** A rule declared earlier that it overlaps. */
  earlier: T;
}

const PORTS = 65536;
/** Groups of at most this many rules are checked without the port tree. */
const SMALL_GROUP = 16;

/** How many port ranges of the stack cover each port: add a range, take it away, ask a range. */
class PortCover {
  readonly #max = new Int32Array(2 * PORTS);
  readonly #add = new Int32Array(2 * PORTS);

  change(low: number, high: number, by: number, node = 1, from = 0, to = PORTS - 1): void {
    if (high < from || to < low) return;
    if (low <= from && to <= high) {
      this.#max[node]! += by;
      this.#add[node]! += by;
      return;
    }
    const mid = (from + to) >> 1;
    this.change(low, high, by, 2 * node, from, mid);
    this.change(low, high, by, 2 * node + 1, mid + 1, to);
    this.#max[node] = Math.max(this.#max[2 * node]!, this.#max[2 * node + 1]!) + this.#add[node]!;
  }

  /** Takes the ranges still held away: one by one when they are few, else by clearing the whole tree. */
  empty(held: readonly { low: number; high: number }[]): void {
    if (held.length > 64) {
      this.#max.fill(0);
      this.#add.fill(0);
    } else for (const { low, high } of held) this.change(low, high, -1);
  }

  /** Whether some port in [low, high] is covered. */
  covered(low: number, high: number, node = 1, from = 0, to = PORTS - 1): boolean {
    return this.#most(low, high, node, from, to) > 0;
  }

  #most(low: number, high: number, node: number, from: number, to: number): number {
    if (high < from || to < low) return 0;
    if (low <= from && to <= high) return this.#max[node]!;
    const mid = (from + to) >> 1;
    return (
      Math.max(this.#most(low, high, 2 * node, from, mid), this.#most(low, high, 2 * node + 1, mid + 1, to)) +
      this.#add[node]!
    );
  }
}

/**
 * The overlapping pairs to report: each rule at most once (as `later`), at most `limit` of them,
 * and how many more rules overlap an earlier one beyond the limit. `same(a, b)` says whether two
 * rules are the same rule declared twice (reported as duplicates elsewhere, not here).
 */
export function findOverlaps<T extends OverlapItem>(
  items: readonly T[],
  same: (a: T, b: T) => boolean,
  limit = MAX_OVERLAP_REPORTS,
): { found: OverlapFound<T>[]; more: number; firstUnnamed: T | null } {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = overlapGroup(item.parsed).key;
    const list = groups.get(key);
    if (list) list.push(item);
    else groups.set(key, [item]);
  }
  const found: OverlapFound<T>[] = [];
  const reported = new Set<T>();
  let more = 0;
  let firstUnnamed: T | null = null;
  let shared: PortCover | undefined;
  const record = (a: T, b: T): void => {
    const [earlier, later] = a.order < b.order ? [a, b] : [b, a];
    if (reported.has(later) || same(earlier, later)) return;
    reported.add(later);
    if (found.length < limit) found.push({ later, earlier });
    else {
      more++;
      firstUnnamed ??= later;
    }
  };
  for (const list of groups.values()) {
    if (list.length === 1) continue; // nothing to overlap
    list.sort((a, b) => {
      const x = a.parsed.destination;
      const y = b.parsed.destination;
      return x.start < y.start
        ? -1
        : x.start > y.start
          ? 1
          : x.end > y.end
            ? -1
            : x.end < y.end
              ? 1
              : a.order - b.order;
    });
    const withPorts = list[0]!.parsed.ports !== null;
    // One tree for every large group with ports (a megabyte: a fleet has thousands of groups),
    // made on first use and left empty again at the end of each group. A small group's stack is
    // asked directly: the tree only says whether a scan of the stack can find a partner.
    const cover = withPorts && list.length > SMALL_GROUP ? (shared ??= new PortCover()) : null;
    const stack: T[] = [];
    const partnerIn = (item: T): boolean =>
      cover
        ? cover.covered(item.parsed.ports!.low, item.parsed.ports!.high)
        : !withPorts || stack.some((other) => rulesOverlap(other.parsed, item.parsed));
    for (const item of list) {
      const { start } = item.parsed.destination;
      while (stack.length > 0 && stack[stack.length - 1]!.parsed.destination.end < start) {
        const gone = stack.pop()!;
        if (cover) cover.change(gone.parsed.ports!.low, gone.parsed.ports!.high, -1);
      }
      if (stack.length > 0) {
        if (found.length >= limit) {
          // Past the limit the rules are counted, not named: no scan for a partner.
          if (partnerIn(item)) {
            more++;
            firstUnnamed ??= item;
          }
        } else if (!cover || partnerIn(item)) {
          // One rule of the stack it overlaps, to name: the nearest (the scan ends at the first).
          for (let i = stack.length - 1; i >= 0; i--)
            if (rulesOverlap(stack[i]!.parsed, item.parsed)) {
              record(stack[i]!, item);
              break;
            }
        }
      }
      stack.push(item);
      if (cover) cover.change(item.parsed.ports!.low, item.parsed.ports!.high, 1);
    }
    if (cover) cover.empty(stack.map((item) => item.parsed.ports!));
  }
  return { found, more, firstUnnamed };
}
