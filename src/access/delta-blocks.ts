/**
 * Cells as blocks for the access delta, with the address ranges each block covers kept alongside
 * its CIDR text: the same blocks as accessBlocksOf (changes.ts), and the same `except` form as
 * exceptForm, computed from the ranges instead of parsing the CIDR text back. A device whose
 * tunnel is new lists everything it reaches, thousands of blocks: this is the delta's hot path.
 * Pure.
 */
import type { IpFamily } from '../model/net.js';
import { exceptOfRanges, mergePortRanges, rangeToCidrs, type AccessBlock, type PacketCell } from './changes.js';

const MAX_PORT = 65535;

/** A block with the address ranges (in address order) its CIDR blocks cover, and the length of `addresses.join(', ')`. */
export interface RangedBlock {
  block: AccessBlock;
  ranges: [bigint, bigint][];
  textLength: number;
}

/**
 * CIDR text of address ranges, each range written once: the devices of a delta list the same
 * ranges again and again (everything a new device reaches). The lists it returns are shared: read only.
 */
export class CidrTexts {
  readonly #byFamily = { 4: new Map<bigint, Map<bigint, string[]>>(), 6: new Map<bigint, Map<bigint, string[]>>() };

  of(family: IpFamily, a0: bigint, a1: bigint): string[] {
    const starts = this.#byFamily[family];
    let ends = starts.get(a0);
    if (!ends) starts.set(a0, (ends = new Map()));
    let text = ends.get(a1);
    if (!text) ends.set(a1, (text = rangeToCidrs(family, a0, a1)));
    return text;
  }
}

interface Run {
  a0: bigint;
  a1: bigint;
  signature: string;
  ports: [number, number][][];
}

const compareBig = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

function portsOf(active: readonly PacketCell[]): { ports: [number, number][][]; signature: string } {
  const ports: [number, number][][] = [[], [], []];
  for (const c of active) ports[c.cls]!.push([c.p0, c.p1]);
  for (const list of ports) mergePortRanges(list);
  return { ports, signature: ports.map((l) => l.map(([lo, hi]) => `${lo}-${hi}`).join(',')).join('|') };
}

function addRun(runs: Run[], a0: bigint, a1: bigint, active: readonly PacketCell[]): void {
  const { ports, signature } = portsOf(active);
  const last = runs.at(-1);
  if (last && last.signature === signature && last.a1 + 1n === a0) last.a1 = a1;
  else runs.push({ a0, a1, signature, ports });
}

/**
 * Address intervals with the same protocols and ports, joined where adjacent. Cells whose address
 * intervals are equal or disjoint (what one sweep decides) are taken interval by interval; others
 * by a sweep over every cell's bounds.
 */
function runsOf(mine: PacketCell[]): Run[] {
  mine.sort((x, y) => compareBig(x.a0, y.a0));
  const runs: Run[] = [];
  let layered = true;
  for (let i = 1; i < mine.length && layered; i++) {
    const p = mine[i - 1]!;
    const c = mine[i]!;
    layered = (c.a0 === p.a0 && c.a1 === p.a1) || c.a0 > p.a1;
  }
  if (layered) {
    for (let i = 0; i < mine.length;) {
      let j = i + 1;
      while (j < mine.length && mine[j]!.a0 === mine[i]!.a0) j++;
      addRun(runs, mine[i]!.a0, mine[i]!.a1, mine.slice(i, j));
      i = j;
    }
    return runs;
  }
  const points = new Set<bigint>();
  for (const c of mine) {
    points.add(c.a0);
    points.add(c.a1 + 1n);
  }
  const breaks = [...points].sort(compareBig);
  let next = 0;
  let active: PacketCell[] = [];
  for (let i = 0; i + 1 < breaks.length; i++) {
    const x = breaks[i]!;
    while (next < mine.length && mine[next]!.a0 <= x) active.push(mine[next++]!);
    active = active.filter((c) => c.a1 >= x);
    if (active.length > 0) addRun(runs, x, breaks[i + 1]! - 1n, active);
  }
  return runs;
}

function portText(ranges: [number, number][]): string {
  return ranges.map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`)).join(', ');
}

/** Cells as blocks (as accessBlocksOf), each with the ranges it covers. */
export function rangedBlocksOf(cells: readonly PacketCell[], texts: CidrTexts): RangedBlock[] {
  const merged = new Map<string, RangedBlock>();
  const add = (block: AccessBlock, range: [bigint, bigint], length: number) => {
    // Blocks with the same protocol and ports are one block of several address ranges.
    const key = `${block.family}|${block.protocol}|${block.ports ?? ''}`;
    const first = merged.get(key);
    if (!first)
      merged.set(key, { block: { ...block, addresses: [...block.addresses] }, ranges: [range], textLength: length });
    else {
      first.block.addresses.push(...block.addresses);
      first.ranges.push(range);
      first.textLength += 2 + length;
    }
  };
  for (const family of [4, 6] as IpFamily[]) {
    const mine = cells.filter((c) => c.family === family);
    if (mine.length === 0) continue;
    for (const run of runsOf(mine)) {
      const addresses = texts.of(family, run.a0, run.a1);
      const range: [bigint, bigint] = [run.a0, run.a1];
      const length = addresses.reduce((n, a) => n + a.length, 0) + 2 * (addresses.length - 1);
      const [tcp, udp, other] = run.ports as [[number, number][], [number, number][], [number, number][]];
      const full = (list: [number, number][]) => list.length === 1 && list[0]![0] === 0 && list[0]![1] === MAX_PORT;
      if (full(tcp) && full(udp) && other.length > 0) {
        add({ family, addresses, protocol: 'all' }, range, length);
        continue;
      }
      if (tcp.length > 0) add({ family, addresses, protocol: 'tcp', ports: portText(tcp) }, range, length);
      if (udp.length > 0) add({ family, addresses, protocol: 'udp', ports: portText(udp) }, range, length);
      if (other.length > 0) add({ family, addresses, protocol: 'other' }, range, length);
    }
  }
  return [...merged.values()];
}

/** exceptForm (changes.ts) of a ranged block, from its ranges rather than its CIDR text. */
export function exceptOfRanged(
  { block, ranges, textLength }: RangedBlock,
  texts: CidrTexts,
): AccessBlock['except'] | undefined {
  const { family } = block;
  if (block.addresses.length < 3) return undefined;
  const inOrder = ranges.every((r, i) => i === 0 || ranges[i - 1]![0] <= r[0]);
  const sorted = inOrder ? ranges : [...ranges].sort((x, y) => compareBig(x[0], y[0]));
  return exceptOfRanges(family, sorted, (f, a, b) => texts.of(f, a, b), textLength);
}

/** How many addresses a ranged block covers. */
export function addressCount(ranged: RangedBlock): bigint {
  let n = 0n;
  for (const [a0, a1] of ranged.ranges) n += a1 - a0 + 1n;
  return n;
}
