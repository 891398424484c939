/**
 * A user's reach under 0.7.36 as segments of address space, from netform's own evaluator: the
 * interval partition of src/access/partition.ts over a whole family, every protocol and port.
 * Default accept and the server's own addresses count as reach (that is what 0.7.36 does); the
 * drop rules that decide some of it are returned too (what 1.x expresses by leaving it out). Pure.
 */
import type { IpFamily } from '../model/net.js';
import type { CompiledRules } from '../access/evaluate.js';
import type { CompiledRule } from '../access/model.js';
import { decideRegion, FAMILY_END, MAX_PORT, type DecidedCell } from '../access/partition.js';
import { serverAddressesOf } from '../access/destination.js';
import { NO_ACCESS, normalize, type Access } from './access.js';
import { pushSegment, type Segment } from './evaluate-1x.js';

export interface Reach07 {
  segments: Segment[];
  /** Drop rules that decide some packets of this user (global or own). */
  drops: CompiledRule[];
}

function accepted(cell: DecidedCell): boolean {
  return cell.decider.kind !== 'rule' || cell.decider.rule.rule.action === 'accept';
}

type Cls = (0 | 1 | 2)[];

/** Segments of the reach over a0..a1 (cells of one region), with the drop rules that decide some of it. */
function reachOver(
  own: readonly CompiledRule[],
  global: readonly CompiledRule[],
  family: IpFamily,
  a0: bigint,
  a1: bigint,
  server: ReadonlySet<bigint>,
  drops: Set<CompiledRule>,
  segments: Segment[],
): void {
  const region = { family, a0, a1, classes: [0, 1, 2] as Cls, p0: 0, p1: MAX_PORT };
  const cells = decideRegion(own, global, region, server, true);
  // Cells of one address interval share its start (decideRegion sweeps addresses in order).
  const byStart = new Map<bigint, { a1: bigint; tcp: [number, number][]; udp: [number, number][]; other: boolean }>();
  const order: bigint[] = [];
  for (const cell of cells) {
    if (cell.decider.kind === 'rule' && cell.decider.rule.rule.action === 'drop') drops.add(cell.decider.rule);
    let slot = byStart.get(cell.a0);
    if (!slot) {
      byStart.set(cell.a0, (slot = { a1: cell.a1, tcp: [], udp: [], other: false }));
      order.push(cell.a0);
    }
    if (!accepted(cell)) continue;
    if (cell.cls === 0) slot.tcp.push([cell.p0, cell.p1]);
    else if (cell.cls === 1) slot.udp.push([cell.p0, cell.p1]);
    else slot.other = true;
  }
  order.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  for (const start of order) {
    const slot = byStart.get(start)!;
    const access: Access =
      slot.tcp.length === 0 && slot.udp.length === 0 && !slot.other
        ? NO_ACCESS
        : { tcp: normalize(slot.tcp), udp: normalize(slot.udp), icmp: slot.other, other: slot.other };
    pushSegment(segments, { family, a0: start, a1: slot.a1, access });
  }
}

/** The global rules of a family, compiled once per run (the baseline and every user share them). */
export function globalRulesOf(rules: CompiledRules, family: IpFamily): CompiledRule[] {
  return (rules.byOwner.get(null) ?? []).filter((r) => r.family === family);
}

/** The reach of users with the global rules only, in one family. */
export function baselineReach(rules: CompiledRules, global: readonly CompiledRule[], family: IpFamily): Reach07 {
  const drops = new Set<CompiledRule>();
  const segments: Segment[] = [];
  reachOver([], global, family, 0n, FAMILY_END[family], serverAddressesOf(rules, family), drops, segments);
  return { segments, drops: [...drops] };
}

/** The blocks of a user's own rules: sorted, joined where they overlap or touch. */
export function blocksOfRules(own: readonly CompiledRule[]): [bigint, bigint][] {
  const blocks: [bigint, bigint][] = [];
  for (const r of [...own].sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0))) {
    const last = blocks[blocks.length - 1];
    if (last && r.start <= last[1] + 1n) {
      if (r.end > last[1]) last[1] = r.end;
    } else blocks.push([r.start, r.end]);
  }
  return blocks;
}

/**
 * The global rules of one family indexed by their blocks: those meeting an address range, in
 * evaluation order, without a scan of them all (a tree of the largest end over the rules sorted
 * by start). Deciding a region with only these rules decides it as with all of them: the others
 * do not meet it, and the order of the rest is kept.
 */
