/**
 * The exact difference between two reaches of one user (0.7.36 and 1.x), as address blocks ×
 * protocol × ports, each with the code of its cause and one packet of it. Interval arithmetic
 * over the segments of both sides and the labelled space, never sampling. Pure.
 */
import { exceptForm } from '../access/changes.js';
import { formatAddress, type IpFamily } from '../model/net.js';
import { minusAccess, MAX_PORT, minusRanges, NO_ACCESS, portsText, type Access, type Ranges } from './access.js';
import type { Segment } from './evaluate-1x.js';
import type { SpaceLabel, SpaceSegment } from './space.js';
import type { DiffEntry, MigrateCode } from './types.js';

/** Codes of a piece that is lost (0.7 accepts, 1.x refuses) or gained, by label and protocol. */
export interface Causes {
  lost(label: SpaceLabel, protocol: 'tcp0' | 'tcp' | 'udp0' | 'udp' | 'icmp' | 'other'): MigrateCode;
  gained(label: SpaceLabel): MigrateCode;
}

/** The usual causes: outside the `ok` space its label; inside it port 0 and other protocols, then `otherwise`. */
export function standardCauses(otherwise: MigrateCode, gained: MigrateCode): Causes {
  return {
    lost(label, protocol) {
      if (label !== 'ok') return label;
      if (protocol === 'tcp0' || protocol === 'udp0') return 'PORT_ZERO';
      if (protocol === 'other') return 'PROTOCOL_LOST';
      return otherwise;
    },
    gained: () => gained,
  };
}

export type Key = string;
export interface Bucket {
  code: MigrateCode;
  protocol: 'tcp' | 'udp' | 'icmp' | 'other';
  ports?: Ranges;
  /** Sorted, disjoint and never adjacent (adjacent pieces are joined as they are added in address order). */
  ranges: [bigint, bigint][];
}

function add(
  buckets: Map<Key, Bucket>,
  code: MigrateCode,
  protocol: Bucket['protocol'],
  ports: Ranges | undefined,
  a0: bigint,
  a1: bigint,
): void {
  const key = `${code}|${protocol}|${ports ? portsText(ports) : ''}`;
  let bucket = buckets.get(key);
  if (!bucket) buckets.set(key, (bucket = { code, protocol, ...(ports ? { ports } : {}), ranges: [] }));
  const last = bucket.ranges[bucket.ranges.length - 1];
  if (last && last[1] + 1n === a0) last[1] = a1;
  else bucket.ranges.push([a0, a1]);
}

function addAccess(
  buckets: Map<Key, Bucket>,
  access: Access,
  a0: bigint,
  a1: bigint,
  code: (protocol: 'tcp0' | 'tcp' | 'udp0' | 'udp' | 'icmp' | 'other') => MigrateCode,
): void {
  for (const proto of ['tcp', 'udp'] as const) {
    const ports = access[proto];
    if (ports.length === 0) continue;
    const zero = ports[0]![0] === 0;
    const rest = zero ? minusRanges(ports, [[0, 0]]) : ports;
    const zeroCode = code(`${proto}0`);
    const restCode = code(proto);
    if (zero && zeroCode === restCode) add(buckets, restCode, proto, ports, a0, a1);
    else {
      if (zero) add(buckets, zeroCode, proto, [[0, 0]], a0, a1);
      if (rest.length > 0) add(buckets, restCode, proto, rest, a0, a1);
    }
  }
  if (access.icmp) add(buckets, code('icmp'), 'icmp', undefined, a0, a1);
  if (access.other) add(buckets, code('other'), 'other', undefined, a0, a1);
}

/** The segment of a sorted list holding `x`, advancing the cursor. */
function at<T extends { a0: bigint; a1: bigint }>(list: readonly T[], cursor: { i: number }, x: bigint): T | undefined {
  while (cursor.i < list.length && list[cursor.i]!.a1 < x) cursor.i++;
  const s = list[cursor.i];
  return s && s.a0 <= x ? s : undefined;
}

export interface Difference {
  lost: DiffEntry[];
  gained: DiffEntry[];
}

/** A difference before it is written: per cause, protocol and ports, the address ranges. */
export interface Buckets {
  lost: Map<Key, Bucket>;
  gained: Map<Key, Bucket>;
}

