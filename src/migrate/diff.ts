/**
 * The exact difference between two reaches of one user (0.7.36 and 1.x), as address blocks ×
 * protocol × ports, each with the code of its cause and one packet of it. Interval arithmetic
 * over the segments of both sides and the labelled space, never sampling. Pure.
 */
import { exceptForm, rangeToCidrs } from '../access/changes.js';
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

type Key = string;
interface Bucket {
  code: MigrateCode;
  protocol: 'tcp' | 'udp' | 'icmp' | 'other';
  ports?: Ranges;
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

/** What `before` reaches and `after` does not (lost), and the reverse (gained), in one family. */
export function differenceOf(
  before: readonly Segment[],
  after: readonly Segment[],
  space: readonly SpaceSegment[],
  family: IpFamily,
  causes: Causes,
): Difference {
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
  return { lost: entriesOf(lost, family), gained: entriesOf(gained, family) };
}

const FULL = `0-${MAX_PORT}`;

function entriesOf(buckets: Map<Key, Bucket>, family: IpFamily): DiffEntry[] {
  const list = [...buckets.values()];
  const rangesKey = (b: Bucket) => b.ranges.map(([x, y]) => `${x}-${y}`).join(',');
  const out: DiffEntry[] = [];
  const used = new Set<Bucket>();
  // Every protocol and port over the same blocks for one cause reads as one entry.
  for (const tcp of list) {
    if (tcp.protocol !== 'tcp' || !tcp.ports || portsText(tcp.ports) !== FULL) continue;
    const key = rangesKey(tcp);
    const same = (protocol: Bucket['protocol'], full: boolean) =>
      list.find(
        (b) =>
          b.code === tcp.code &&
          b.protocol === protocol &&
          (!full || (b.ports && portsText(b.ports) === FULL)) &&
          rangesKey(b) === key,
      );
    const udp = same('udp', true);
    const icmp = same('icmp', false);
    const other = same('other', false);
    if (!udp || !icmp || !other) continue;
    for (const b of [tcp, udp, icmp, other]) used.add(b);
    out.push(entryOf({ code: tcp.code, protocol: 'tcp', ranges: tcp.ranges }, family, 'all'));
  }
  for (const b of list) if (!used.has(b)) out.push(entryOf(b, family, b.protocol));
  return out.sort((x, y) =>
    (x.code + x.protocol + (x.ports ?? '')).localeCompare(y.code + y.protocol + (y.ports ?? '')),
  );
}

/** At most this many CIDR blocks are listed per difference; `addresses_total` counts them all. */
export const MAX_LISTED_BLOCKS = 20;

function entryOf(bucket: Bucket, family: IpFamily, protocol: DiffEntry['protocol']): DiffEntry {
  const addresses: string[] = [];
  let total = 0;
  for (const [a0, a1] of bucket.ranges) {
    if (addresses.length >= MAX_LISTED_BLOCKS) {
      total += countCidrs(family, a0, a1);
      continue;
    }
    const cidrs = rangeToCidrs(family, a0, a1);
    total += cidrs.length;
    addresses.push(...cidrs.slice(0, MAX_LISTED_BLOCKS - addresses.length));
  }
  const first = formatAddress(family, bucket.ranges[0]![0]);
  const entry: DiffEntry = {
    code: bucket.code,
    family,
    protocol,
    addresses,
    example: exampleOf(first, protocol, bucket.ports),
  };
  if (bucket.ports && protocol !== 'all') entry.ports = portsText(bucket.ports);
  if (total > addresses.length) {
    entry.addresses_total = total;
    const last = bucket.ranges[bucket.ranges.length - 1]![1];
    entry.within = enclosing(family, bucket.ranges[0]![0], last);
  } else {
    const except = exceptForm(family, addresses);
    if (except) entry.except = except;
  }
  return entry;
}

/** How many CIDR blocks [a0, a1] takes, without writing them. */
function countCidrs(family: IpFamily, a0: bigint, a1: bigint): number {
  const bits = family === 4 ? 32n : 128n;
  let n = 0;
  let start = a0;
  while (start <= a1) {
    let size = 0n;
    while (size < bits && start % (1n << (size + 1n)) === 0n && start + (1n << (size + 1n)) - 1n <= a1) size++;
    start += 1n << size;
    n++;
  }
  return n;
}

/** The smallest CIDR block holding a0..a1. */
function enclosing(family: IpFamily, a0: bigint, a1: bigint): string {
  const bits = family === 4 ? 32n : 128n;
  let size = 0n;
  while (size < bits && a0 >> size !== a1 >> size) size++;
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
