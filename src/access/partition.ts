/**
 * The exact partition of a region of packets (an address range × protocol classes × a port range)
 * by what decides them for one user's devices: a rule (the first in §6 order), the chain policy
 * (no rule matches: accept), or the server's own address (never filtered). Interval arithmetic
 * over addresses and ports, never sampling. Pure; the base of `reach` and `who-can-reach`.
 */
import type { IpFamily } from '../model/net.js';
import {
  blocksOf,
  exceptForm,
  mergePortRanges,
  rangeToCidrs,
  type AccessBlock,
  type Box,
  type Cell,
  type ClassIndex,
} from './changes.js';
import type { Match } from './evaluate.js';
import { STAGES, type CompiledRule } from './model.js';

export const MAX_PORT = 65535;
export const FAMILY_END: Record<IpFamily, bigint> = { 4: (1n << 32n) - 1n, 6: (1n << 128n) - 1n };
const CLASS_NAMES = ['tcp', 'udp', 'other'] as const;

/** Packets of one family: addresses a0..a1, the protocol classes (tcp, udp, other), ports p0..p1 (tcp and udp). */
export interface Region {
  family: IpFamily;
  a0: bigint;
  a1: bigint;
  classes: ClassIndex[];
  p0: number;
  p1: number;
}

/** What decides a part of a region. */
export type Decider =
  { kind: 'rule'; rule: CompiledRule; scope: 'user' | 'global' } | { kind: 'default' } | { kind: 'server' };

const DEFAULT: Decider = { kind: 'default' };
const SERVER: Decider = { kind: 'server' };

export interface DecidedCell extends Box {
  decider: Decider;
}