/**
 * The buckets of what `before` reaches and `after` does not (lost), and the reverse (gained).
 * A point's bucket depends only on what both sides give that point and the space's label there,
 * so the buckets of two reaches that agree outside some blocks agree outside them too.
 */
export function bucketsOf(
  before: readonly Segment[],
  after: readonly Segment[],
  space: readonly SpaceSegment[],
  causes: Causes,
): Buckets {
  const points = new Set<bigint>();
  for (const list of [before, after])
    for (const s of list) {
      points.add(s.a0);
      points.add(s.a1 + 1n);
    }
  const breaks = [...points].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const lost = new Map<Key, Bucket>();
  const gained = new Map<Key, Bucket>();
  const cb = { i: 0 };
  const ca = { i: 0 };
  const cs = { i: 0 };
  for (let i = 0; i + 1 < breaks.length; i++) {
    const x = breaks[i]!;
    const end = breaks[i + 1]! - 1n;
    const b = at(before, cb, x)?.access ?? NO_ACCESS;
    const a = at(after, ca, x)?.access ?? NO_ACCESS;
    if (b === a) continue;
    const minusBA = minusAccess(b, a);
    const minusAB = minusAccess(a, b);
    // A segment may cross labels: split it at the space's boundaries.
    let y = x;
    while (y <= end) {
      const sp = at(space, cs, y)!;
      const z = sp.a1 < end ? sp.a1 : end;
      addAccess(lost, minusBA, y, z, (p) => causes.lost(sp.label, p));
      addAccess(gained, minusAB, y, z, () => causes.gained(sp.label));
      y = z + 1n;
    }
  }
  return { lost, gained };
}

/** What `before` reaches and `after` does not (lost), and the reverse (gained), in one family. */
export function differenceOf(
  before: readonly Segment[],
  after: readonly Segment[],
  space: readonly SpaceSegment[],
  family: IpFamily,
  causes: Causes,
): Difference {
  const { lost, gained } = bucketsOf(before, after, space, causes);
  const views = (buckets: Map<Key, Bucket>) => [...buckets.values()].map((b) => new PlainRanges(b, family));
  return { lost: entriesOf(views(lost), family), gained: entriesOf(views(gained), family) };
}

const FULL = `0-${MAX_PORT}`;

/**
 * A bucket's address ranges as the entry writer reads them: the first and last address, how many
 * CIDR blocks they take, the first few of those blocks, and whether another bucket's ranges are
 * the same. Plain (a list) here; src/migrate/diff-patch.ts has a list patched inside some blocks.
 */
export interface RangesView {
  readonly bucket: Pick<Bucket, 'code' | 'protocol' | 'ports'>;
  first(): bigint;
  last(): bigint;
  total(): number;
  /** The first `n` CIDR blocks, in address order. */
  cidrs(n: number): string[];
  sameRanges(other: RangesView): boolean;
}

export class PlainRanges implements RangesView {
  constructor(
    readonly bucket: Bucket,
    readonly family: IpFamily,
  ) {}
  first(): bigint {
    return this.bucket.ranges[0]![0];
  }
  last(): bigint {
    return this.bucket.ranges[this.bucket.ranges.length - 1]![1];
  }
  total(): number {
    let n = 0;
    for (const [a0, a1] of this.bucket.ranges) n += countCidrs(this.family, a0, a1);
    return n;
  }
  cidrs(n: number): string[] {
    const out: string[] = [];
    for (const [a0, a1] of this.bucket.ranges) {
      if (out.length >= n) break;
      out.push(...firstCidrs(this.family, a0, a1, n - out.length));
    }
    return out;
  }
  sameRanges(other: RangesView): boolean {
    if (!(other instanceof PlainRanges)) return false;
    const a = this.bucket.ranges;
    const b = other.bucket.ranges;
    return a.length === b.length && a.every(([x, y], i) => b[i]![0] === x && b[i]![1] === y);
  }
}

