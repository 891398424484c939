/**
 * Where 1.x Resources may go: the address space of each family labelled `ok`, or with the code of
 * the reason it may not (docs/firezone-1x.md §3 and §5): the addresses a Resource may not contain
 * (RESERVED), the 0.7 server's own addresses (SERVER_LOCAL), the 0.7 tunnel networks where the
 * devices are (DEVICE_TO_DEVICE), and everything outside the migrated scope (FULL_TUNNEL: only
 * the Internet Resource reaches it in 1.x). Pure.
 */
import { cidrRange, type IpFamily } from '../model/net.js';
import { FAMILY_END } from '../access/partition.js';

export type SpaceLabel = 'ok' | 'RESERVED' | 'SERVER_LOCAL' | 'DEVICE_TO_DEVICE' | 'FULL_TUNNEL';

/** Blocks a 1.x CIDR or IP Resource may neither contain nor lie in (resource.ex, changeset.ex, device.ex). */
export const RESERVED_BLOCKS = [
  '0.0.0.0/32',
  '127.0.0.0/8',
  '100.64.0.0/10',
  '::/128',
  '::1/128',
  'fd00:2021:1111::/48',
] as const;

/** The default 0.7 tunnel networks (WIREGUARD_IPV4_NETWORK, WIREGUARD_IPV6_NETWORK). */
export const DEFAULT_TUNNEL_BLOCKS = ['10.3.2.0/24', 'fd00::3:2:0/120'] as const;

/**
 * The default migrated scope: the private IPv4 ranges (RFC 1918); every rule's destination is added
 * to it. IPv6 unique local addresses (fc00::/7) are left out by default: around the 0.7 tunnel
 * network inside them they take some two hundred Resources; `--within` adds them.
 */
export const DEFAULT_SCOPE = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'] as const;

export interface SpaceSegment {
  a0: bigint;
  a1: bigint;
  label: SpaceLabel;
}

export interface SpaceInput {
  scope: readonly string[];
  tunnel: readonly string[];
  server: readonly string[];
}

type Interval = [bigint, bigint];

type Parsed = readonly ({ family: IpFamily; start: bigint; end: bigint } | null)[];

function merged(ranges: Parsed, family: IpFamily): Interval[] {
  const list: Interval[] = [];
  for (const range of ranges) if (range && range.family === family) list.push([range.start, range.end]);
  list.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const out: Interval[] = [];
  for (const [a, b] of list) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1n) {
      if (b > last[1]) last[1] = b;
    } else out.push([a, b]);
  }
  return out;
}

function inside(list: Interval[], x: bigint): boolean {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]![1] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo < list.length && list[lo]![0] <= x;
}

/** The whole family, labelled; the first label in SERVER_LOCAL, RESERVED, DEVICE_TO_DEVICE, ok order wins, FULL_TUNNEL elsewhere. */
export function labelSpace(input: SpaceInput, family: IpFamily): SpaceSegment[] {
  return labelSpaces(input)[family];
}

/** Both families, each block read once (a fleet's tunnel addresses are tens of thousands). */
export function labelSpaces(input: SpaceInput): Record<IpFamily, SpaceSegment[]> {
  const parse = (texts: readonly string[]): Parsed => texts.map((text) => cidrRange(text));
  const parsed = [parse(input.server), parse(RESERVED_BLOCKS), parse(input.tunnel), parse(input.scope)] as const;
  return { 4: labelled(parsed, 4), 6: labelled(parsed, 6) };
}

function labelled(parsed: readonly [Parsed, Parsed, Parsed, Parsed], family: IpFamily): SpaceSegment[] {
  const levels: [SpaceLabel, Interval[]][] = [
    ['SERVER_LOCAL', merged(parsed[0], family)],
    ['RESERVED', merged(parsed[1], family)],
    ['DEVICE_TO_DEVICE', merged(parsed[2], family)],
    ['ok', merged(parsed[3], family)],
  ];
  const points = new Set<bigint>([0n, FAMILY_END[family] + 1n]);
  for (const [, list] of levels)
    for (const [a, b] of list) {
      points.add(a);
      points.add(b + 1n);
    }
  const breaks = [...points].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const out: SpaceSegment[] = [];
  for (let i = 0; i + 1 < breaks.length; i++) {
    const a0 = breaks[i]!;
    const a1 = breaks[i + 1]! - 1n;
    const label = levels.find(([, list]) => inside(list, a0))?.[0] ?? 'FULL_TUNNEL';
    const last = out[out.length - 1];
    if (last && last.label === label) last.a1 = a1;
    else out.push({ a0, a1, label });
  }
  return out;
}

/** The label of one address (binary search over the labelled segments). */
export function labelAt(space: readonly SpaceSegment[], x: bigint): SpaceLabel {
  let lo = 0;
  let hi = space.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (space[mid]!.a0 <= x) lo = mid;
    else hi = mid - 1;
  }
  return space[lo]!.label;
}
