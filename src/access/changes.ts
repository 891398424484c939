/**
 * Access changes: for each user, what becomes reachable and what becomes blocked when the rules
 * go from `before` to `after`, exactly, by interval arithmetic over addresses and ports per
 * family (never by sampling). Pure.
 *
 * Only packets some changed rule matches can change verdict (every other packet meets the same
 * rules before and after), so the work is confined to the changed rules' blocks. A change of a
 * global rule is computed once for a user without own rules there, and shown for "all users
 * except" those whose own rules give them a different result.
 */
import { cidrRange, formatAddress, type IpFamily } from '../model/net.js';
import { compileRule, type AccessRule, type CompiledRule } from './model.js';

/** Protocol classes as rules see them: tcp and udp have ports; every other protocol is `other`. */
const CLASSES = ['tcp', 'udp', 'other'] as const;
export type ClassIndex = 0 | 1 | 2;
const MAX_PORT = 65535;
const BITS: Record<IpFamily, bigint> = { 4: 32n, 6: 128n };

/** Packets of one family and protocol class: addresses a0..a1, ports p0..p1 (0..0 for `other`). */
export interface Box {
  family: IpFamily;
  cls: ClassIndex;
  a0: bigint;
  a1: bigint;
  p0: number;
  p1: number;
}

/** A rule placed in evaluation order: `rank` = scope (0 user, 1 global) × 4 + stage. */
interface Ranked {
  rule: CompiledRule;
  rank: number;
}

export interface AccessBlock {
  family: IpFamily;
  /** CIDR blocks covering exactly the addresses. */
  addresses: string[];
  /** `all`: every protocol and port; `other`: protocols without ports (ICMP, GRE, …). */
  protocol: 'all' | 'tcp' | 'udp' | 'other';
  /** For tcp and udp: `22`, `80-90`, `22, 443`. */
  ports?: string;
  /**
   * The same addresses as one block with carve-outs (`10.0.0.0/8` except `10.20.0.0/16`, …), set
   * (by `reach` and `who-can-reach`) only when that is shorter to read than `addresses`.
   */
  except?: { block: string; holes: string[] };
}

export interface UserAccessChange {
  user: string;
  reachable: AccessBlock[];
  blocked: AccessBlock[];
}

export interface AccessChanges {
  /**
   * Users whose change differs from everyone's where their own rules are: each lists its change
   * within the address blocks of its own rules (before or after); elsewhere everyone's applies.
   */
  users: UserAccessChange[];
  /**
   * The change of global rules for every user, except within the own rules' blocks of the users
   * in `except` (listed in `users`, or left out when nothing changes for them there).
   */
  everyone?: { except: string[]; reachable: AccessBlock[]; blocked: AccessBlock[] };
  /** What the bounds left out. */
  omitted?: { users: number; blocks: number };
}

export interface AccessChangeInput {
  before: AccessRule[];
  after: AccessRule[];
  /** Users that exist before and after (emails in normal form); rules of others are not reported. */
  users: string[];
  portRules: boolean;
  /**
   * Most users whose own rules need evaluating one by one (default 1,000); the others are counted in
   * `omitted.users` (their change may differ from everyone's) so that a plan stays quick.
   */
  maxUsersEvaluated?: number;
}

export interface AccessChangeLimits {
  /** Most users listed (default 100). */
  users?: number;
  /** Most blocks listed per user and direction (default 20). */
  blocks?: number;
}

function boxesOf(rule: CompiledRule): Box[] {
  const { family, start: a0, end: a1 } = rule;
  if (rule.portType === null) {
    return [
      { family, cls: 0, a0, a1, p0: 0, p1: MAX_PORT },
      { family, cls: 1, a0, a1, p0: 0, p1: MAX_PORT },
      { family, cls: 2, a0, a1, p0: 0, p1: 0 },
    ];
  }
  return [{ family, cls: rule.portType === 'tcp' ? 0 : 1, a0, a1, p0: rule.low, p1: rule.high }];
}

