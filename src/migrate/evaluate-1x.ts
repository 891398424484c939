/**
 * The 1.x evaluator, written from upstream's source (docs/firezone-1x.md §2 and §4): which of a
 * user's authorised Resources a client routes a packet to, and whether that Resource's filters
 * permit it. With firezone#12684 (`filter` routing) the client prefers a covering Resource whose
 * filter permits the packet, then the longer prefix, then the higher id; older clients (`prefix`
 * routing) take the longest prefix (then the higher id) whatever its filter. Pure.
 */
import type { IpFamily } from '../model/net.js';
import {
  accessOfFilter,
  equalAccess,
  isEmpty,
  NO_ACCESS,
  rangesContain,
  unionAccess,
  type Access,
  type Filter1x,
} from './access.js';

export type Routing = 'filter' | 'prefix';

/** A Resource as a client holds it: its block and filters, and an id for the last tie-break. */
export interface Resource1x {
  id: string;
  family: IpFamily;
  start: bigint;
  end: bigint;
  /** Prefix length of the block. */
  prefix: number;
  filter: Filter1x;
}

export interface Packet1x {
  family: IpFamily;
  address: bigint;
  protocol: 'tcp' | 'udp' | 'icmp' | 'other';
  port?: number;
}

/** Whether a filter list permits a packet (filter_engine.rs: no filters permit everything). */
export function permits(filter: Filter1x, packet: Packet1x): boolean {
  if (filter.kind === 'all') return true;
  switch (packet.protocol) {
    case 'tcp':
      return filter.tcp !== null && packet.port !== undefined && rangesContain(filter.tcp, packet.port);
    case 'udp':
      return filter.udp !== null && packet.port !== undefined && rangesContain(filter.udp, packet.port);
    case 'icmp':
      return filter.icmp;
    default:
      return false;
  }
}

function covers(r: Resource1x, family: IpFamily, address: bigint): boolean {
  return r.family === family && r.start <= address && address <= r.end;
}

/** Greater when `a` is preferred over `b` for the packet (routing_table.rs `matches`, DNS specificity aside). */
function prefer(a: Resource1x, b: Resource1x, packet: Packet1x, routing: Routing): number {
  if (routing === 'filter') {
    const pa = permits(a.filter, packet) ? 1 : 0;
    const pb = permits(b.filter, packet) ? 1 : 0;
    if (pa !== pb) return pa - pb;
  }
  if (a.prefix !== b.prefix) return a.prefix - b.prefix;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The Resource a client routes the packet to, among the authorised ones; undefined when none covers it. */
export function route(resources: readonly Resource1x[], packet: Packet1x, routing: Routing): Resource1x | undefined {
  let best: Resource1x | undefined;
  for (const r of resources) {
    if (!covers(r, packet.family, packet.address)) continue;
    if (!best || prefer(r, best, packet, routing) > 0) best = r;
  }
  return best;
}

export interface Decision1x {
  verdict: 'permit' | 'deny';
  resource?: Resource1x;
}

/** Default deny: a packet passes when the Resource it is routed to permits it. */
export function decide1x(resources: readonly Resource1x[], packet: Packet1x, routing: Routing): Decision1x {
  const chosen = route(resources, packet, routing);
  if (!chosen) return { verdict: 'deny' };
  return { verdict: permits(chosen.filter, packet) ? 'permit' : 'deny', resource: chosen };
}

/** Addresses a0..a1 of one family with what reaches them. */
export interface Segment {
  family: IpFamily;
  a0: bigint;
  a1: bigint;
  access: Access;
}

/**
 * Every packet the authorised Resources let through, as segments of one family (empty ones left
 * out, adjacent equal ones joined). With `filter` routing a packet passes when any covering
 * Resource permits it; with `prefix` routing only the longest covering prefix decides.
 */
export function reach1x(resources: readonly Resource1x[], family: IpFamily, routing: Routing): Segment[] {
  const mine = resources
    .filter((r) => r.family === family)
    .sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
  const points = new Set<bigint>();
  for (const r of mine) {
    points.add(r.start);
    points.add(r.end + 1n);
  }
  const breaks = [...points].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const out: Segment[] = [];
  const active: Resource1x[] = [];
  let next = 0;
  for (let i = 0; i + 1 < breaks.length; i++) {
    const x = breaks[i]!;
    const end = breaks[i + 1]! - 1n;
    let kept = 0;
    for (const r of active) if (r.end >= x) active[kept++] = r;
    active.length = kept;
    while (next < mine.length && mine[next]!.start <= x) {
      if (mine[next]!.end >= x) active.push(mine[next]!);
      next++;
    }
    if (active.length === 0) continue;
    let access: Access = NO_ACCESS;
    if (routing === 'filter') for (const r of active) access = unionAccess(access, accessOfFilter(r.filter));
    else {
      let best = active[0]!;
      for (const r of active) if (r.prefix > best.prefix || (r.prefix === best.prefix && r.id > best.id)) best = r;
      access = accessOfFilter(best.filter);
    }
    pushSegment(out, { family, a0: x, a1: end, access });
  }
  return out;
}

/** Appends a segment, joining it to the last when adjacent with equal access; empty ones are skipped. */
export function pushSegment(out: Segment[], segment: Segment): void {
  if (isEmpty(segment.access)) return;
  const last = out[out.length - 1];
  if (
    last &&
    last.family === segment.family &&
    last.a1 + 1n === segment.a0 &&
    equalAccess(last.access, segment.access)
  ) {
    last.a1 = segment.a1;
    return;
  }
  out.push({ ...segment });
}