/** The entries of a difference, sorted; every protocol and port over the same blocks for one cause reads as one entry. */
export function entriesOf(list: readonly RangesView[], family: IpFamily): DiffEntry[] {
  const out: DiffEntry[] = [];
  const used = new Set<RangesView>();
  const fullPorts = (v: RangesView) => v.bucket.ports !== undefined && portsText(v.bucket.ports) === FULL;
  for (const tcp of list) {
    if (tcp.bucket.protocol !== 'tcp' || !fullPorts(tcp)) continue;
    const same = (protocol: Bucket['protocol'], full: boolean) =>
      list.find(
        (v) =>
          v.bucket.code === tcp.bucket.code &&
          v.bucket.protocol === protocol &&
          (!full || fullPorts(v)) &&
          tcp.sameRanges(v),
      );
    const udp = same('udp', true);
    const icmp = udp && same('icmp', false);
    const other = icmp && same('other', false);
    if (!udp || !icmp || !other) continue;
    for (const v of [tcp, udp, icmp, other]) used.add(v);
    out.push(entryOf(tcp, family, 'all'));
  }
  for (const v of list) if (!used.has(v)) out.push(entryOf(v, family, v.bucket.protocol));
  return sortEntries(out);
}

/** Entries in their written order: by cause, protocol and ports (each entry has its own). */
export function sortEntries(entries: DiffEntry[]): DiffEntry[] {
  return entries.sort((x, y) =>
    (x.code + x.protocol + (x.ports ?? '')).localeCompare(y.code + y.protocol + (y.ports ?? '')),
  );
}

/** At most this many CIDR blocks are listed per difference; `addresses_total` counts them all. */
export const MAX_LISTED_BLOCKS = 20;

function entryOf(view: RangesView, family: IpFamily, protocol: DiffEntry['protocol']): DiffEntry {
  const { bucket } = view;
  const ports = protocol === 'all' ? undefined : bucket.ports;
  const addresses = view.cidrs(MAX_LISTED_BLOCKS);
  const entry: DiffEntry = {
    code: bucket.code,
    family,
    protocol,
    addresses,
    example: exampleOf(formatAddress(family, view.first()), protocol, ports),
  };
  if (ports) entry.ports = portsText(ports);
  const total = addresses.length < MAX_LISTED_BLOCKS ? addresses.length : view.total();
  if (total > addresses.length) {
    entry.addresses_total = total;
    entry.within = enclosing(family, view.first(), view.last());
  } else {
    const except = exceptForm(family, addresses);
    if (except) entry.except = except;
  }
  return entry;
}

/** How many bits `x` (≥ 0) takes. */
function bitLength(x: bigint): bigint {
  return x === 0n ? 0n : BigInt(x.toString(2).length);
}

/**
 * The size (log2) of the largest CIDR block that starts at `start` and ends at or before `a1`: as
 * large as the alignment of `start` allows, and no larger than what is left of the range.
 */
function blockBits(bits: bigint, start: bigint, a1: bigint): bigint {
  const aligned = start === 0n ? bits : bitLength(start & -start) - 1n;
  const fits = bitLength(a1 - start + 1n) - 1n;
  return aligned < fits ? aligned : fits;
}

/** The first `n` CIDR blocks of [a0, a1] (rangeToCidrs's first `n`, without writing the others). */
export function firstCidrs(family: IpFamily, a0: bigint, a1: bigint, n: number): string[] {
  const bits = family === 4 ? 32n : 128n;
  const out: string[] = [];
  let start = a0;
  while (start <= a1 && out.length < n) {
    const size = blockBits(bits, start, a1);
    out.push(`${formatAddress(family, start)}/${bits - size}`);
    start += 1n << size;
  }
  return out;
}

/** How many CIDR blocks [a0, a1] takes, without writing them. */
export function countCidrs(family: IpFamily, a0: bigint, a1: bigint): number {
  const bits = family === 4 ? 32n : 128n;
  let n = 0;
  let start = a0;
  while (start <= a1) {
    start += 1n << blockBits(bits, start, a1);
    n++;
  }
  return n;
}

/** The smallest CIDR block holding a0..a1. */
function enclosing(family: IpFamily, a0: bigint, a1: bigint): string {
  const bits = family === 4 ? 32n : 128n;
  const size = bitLength(a0 ^ a1);
  return `${formatAddress(family, (a0 >> size) << size)}/${bits - size}`;
}

function exampleOf(address: string, protocol: DiffEntry['protocol'], ports: Ranges | undefined): string {
  switch (protocol) {
    case 'all':
      return `${address} gre`;
    case 'tcp':
    case 'udp':
      return `${address} ${protocol}/${ports?.[0]?.[0] ?? 0}`;
    case 'icmp':
      return `${address} icmp`;
    default:
      return `${address} gre`;
  }
}