function covers(rule: CompiledRule, family: IpFamily, cls: ClassIndex): boolean {
  return rule.family === family && (rule.portType === null || CLASSES[cls] === rule.portType);
}

/** Global rules by prefix length, so that the rules meeting an address range are found by binary search. */
export class RuleIndex {
  readonly #buckets = new Map<string, { size: bigint; starts: bigint[]; rules: CompiledRule[] }>();

  constructor(rules: CompiledRule[]) {
    const groups = new Map<string, CompiledRule[]>();
    for (const rule of rules) {
      const key = `${rule.family}:${rule.end - rule.start}`;
      let list = groups.get(key);
      if (!list) groups.set(key, (list = []));
      list.push(rule);
    }
    for (const [key, list] of groups) {
      list.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
      this.#buckets.set(key, {
        size: list[0]!.end - list[0]!.start + 1n,
        starts: list.map((r) => r.start),
        rules: list,
      });
    }
  }

  /** Rules of `family` whose block meets [a0, a1]. */
  query(family: IpFamily, a0: bigint, a1: bigint, into: Set<CompiledRule>): void {
    for (const [key, bucket] of this.#buckets) {
      if (!key.startsWith(`${family}:`)) continue;
      // Blocks of one size are aligned: one meets [a0, a1] when it starts in [a0 rounded down, a1].
      const low = a0 - (a0 % bucket.size);
      let lo = 0;
      let hi = bucket.starts.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (bucket.starts[mid]! < low) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < bucket.starts.length && bucket.starts[i]! <= a1; i++) into.add(bucket.rules[i]!);
    }
  }
}

/** Sorts port ranges and joins those that overlap or touch, in place: [[20, 22], [23, 25]] → [[20, 25]]. */
export function mergePortRanges(list: [number, number][]): void {
  list.sort((p, q) => p[0] - q[0]);
  for (let k = list.length - 1; k > 0; k--) {
    if (list[k - 1]![1] + 1 >= list[k]![0]) {
      list[k - 1]![1] = Math.max(list[k - 1]![1], list[k]![1]);
      list.splice(k, 1);
    }
  }
}

/** A cell whose verdict changes: the new verdict over an address range × port range of one class. */
export interface Cell extends Box {
  accept: boolean;
}