export class RuleIndex {
  readonly #byStart: { rule: CompiledRule; index: number }[];
  readonly #maxEnd: bigint[];
  readonly #size: number;
  constructor(readonly rules: readonly CompiledRule[]) {
    this.#byStart = rules
      .map((rule, index) => ({ rule, index }))
      .sort((x, y) => (x.rule.start < y.rule.start ? -1 : x.rule.start > y.rule.start ? 1 : x.index - y.index));
    let size = 1;
    while (size < this.#byStart.length) size *= 2;
    this.#size = size;
    this.#maxEnd = new Array<bigint>(2 * size).fill(-1n);
    this.#byStart.forEach((r, i) => (this.#maxEnd[size + i] = r.rule.end));
    for (let i = size - 1; i >= 1; i--) {
      const l = this.#maxEnd[2 * i]!;
      const r = this.#maxEnd[2 * i + 1]!;
      this.#maxEnd[i] = l > r ? l : r;
    }
  }

  /** The rules meeting a0..a1, in evaluation order. */
  meeting(a0: bigint, a1: bigint): CompiledRule[] {
    // Rules starting at or before a1 are a prefix of the sorted list; among them, those ending at or after a0.
    let lo = 0;
    let hi = this.#byStart.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#byStart[mid]!.rule.start <= a1) lo = mid + 1;
      else hi = mid;
    }
    const limit = lo;
    const found: { rule: CompiledRule; index: number }[] = [];
    const visit = (node: number, from: number, to: number) => {
      if (from >= limit || this.#maxEnd[node]! < a0) return;
      if (to - from === 1) {
        found.push(this.#byStart[from]!);
        return;
      }
      const mid = (from + to) >> 1;
      visit(2 * node, from, mid);
      visit(2 * node + 1, mid, to);
    };
    if (limit > 0) visit(1, 0, this.#size);
    return found.sort((x, y) => x.index - y.index).map((r) => r.rule);
  }
}

/**
 * A user's reach inside the blocks of its own rules only (sorted, disjoint): the partition of its
 * own and the global rules meeting each block; outside them its reach is the baseline's. Returns
 * the segments inside the blocks and the drop rules deciding some of them, in the order found.
 */
export function reachInside(
  own: readonly CompiledRule[],
  global: RuleIndex,
  family: IpFamily,
  blocks: readonly [bigint, bigint][],
  server: ReadonlySet<bigint>,
): Reach07 {
  const drops = new Set<CompiledRule>();
  const segments: Segment[] = [];
  for (const [b0, b1] of blocks) reachOver(own, global.meeting(b0, b1), family, b0, b1, server, drops, segments);
  return { segments, drops: [...drops] };
}

/**
 * The reach of a user with own rules: the baseline outside the blocks of its own rules, and
 * inside them the partition of its own and the global rules (only there can they differ).
 * The whole family, for checks; the compiler works inside the blocks only (reachInside).
 */
export function userReach(
  rules: CompiledRules,
  own: readonly CompiledRule[],
  global: readonly CompiledRule[],
  baseline: Reach07,
  family: IpFamily,
): Reach07 {
  const blocks = blocksOfRules(own);
  const server = serverAddressesOf(rules, family);
  const drops = new Set<CompiledRule>(baseline.drops);
  const segments: Segment[] = [];
  const base = baseline.segments;
  let i = 0;
  let cur: Segment | undefined = base[0] && { ...base[0] };
  const advance = () => {
    i++;
    cur = base[i] && { ...base[i]! };
  };
  for (const [b0, b1] of blocks) {
    // The baseline before the block (the part of a segment reaching into it clipped), the block's own partition, then skip what it covers.
    while (cur && cur.a0 < b0) {
      if (cur.a1 < b0) {
        pushSegment(segments, cur);
        advance();
      } else {
        pushSegment(segments, { ...cur, a1: b0 - 1n });
        cur.a0 = b0;
        break;
      }
    }
    reachOver(own, global, family, b0, b1, server, drops, segments);
    while (cur && cur.a0 <= b1) {
      if (cur.a1 <= b1) advance();
      else {
        cur.a0 = b1 + 1n;
        break;
      }
    }
  }
  while (cur) {
    pushSegment(segments, cur);
    advance();
  }
  return { segments, drops: [...drops] };
}
