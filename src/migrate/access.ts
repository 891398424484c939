/**
 * What a set of packets to one address looks like on both sides of the migration: TCP and UDP
 * destination port sets, ICMP, and every other protocol (GRE, ESP, …). 0.7.36 cannot tell ICMP
 * from the other protocols (its rules are tcp, udp or every protocol); 1.x can (its filters are
 * tcp, udp or icmp, and refuse everything else). Also the 1.x filter list of a Resource, and the
 * largest filter inside, or the smallest around, a set of packets (docs/firezone-1x.md §2). Pure.
 */

/** Sorted, disjoint, non-adjacent inclusive port ranges. */
export type Ranges = readonly (readonly [number, number])[];

export const MAX_PORT = 65535;
const ALL_PORTS: Ranges = [[0, MAX_PORT]];

export interface Access {
  tcp: Ranges;
  udp: Ranges;
  icmp: boolean;
  /** Protocols other than TCP, UDP and ICMP. */
  other: boolean;
}

export const NO_ACCESS: Access = { tcp: [], udp: [], icmp: false, other: false };
export const ALL_ACCESS: Access = { tcp: ALL_PORTS, udp: ALL_PORTS, icmp: true, other: true };

/** Sorted and merged (overlapping or adjacent ranges joined). */
export function normalize(list: Iterable<readonly [number, number]>): Ranges {
  const sorted = [...list].map(([a, b]) => [a, b] as [number, number]).sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function unionRanges(a: Ranges, b: Ranges): Ranges {
  return normalize([...a, ...b]);
}

export function minusRanges(a: Ranges, b: Ranges): Ranges {
  const out: [number, number][] = [];
  for (const [lo, hi] of a) {
    let start = lo;
    for (const [blo, bhi] of b) {
      if (bhi < start || blo > hi) continue;
      if (blo > start) out.push([start, blo - 1]);
      start = Math.max(start, bhi + 1);
      if (start > hi) break;
    }
    if (start <= hi) out.push([start, hi]);
  }
  return out;
}

export function intersectRanges(a: Ranges, b: Ranges): Ranges {
  return minusRanges(a, minusRanges(a, b));
}

export function rangesContain(list: Ranges, port: number): boolean {
  return list.some(([lo, hi]) => lo <= port && port <= hi);
}

function isAllPorts(list: Ranges): boolean {
  return list.length === 1 && list[0]![0] === 0 && list[0]![1] === MAX_PORT;
}

export function portsText(list: Ranges): string {
  return list.map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`)).join(',');
}

export function isEmpty(a: Access): boolean {
  return a.tcp.length === 0 && a.udp.length === 0 && !a.icmp && !a.other;
}

export function isAll(a: Access): boolean {
  return isAllPorts(a.tcp) && isAllPorts(a.udp) && a.icmp && a.other;
}

export function accessKey(a: Access): string {
  return `t${portsText(a.tcp)}|u${portsText(a.udp)}|${a.icmp ? 'i' : ''}${a.other ? 'o' : ''}`;
}

export function unionAccess(a: Access, b: Access): Access {
  return {
    tcp: unionRanges(a.tcp, b.tcp),
    udp: unionRanges(a.udp, b.udp),
    icmp: a.icmp || b.icmp,
    other: a.other || b.other,
  };
}

export function minusAccess(a: Access, b: Access): Access {
  return {
    tcp: minusRanges(a.tcp, b.tcp),
    udp: minusRanges(a.udp, b.udp),
    icmp: a.icmp && !b.icmp,
    other: a.other && !b.other,
  };
}

/**
 * A Resource's filter list: `all` (no filters: every packet) or some filters. `tcp`/`udp` null:
 * no filter of that protocol; `[[0, 65535]]`: a filter without ports (every port, 0 included).
 */
export type Filter1x = { kind: 'all' } | { kind: 'some'; tcp: Ranges | null; udp: Ranges | null; icmp: boolean };

export const PERMIT_ALL: Filter1x = { kind: 'all' };

export function accessOfFilter(filter: Filter1x): Access {
  if (filter.kind === 'all') return ALL_ACCESS;
  return { tcp: filter.tcp ?? [], udp: filter.udp ?? [], icmp: filter.icmp, other: false };
}

/** A stable key of a filter list: `all`, or `tcp:22,8000-8999 udp:53 icmp`. */
export function filterKey(filter: Filter1x): string {
  if (filter.kind === 'all') return 'all';
  const parts: string[] = [];
  if (filter.tcp) parts.push(isAllPorts(filter.tcp) ? 'tcp' : `tcp:${portsText(filter.tcp)}`);
  if (filter.udp) parts.push(isAllPorts(filter.udp) ? 'udp' : `udp:${portsText(filter.udp)}`);
  if (filter.icmp) parts.push('icmp');
  return parts.join(' ');
}

/** The filter a set of packets allows exactly, or null when no filter list does. */
function someFilter(tcp: Ranges, udp: Ranges, icmp: boolean): Filter1x | null {
  if (tcp.length === 0 && udp.length === 0 && !icmp) return null;
  return { kind: 'some', tcp: tcp.length > 0 ? tcp : null, udp: udp.length > 0 ? udp : null, icmp };
}

/** Ports a filter with ports may name: 1..65535; a full range is written without ports. */
function expressiblePorts(list: Ranges): Ranges {
  return isAllPorts(list) ? ALL_PORTS : intersectRanges(list, [[1, MAX_PORT]]);
}

/**
 * The largest filter list inside `a` (null: nothing expressible, no Resource): every protocol
 * when `a` is every packet; otherwise the TCP/UDP ports (port 0 only with every other port of
 * its protocol) and ICMP, and no other protocol.
 */
export function filterInside(a: Access): Filter1x | null {
  if (isEmpty(a)) return null;
  if (isAll(a)) return PERMIT_ALL;
  return someFilter(expressiblePorts(a.tcp), expressiblePorts(a.udp), a.icmp);
}

/** The smallest filter list around `a`: every protocol when `a` holds another protocol or port 0 without its whole protocol. */
export function filterAround(a: Access): Filter1x | null {
  if (isEmpty(a)) return null;
  const zero = (list: Ranges) => rangesContain(list, 0) && !isAllPorts(list);
  if (a.other || zero(a.tcp) || zero(a.udp)) return PERMIT_ALL;
  return someFilter(a.tcp, a.udp, a.icmp);
}

/** The union of two filter lists (for overlapping resources of one block). */
export function unionFilters(a: Filter1x, b: Filter1x): Filter1x {
  if (a.kind === 'all' || b.kind === 'all') return PERMIT_ALL;
  const both = (x: Ranges | null, y: Ranges | null) => (x || y ? unionRanges(x ?? [], y ?? []) : null);
  return { kind: 'some', tcp: both(a.tcp, b.tcp), udp: both(a.udp, b.udp), icmp: a.icmp || b.icmp };
}

export function equalAccess(a: Access, b: Access): boolean {
  return accessKey(a) === accessKey(b);
}