/** The verdict of the first stage (lowest rank) among the rules meeting a point; accept when none. */
function verdictAt(rules: Ranked[], cls: ClassIndex, port: number): boolean {
  let best = Infinity;
  let accept = true;
  for (const { rule, rank } of rules) {
    if (rank >= best) continue;
    if (cls !== 2 && (port < rule.low || port > rule.high)) continue;
    best = rank;
    accept = rule.rule.action === 'accept';
  }
  return accept;
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The cells inside `dirty` whose verdict differs between the `before` and `after` rule lists,
 * by a sweep over address breakpoints, then over port breakpoints within each address interval.
 */
function changedCells(dirty: Box[], before: Ranked[], after: Ranked[]): Cell[] {
  const cells: Cell[] = [];
  for (const family of [4, 6] as IpFamily[]) {
    for (const cls of [0, 1, 2] as ClassIndex[]) {
      const boxes = dirty.filter((b) => b.family === family && b.cls === cls);
      if (boxes.length === 0) continue;
      const b = before.filter((r) => covers(r.rule, family, cls));
      const a = after.filter((r) => covers(r.rule, family, cls));
      sweep(family, cls, boxes, b, a, cells);
    }
  }
  return cells;
}

function sweep(family: IpFamily, cls: ClassIndex, boxes: Box[], before: Ranked[], after: Ranked[], into: Cell[]): void {
  let hullStart = boxes[0]!.a0;
  let hullEnd = boxes[0]!.a1;
  for (const box of boxes) {
    if (box.a0 < hullStart) hullStart = box.a0;
    if (box.a1 > hullEnd) hullEnd = box.a1;
  }
  type Item = { a0: bigint; a1: bigint; kind: 0 | 1 | 2; box?: Box; ranked?: Ranked };
  const items: Item[] = boxes.map((box) => ({ a0: box.a0, a1: box.a1, kind: 0, box }));
  for (const r of before)
    if (r.rule.end >= hullStart && r.rule.start <= hullEnd)
      items.push({ a0: r.rule.start, a1: r.rule.end, kind: 1, ranked: r });
  for (const r of after)
    if (r.rule.end >= hullStart && r.rule.start <= hullEnd)
      items.push({ a0: r.rule.start, a1: r.rule.end, kind: 2, ranked: r });
  const points = new Set<bigint>();
  for (const item of items) {
    points.add(item.a0 < hullStart ? hullStart : item.a0);
    if (item.a1 < hullEnd) points.add(item.a1 + 1n);
  }
  points.add(hullEnd + 1n);
  const breaks = [...points].sort(compareBig);
  items.sort((x, y) => compareBig(x.a0, y.a0));
  let next = 0;
  let active: Item[] = [];
  for (let i = 0; i + 1 < breaks.length; i++) {
    const x = breaks[i]!;
    const end = breaks[i + 1]! - 1n;
    while (next < items.length && items[next]!.a0 <= x) active.push(items[next++]!);
    active = active.filter((item) => item.a1 >= x);
    const dirtyHere = active.filter((item) => item.kind === 0).map((item) => item.box!);
    if (dirtyHere.length === 0) continue;
    const b = active.filter((item) => item.kind === 1).map((item) => item.ranked!);
    const a = active.filter((item) => item.kind === 2).map((item) => item.ranked!);
    if (cls === 2) {
      const was = verdictAt(b, cls, 0);
      const now = verdictAt(a, cls, 0);
      if (was !== now) into.push({ family, cls, a0: x, a1: end, p0: 0, p1: 0, accept: now });
      continue;
    }
    const portPoints = new Set<number>();
    for (const box of dirtyHere) {
      portPoints.add(box.p0);
      portPoints.add(box.p1 + 1);
    }
    for (const r of [...b, ...a]) {
      if (r.rule.portType === null) continue;
      portPoints.add(r.rule.low);
      portPoints.add(r.rule.high + 1);
    }
    const ports = [...portPoints].sort((p, q) => p - q);
    for (let j = 0; j + 1 < ports.length; j++) {
      const p = ports[j]!;
      if (p > MAX_PORT) break;
      if (!dirtyHere.some((box) => box.p0 <= p && p <= box.p1)) continue;
      const was = verdictAt(b, cls, p);
      const now = verdictAt(a, cls, p);
      if (was === now) continue;
      const last = into.at(-1);
      const p1 = ports[j + 1]! - 1;
      // Adjacent port ranges of one address interval with the same outcome are one cell.
      if (
        last &&
        last.family === family &&
        last.cls === cls &&
        last.a0 === x &&
        last.accept === now &&
        last.p1 + 1 === p
      )
        last.p1 = p1;
      else into.push({ family, cls, a0: x, a1: end, p0: p, p1, accept: now });
    }
  }
}

/** The position of the highest set bit of n > 0 (floor of log2 n). */
function highestBit(n: bigint): number {
  const hex = n.toString(16);
  return (hex.length - 1) * 4 + 31 - Math.clz32(parseInt(hex[0]!, 16));
}

/**
 * The smallest list of CIDR blocks covering exactly [a0, a1]: from the start, each time the largest
 * block aligned there (as many bits as the start has trailing zeros) that fits in what remains.
 */
export function rangeToCidrs(family: IpFamily, a0: bigint, a1: bigint): string[] {
  const bits = BITS[family];
  const out: string[] = [];
  let start = a0;
  while (start <= a1) {
    const aligned = start === 0n ? Number(bits) : highestBit(start & -start);
    const size = Math.min(aligned, highestBit(a1 - start + 1n));
    out.push(`${formatAddress(family, start)}/${Number(bits) - size}`);
    start += 1n << BigInt(size);
  }
  return out;
}

/**
 * Disjoint CIDR blocks as the smallest block holding them all minus its holes, when that reads
 * shorter than the list (`0.0.0.0/0` except `10.1.0.0/16, 10.3.2.1/32` for thirty-odd pieces).
 */
export function exceptForm(family: IpFamily, addresses: readonly string[]): AccessBlock['except'] | undefined {
  if (addresses.length < 3) return undefined;
  const ranges: [bigint, bigint][] = [];
  for (const text of addresses) {
    const range = cidrRange(text);
    if (!range || range.family !== family) return undefined;
    ranges.push([range.start, range.end]);
  }
  ranges.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  return exceptOfRanges(family, ranges, rangeToCidrs, addresses.join(', ').length);
}

/**
 * The except form of address ranges sorted by start: the smallest CIDR block holding them all and
 * its holes (`cidrsOf` writes a hole as CIDR blocks), when that text is shorter than `textLength`,
 * the length of the ranges' own list.
 */
export function exceptOfRanges(
  family: IpFamily,
  sorted: readonly (readonly [bigint, bigint])[],
  cidrsOf: (family: IpFamily, start: bigint, end: bigint) => string[],
  textLength: number,
): AccessBlock['except'] | undefined {
  const lo = sorted[0]![0];
  const hi = sorted.reduce((m, r) => (r[1] > m ? r[1] : m), lo);
  let size = 0n;
  while (size < BITS[family] && lo >> size !== hi >> size) size++;
  const start = (lo >> size) << size;
  const end = start + (1n << size) - 1n;
  const holes: string[] = [];
  let next = start;
  for (const [a0, a1] of sorted) {
    if (a0 > next) holes.push(...cidrsOf(family, next, a0 - 1n));
    if (a1 + 1n > next) next = a1 + 1n;
  }
  if (next <= end) holes.push(...cidrsOf(family, next, end));
  if (holes.length === 0) return undefined;
  const block = `${formatAddress(family, start)}/${BITS[family] - size}`;
  let holesLength = 2 * (holes.length - 1);
  for (const hole of holes) holesLength += hole.length;
  return block.length + ' except '.length + holesLength < textLength ? { block, holes } : undefined;
}

function portText(ranges: [number, number][]): string {
  return ranges.map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`)).join(', ');
}

/**
 * Cells to blocks: per family and outcome, address intervals with the same protocols and ports
 * are joined when adjacent, then written as CIDR blocks with their protocol and ports.
 */
export function blocksOf(cells: Cell[], accept: boolean): AccessBlock[] {
  return accessBlocksOf(cells.filter((c) => c.accept === accept));
}

/** A part of the packet space: an address range × a port range of one protocol class (0 tcp, 1 udp, 2 other; ports 0 for other). */
export interface PacketCell {
  family: IpFamily;
  cls: 0 | 1 | 2;
  a0: bigint;
  a1: bigint;
  p0: number;
  p1: number;
}

/** Cells (of one outcome) as blocks: CIDR blocks × protocol × ports, `all` where every protocol and port is in. */
export function accessBlocksOf(cells: PacketCell[]): AccessBlock[] {
  const blocks: AccessBlock[] = [];
  for (const family of [4, 6] as IpFamily[]) {
    const mine = cells.filter((c) => c.family === family);
    if (mine.length === 0) continue;
    const points = new Set<bigint>();
    for (const c of mine) {
      points.add(c.a0);
      points.add(c.a1 + 1n);
    }
    const breaks = [...points].sort(compareBig);
    mine.sort((x, y) => compareBig(x.a0, y.a0));
    let next = 0;
    let active: PacketCell[] = [];
    const runs: { a0: bigint; a1: bigint; signature: string; ports: [number, number][][] }[] = [];
    for (let i = 0; i + 1 < breaks.length; i++) {
      const x = breaks[i]!;
      const end = breaks[i + 1]! - 1n;
      while (next < mine.length && mine[next]!.a0 <= x) active.push(mine[next++]!);
      active = active.filter((c) => c.a1 >= x);
      if (active.length === 0) continue;
      const ports: [number, number][][] = [[], [], []];
      for (const c of active) ports[c.cls]!.push([c.p0, c.p1]);
      for (const list of ports) mergePortRanges(list);
      const signature = JSON.stringify(ports);
      const last = runs.at(-1);
      if (last && last.signature === signature && last.a1 + 1n === x) last.a1 = end;
      else runs.push({ a0: x, a1: end, signature, ports });
    }
    for (const run of runs) {
      const addresses = rangeToCidrs(family, run.a0, run.a1);
      const [tcp, udp, other] = run.ports as [[number, number][], [number, number][], [number, number][]];
      const full = (list: [number, number][]) => list.length === 1 && list[0]![0] === 0 && list[0]![1] === MAX_PORT;
      if (full(tcp) && full(udp) && other.length > 0) {
        blocks.push({ family, addresses, protocol: 'all' });
        continue;
      }
      if (tcp.length > 0) blocks.push({ family, addresses, protocol: 'tcp', ports: portText(tcp) });
      if (udp.length > 0) blocks.push({ family, addresses, protocol: 'udp', ports: portText(udp) });
      if (other.length > 0) blocks.push({ family, addresses, protocol: 'other' });
    }
  }
  // Blocks with the same protocol and ports are one block of several address ranges.
  const merged = new Map<string, AccessBlock>();
  for (const block of blocks) {
    const key = `${block.family}|${block.protocol}|${block.ports ?? ''}`;
    const first = merged.get(key);
    if (first) first.addresses.push(...block.addresses);
    else merged.set(key, { ...block, addresses: [...block.addresses] });
  }
  return [...merged.values()];
}

/** The rule as written: rules written the same before and after are unchanged (the same packets meet them). */
function textKey(rule: AccessRule): string {
  return `${rule.owner ?? '*'}|${rule.action}|${rule.destination}|${rule.port_type ?? ''}|${rule.port_range ?? ''}`;
}

function ranked(own: CompiledRule[], global: Iterable<CompiledRule>): Ranked[] {
  const list: Ranked[] = own.map((rule) => ({ rule, rank: rule.stage }));
  for (const rule of global) list.push({ rule, rank: 4 + rule.stage });
  return list;
}

/** Disjoint sorted address intervals of a family, for "does this block meet them" by binary search. */
class Intervals {
  readonly #starts: bigint[] = [];
  readonly #ends: bigint[] = [];

  constructor(
    boxes: Box[],
    readonly family: IpFamily,
  ) {
    const mine = boxes.filter((b) => b.family === family).sort((x, y) => compareBig(x.a0, y.a0));
    for (const b of mine) {
      const last = this.#ends.length - 1;
      if (last >= 0 && b.a0 <= this.#ends[last]! + 1n) {
        if (b.a1 > this.#ends[last]!) this.#ends[last] = b.a1;
      } else {
        this.#starts.push(b.a0);
        this.#ends.push(b.a1);
      }
    }
  }

  meets(a0: bigint, a1: bigint): boolean {
    let lo = 0;
    let hi = this.#ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#ends[mid]! < a0) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.#starts.length && this.#starts[lo]! <= a1;
  }
}

/** Sorted disjoint [start, end] ranges of a family from blocks (merged when they touch). */
function mergedRanges(ranges: { family: IpFamily; a0: bigint; a1: bigint }[], family: IpFamily): [bigint, bigint][] {
  const mine = ranges.filter((r) => r.family === family).sort((x, y) => compareBig(x.a0, y.a0));
  const out: [bigint, bigint][] = [];
  for (const r of mine) {
    const last = out.at(-1);
    if (last && r.a0 <= last[1] + 1n) {
      if (r.a1 > last[1]) last[1] = r.a1;
    } else out.push([r.a0, r.a1]);
  }
  return out;
}

/** The parts of `items` inside (`keep` true) or outside (`keep` false) the ranges, per family. */
function clip<T extends { family: IpFamily; a0: bigint; a1: bigint }>(
  items: T[],
  ranges: Record<4 | 6, [bigint, bigint][]>,
  keep: boolean,
): T[] {
  const out: T[] = [];
  for (const item of items) {
    let cursor = item.a0;
    for (const [r0, r1] of ranges[item.family]) {
      if (r1 < item.a0) continue;
      if (r0 > item.a1) break;
      if (!keep && r0 > cursor) out.push({ ...item, a0: cursor, a1: r0 - 1n });
      if (keep) out.push({ ...item, a0: r0 > item.a0 ? r0 : item.a0, a1: r1 < item.a1 ? r1 : item.a1 });
      cursor = r1 + 1n;
      if (cursor > item.a1) break;
    }
    if (!keep && cursor <= item.a1) out.push({ ...item, a0: cursor });
  }
  return out;
}

/** The access changes from `before` to `after` rules, unbounded (see boundAccessChanges). */
export function computeAccessChanges(input: AccessChangeInput): AccessChanges {
  // Rules are compiled once each (an unchanged rule is usually the same object on both sides).
  const compiledOf = new Map<AccessRule, CompiledRule | null>();
  const compile = (rule: AccessRule): CompiledRule | null => {
    let compiled = compiledOf.get(rule);
    if (compiled === undefined) {
      compiled = compileRule(rule);
      if (compiled && compiled.portType !== null && !input.portRules) compiled = null;
      compiledOf.set(rule, compiled);
    }
    return compiled;
  };
  const compileAll = (rules: AccessRule[]) => rules.map(compile).filter((r): r is CompiledRule => r !== null);
  // The same object on both sides is unchanged; only the others are compared by text.
  const beforeObjects = new Set(input.before);
  const afterObjects = new Set(input.after);
  const beforeRest = input.before.filter((r) => !afterObjects.has(r));
  const afterRest = input.after.filter((r) => !beforeObjects.has(r));
  const beforeKeys = new Set(beforeRest.map(textKey));
  const afterKeys = new Set(afterRest.map(textKey));
  const removed = beforeRest.filter((r) => !afterKeys.has(textKey(r)));
  const added = afterRest.filter((r) => !beforeKeys.has(textKey(r)));
  const ownersOf = (rules: AccessRule[]) => {
    const byOwner = new Map<string | null, AccessRule[]>();
    for (const rule of rules) {
      let list = byOwner.get(rule.owner);
      if (!list) byOwner.set(rule.owner, (list = []));
      list.push(rule);
    }
    return byOwner;
  };
  const beforeByOwner = ownersOf(input.before);
  const afterByOwner = ownersOf(input.after);
  const changedByOwner = ownersOf([...removed, ...added]);

  const globalDirty = compileAll(changedByOwner.get(null) ?? []).flatMap(boxesOf);
  const globalBefore = compileAll(beforeByOwner.get(null) ?? []);
  const globalAfter = compileAll(afterByOwner.get(null) ?? []);
  const beforeIndex = new RuleIndex(globalBefore);
  const afterIndex = new RuleIndex(globalAfter);
  const globalsMeeting = (index: RuleIndex, boxes: Box[]): Set<CompiledRule> => {
    const found = new Set<CompiledRule>();
    for (const box of boxes) index.query(box.family, box.a0, box.a1, found);
    return found;
  };
  const cellsOf = (dirty: Box[], ownBefore: CompiledRule[], ownAfter: CompiledRule[]) =>
    changedCells(
      dirty,
      ranked(ownBefore, globalsMeeting(beforeIndex, dirty)),
      ranked(ownAfter, globalsMeeting(afterIndex, dirty)),
    );
  const blocks = (cells: Cell[]) => ({ reachable: blocksOf(cells, true), blocked: blocksOf(cells, false) });

  const baselineCells = globalDirty.length > 0 ? cellsOf(globalDirty, [], []) : [];
  const baseline = blocks(baselineCells);
  const dirtyV4 = new Intervals(globalDirty, 4);
  const dirtyV6 = new Intervals(globalDirty, 6);
  const meetsGlobalDirty = (rule: AccessRule): boolean => {
    const compiled = compile(rule);
    return compiled !== null && (compiled.family === 4 ? dirtyV4 : dirtyV6).meets(compiled.start, compiled.end);
  };
  const users: UserAccessChange[] = [];
  const except: string[] = [];
  // Users evaluated one by one are bounded: past the bound they are counted, not evaluated.
  const maxEvaluated = input.maxUsersEvaluated ?? 1000;
  let evaluated = 0;
  let notEvaluated = 0;
  for (const user of input.users) {
    const changedOwn = changedByOwner.get(user) ?? [];
    const ownBefore = beforeByOwner.get(user) ?? [];
    const ownAfter = afterByOwner.get(user) ?? [];
    // A user with no changed rule and no own rule where the global rules changed gets the baseline.
    if (
      changedOwn.length === 0 &&
      (globalDirty.length === 0 || !(ownBefore.some(meetsGlobalDirty) || ownAfter.some(meetsGlobalDirty)))
    )
      continue;
    if (evaluated >= maxEvaluated) {
      notEvaluated++;
      continue;
    }
    evaluated++;
    // Only where the user's own rules are can the user's change differ from everyone's: evaluate
    // there, and take everyone's change elsewhere.
    const own = [...compileAll(ownBefore), ...compileAll(ownAfter)].map((r) => ({
      family: r.family,
      a0: r.start,
      a1: r.end,
    }));
    const ranges = { 4: mergedRanges(own, 4), 6: mergedRanges(own, 6) };
    const userDirty = [...clip(globalDirty, ranges, true), ...compileAll(changedOwn).flatMap(boxesOf)];
    const userCells = cellsOf(userDirty, compileAll(ownBefore), compileAll(ownAfter));
    const baselineThere = clip(baselineCells, ranges, true);
    const result = blocks(userCells);
    if (JSON.stringify(result) === JSON.stringify(blocks(baselineThere))) continue;
    if (globalDirty.length > 0) except.push(user);
    if (result.reachable.length > 0 || result.blocked.length > 0) users.push({ user, ...result });
  }
  const changes: AccessChanges = { users };
  if (baseline.reachable.length > 0 || baseline.blocked.length > 0) changes.everyone = { except, ...baseline };
  if (notEvaluated > 0) changes.omitted = { users: notEvaluated, blocks: 0 };
  return changes;
}

/** Keeps at most `limits.users` users and `limits.blocks` blocks per list, counting what is left out. */
export function boundAccessChanges(changes: AccessChanges, limits: AccessChangeLimits = {}): AccessChanges {
  const maxUsers = limits.users ?? 100;
  const maxBlocks = limits.blocks ?? 20;
  let omittedBlocks = 0;
  const cut = (list: AccessBlock[]): AccessBlock[] => {
    if (list.length <= maxBlocks) return list;
    omittedBlocks += list.length - maxBlocks;
    return list.slice(0, maxBlocks);
  };
  const users = changes.users
    .slice(0, maxUsers)
    .map((u) => ({ user: u.user, reachable: cut(u.reachable), blocked: cut(u.blocked) }));
  const bounded: AccessChanges = { users };
  if (changes.everyone) {
    const { except, reachable, blocked } = changes.everyone;
    bounded.everyone = { except: except.slice(0, maxUsers), reachable: cut(reachable), blocked: cut(blocked) };
  }
  const omittedUsers =
    Math.max(0, changes.users.length - maxUsers) +
    Math.max(0, (changes.everyone?.except.length ?? 0) - maxUsers) +
    (changes.omitted?.users ?? 0);
  if (omittedUsers > 0 || omittedBlocks > 0) bounded.omitted = { users: omittedUsers, blocks: omittedBlocks };
  return bounded;
}