interface Ranked {
  rule: CompiledRule;
  /**
   * Scope (0 user, 1 global) × 4 + stage, then the position in its list: the lower decides first
   * (rules of one stage that overlap are equal on a real server, which refuses such overlaps; the
   * single-packet evaluator takes the first listed, and so does this).
   */
  rank: number;
  scope: 'user' | 'global';
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function meets(rule: CompiledRule, region: Region): boolean {
  return rule.family === region.family && rule.end >= region.a0 && rule.start <= region.a1;
}

/** How many cells decideRegion has decided in this process: tests bound how it grows with a fleet. */
export const decideWork = { cells: 0 };

/**
 * The cells of `region` and what decides each, for a device whose owner has the rules `own`,
 * with the global rules `global`, each in evaluation order (as CompiledRules lists them; rules of
 * the other family or outside the region are skipped).
 * `server` holds the server's own addresses of the region's family. Default cells are left out
 * unless `withDefault`. Cells of one address interval and class with the same decider are joined.
 */
export function decideRegion(
  own: readonly CompiledRule[],
  global: readonly CompiledRule[],
  region: Region,
  server: ReadonlySet<bigint>,
  withDefault: boolean,
): DecidedCell[] {
  const { family, a0: lo, a1: hi } = region;
  const ranked: Ranked[] = [];
  // own and global are in evaluation order (CompiledRules: sorted by stage, stable).
  const n = own.length + global.length + 1;
  own.forEach((rule, i) => {
    if (meets(rule, region)) ranked.push({ rule, rank: rule.stage * n + i, scope: 'user' });
  });
  global.forEach((rule, i) => {
    if (meets(rule, region)) ranked.push({ rule, rank: (4 + rule.stage) * n + i, scope: 'global' });
  });
  const points = new Set<bigint>([lo, hi + 1n]);
  for (const { rule } of ranked) {
    if (rule.start > lo) points.add(rule.start);
    if (rule.end < hi) points.add(rule.end + 1n);
  }
  for (const s of server) {
    if (s < lo || s > hi) continue;
    points.add(s);
    points.add(s + 1n);
  }
  const breaks = [...points].sort(compareBig);
  ranked.sort((x, y) => compareBig(x.rule.start, y.rule.start));
  const cells: DecidedCell[] = [];
  let next = 0;
  const active: Ranked[] = [];
  for (let i = 0; i + 1 < breaks.length; i++) {
    const x = breaks[i]!;
    const end = breaks[i + 1]! - 1n;
    // In place: a sweep over tens of thousands of rules makes no garbage per step.
    let kept = 0;
    for (const r of active) if (r.rule.end >= x) active[kept++] = r;
    active.length = kept;
    while (next < ranked.length && ranked[next]!.rule.start <= x) active.push(ranked[next++]!);
    if (server.has(x)) {
      for (const cls of region.classes) cells.push(cellOf(family, cls, x, end, region, SERVER));
      continue;
    }
    if (active.length === 0) {
      // No rule here (most of a family, between the rules' blocks): the chain policy.
      if (withDefault) for (const cls of region.classes) cells.push(cellOf(family, cls, x, end, region, DEFAULT));
      continue;
    }
    for (const cls of region.classes) {
      const here = active.filter((r) => r.rule.portType === null || r.rule.portType === CLASS_NAMES[cls]);
      if (cls === 2) {
        const first = firstAt(here, 0, true);
        const decider = first ? ruleDecider(first) : DEFAULT;
        if (first || withDefault) cells.push(cellOf(family, cls, x, end, region, decider));
        continue;
      }
      const portPoints = new Set<number>([region.p0, region.p1 + 1]);
      for (const r of here) {
        if (r.rule.portType === null) continue;
        if (r.rule.low > region.p0 && r.rule.low <= region.p1) portPoints.add(r.rule.low);
        if (r.rule.high >= region.p0 && r.rule.high < region.p1) portPoints.add(r.rule.high + 1);
      }
      const ports = [...portPoints].sort((p, q) => p - q);
      let last: DecidedCell | undefined;
      for (let j = 0; j + 1 < ports.length; j++) {
        const p = ports[j]!;
        const first = firstAt(here, p, false);
        if (!first && !withDefault) {
          last = undefined;
          continue;
        }
        const p1 = ports[j + 1]! - 1;
        const same =
          last !== undefined &&
          (first ? last.decider.kind === 'rule' && last.decider.rule === first.rule : last.decider.kind === 'default');
        if (same) last!.p1 = p1;
        else {
          last = { family, cls, a0: x, a1: end, p0: p, p1, decider: first ? ruleDecider(first) : DEFAULT };
          cells.push(last);
        }
      }
    }
  }
  decideWork.cells += cells.length;
  return cells;
}

function cellOf(
  family: IpFamily,
  cls: ClassIndex,
  a0: bigint,
  a1: bigint,
  region: Region,
  decider: Decider,
): DecidedCell {
  return cls === 2
    ? { family, cls, a0, a1, p0: 0, p1: 0, decider }
    : { family, cls, a0, a1, p0: region.p0, p1: region.p1, decider };
}

function ruleDecider(r: Ranked): Decider {
  return { kind: 'rule', rule: r.rule, scope: r.scope };
}

/** The rule that decides port `port` (ignored for the `other` class) among the rules meeting an address. */
function firstAt(rules: Ranked[], port: number, other: boolean): Ranked | undefined {
  let best: Ranked | undefined;
  for (const r of rules) {
    if (best && r.rank >= best.rank) continue;
    if (!other && r.rule.portType !== null && (port < r.rule.low || port > r.rule.high)) continue;
    if (other && r.rule.portType !== null) continue;
    best = r;
  }
  return best;
}

/** A part of a region decided one way: by one rule, by default, or as the server's own address. */
export interface ReachPiece {
  verdict: 'accept' | 'drop';
  by: 'rule' | 'default' | 'server';
  /** The deciding rule, its scope and stage, when `by` is `rule`. */
  match?: Match;
  /** The packets, as address blocks × protocol × ports. */
  blocks: AccessBlock[];
}

function deciderKey(decider: Decider): Decider | CompiledRule {
  return decider.kind === 'rule' ? decider.rule : decider;
}

/** Cells grouped by what decides them, in order: rules by first appearance, then default, then server. */
export function piecesOf(cells: readonly DecidedCell[]): ReachPiece[] {
  const groups = new Map<Decider | CompiledRule, { decider: Decider; cells: Cell[] }>();
  for (const c of cells) {
    const key = deciderKey(c.decider);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { decider: c.decider, cells: [] }));
    group.cells.push({ family: c.family, cls: c.cls, a0: c.a0, a1: c.a1, p0: c.p0, p1: c.p1, accept: true });
  }
  const pieces: ReachPiece[] = [];
  const tail: ReachPiece[] = [];
  for (const { decider, cells: mine } of groups.values()) {
    const blocks = oneRangeBlocks(mine) ?? blocksOf(mine, true);
    for (const block of blocks) {
      const except = exceptForm(block.family, block.addresses);
      if (except) block.except = except;
    }
    if (decider.kind === 'rule') {
      const { rule, scope } = decider;
      pieces.push({
        verdict: rule.rule.action,
        by: 'rule',
        match: { rule: rule.rule, scope, stage: STAGES[rule.stage]! },
        blocks,
      });
    } else tail.push({ verdict: 'accept', by: decider.kind, blocks });
  }
  tail.sort((a, b) => (a.by === b.by ? 0 : a.by === 'default' ? -1 : 1));
  return [...pieces, ...tail];
}

/**
 * The blocks of cells that all cover one address range (a rule on a host or block that nothing
 * else cuts, the common case at fleet scale), without blocksOf's sweep: the same blocks.
 */
function oneRangeBlocks(cells: readonly Cell[]): AccessBlock[] | undefined {
  const { family, a0, a1 } = cells[0]!;
  const ports: [number, number][][] = [[], [], []];
  for (const c of cells) {
    if (c.family !== family || c.a0 !== a0 || c.a1 !== a1) return undefined;
    ports[c.cls]!.push([c.p0, c.p1]);
  }
  for (const list of ports) mergePortRanges(list);
  const addresses = rangeToCidrs(family, a0, a1);
  const [tcp, udp, other] = ports as [[number, number][], [number, number][], [number, number][]];
  const full = (list: [number, number][]) => list.length === 1 && list[0]![0] === 0 && list[0]![1] === MAX_PORT;
  if (full(tcp) && full(udp) && other.length > 0) return [{ family, addresses, protocol: 'all' }];
  const text = (list: [number, number][]) => list.map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`)).join(', ');
  const blocks: AccessBlock[] = [];
  if (tcp.length > 0) blocks.push({ family, addresses, protocol: 'tcp', ports: text(tcp) });
  if (udp.length > 0) blocks.push({ family, addresses: [...addresses], protocol: 'udp', ports: text(udp) });
  if (other.length > 0) blocks.push({ family, addresses: [...addresses], protocol: 'other' });
  return blocks;
}

/** Sorted disjoint address ranges with their lengths summed, for "how much of [a0, a1] do they cover". */
export class IntervalSet {
  readonly starts: bigint[] = [];
  readonly ends: bigint[] = [];
  /** prefix[i]: total length of ranges 0..i-1. */
  readonly #prefix: bigint[] = [0n];

  constructor(ranges: Iterable<readonly [bigint, bigint]>) {
    const sorted = [...ranges].sort((x, y) => compareBig(x[0], y[0]));
    for (const [a0, a1] of sorted) {
      const last = this.ends.length - 1;
      if (last >= 0 && a0 <= this.ends[last]! + 1n) {
        if (a1 > this.ends[last]!) this.ends[last] = a1;
      } else {
        this.starts.push(a0);
        this.ends.push(a1);
      }
    }
    for (let i = 0; i < this.starts.length; i++)
      this.#prefix.push(this.#prefix[i]! + this.ends[i]! - this.starts[i]! + 1n);
  }

  get total(): bigint {
    return this.#prefix[this.#prefix.length - 1]!;
  }

  get size(): number {
    return this.starts.length;
  }

  /** How many addresses of [a0, a1] the set holds. */
  covered(a0: bigint, a1: bigint): bigint {
    const n = this.starts.length;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ends[mid]! < a0) lo = mid + 1;
      else hi = mid;
    }
    const first = lo;
    hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid]! <= a1) lo = mid + 1;
      else hi = mid;
    }
    const last = lo - 1;
    if (last < first) return 0n;
    let sum = this.#prefix[last + 1]! - this.#prefix[first]!;
    if (this.starts[first]! < a0) sum -= a0 - this.starts[first]!;
    if (this.ends[last]! > a1) sum -= this.ends[last]! - a1;
    return sum;
  }
}
