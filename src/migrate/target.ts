/**
 * From a user's 0.7 reach to what 1.x should give it: the reach inside the migrated space
 * (space.ts) with each segment's filter list (the largest inside it, or with `--prefer wider` the
 * smallest around it), and the Resources that express such a target: disjoint blocks (default) or
 * overlapping ones for clients that route by filter. Pure.
 */
import { cidrRange, type IpFamily } from '../model/net.js';
import { rangeToCidrs } from '../access/changes.js';
import {
  accessOfFilter,
  filterAround,
  filterInside,
  filterKey,
  normalize,
  unionFilters,
  type Filter1x,
  type Ranges,
} from './access.js';
import { reach1x, type Resource1x, type Segment } from './evaluate-1x.js';
import type { SpaceSegment } from './space.js';

/** A block of the target with its filter list. */
export interface TargetSegment {
  family: IpFamily;
  a0: bigint;
  a1: bigint;
  filter: Filter1x;
  key: string;
}

/** The 0.7 segments inside the `ok` space, each with its 1.x filter list; adjacent equal ones joined. */
export function targetOf(
  segments: readonly Segment[],
  space: readonly SpaceSegment[],
  family: IpFamily,
  prefer: 'narrower' | 'wider',
): TargetSegment[] {
  const out: TargetSegment[] = [];
  let j = 0;
  for (const seg of segments) {
    while (j < space.length && space[j]!.a1 < seg.a0) j++;
    for (let k = j; k < space.length && space[k]!.a0 <= seg.a1; k++) {
      const sp = space[k]!;
      if (sp.label !== 'ok') continue;
      const a0 = sp.a0 > seg.a0 ? sp.a0 : seg.a0;
      const a1 = sp.a1 < seg.a1 ? sp.a1 : seg.a1;
      const filter = prefer === 'wider' ? filterAround(seg.access) : filterInside(seg.access);
      if (!filter) continue;
      const key = filterKey(filter);
      const last = out[out.length - 1];
      if (last && last.key === key && last.a1 + 1n === a0) last.a1 = a1;
      else out.push({ family, a0, a1, filter, key });
    }
  }
  return out;
}

/** A Resource to emit, before it has an address: its block and filter list. */
export interface Piece {
  family: IpFamily;
  cidr: string;
  start: bigint;
  end: bigint;
  prefix: number;
  filter: Filter1x;
}

function piecesOfRange(family: IpFamily, a0: bigint, a1: bigint, filter: Filter1x): Piece[] {
  return rangeToCidrs(family, a0, a1).map((cidr) => {
    const range = cidrRange(cidr)!;
    const prefix = Number(cidr.slice(cidr.lastIndexOf('/') + 1));
    return { family, cidr, start: range.start, end: range.end, prefix, filter };
  });
}

/** Disjoint Resources: every target block as CIDRs, each with its segment's filter list. */
export function disjointPieces(target: readonly TargetSegment[]): Piece[] {
  return target.flatMap((t) => piecesOfRange(t.family, t.a0, t.a1, t.filter));
}

type Atom = { proto: 'tcp' | 'udp'; lo: number; hi: number } | { proto: 'icmp' };

/**
 * Overlapping Resources for clients that route by filter: one Resource per block of each address
 * set sharing a filter atom (a port range, ICMP), with the atoms of every larger set added, so a
 * block's filter is expressible. Falls back to the disjoint Resources when the result would not
 * give exactly the target.
 */
export function overlappingPieces(target: readonly TargetSegment[], family: IpFamily): Piece[] {
  const all = target.filter((t) => t.filter.kind === 'all');
  const some = target.filter((t) => t.filter.kind === 'some');
  const atoms: Atom[] = [];
  for (const proto of ['tcp', 'udp'] as const) {
    const points = new Set<number>();
    for (const t of some) {
      const ranges = t.filter.kind === 'some' ? t.filter[proto] : null;
      for (const [lo, hi] of ranges ?? []) {
        points.add(lo);
        points.add(hi + 1);
      }
    }
    const sorted = [...points].sort((a, b) => a - b);
    for (let i = 0; i + 1 < sorted.length; i++) atoms.push({ proto, lo: sorted[i]!, hi: sorted[i + 1]! - 1 });
  }
  atoms.push({ proto: 'icmp' });
  const sets = new Map<string, { segs: TargetSegment[]; atoms: Atom[] }>();
  for (const atom of atoms) {
    const segs = some.filter((t) => hasAtom(t.filter, atom));
    if (segs.length === 0) continue;
    const key = segs.map((s) => `${s.a0}-${s.a1}`).join(',');
    let entry = sets.get(key);
    if (!entry) sets.set(key, (entry = { segs, atoms: [] }));
    entry.atoms.push(atom);
  }
  const entries = [...sets.values()];
  const byCidr = new Map<string, Piece>();
  const add = (piece: Piece) => {
    const known = byCidr.get(piece.cidr);
    byCidr.set(piece.cidr, known ? { ...known, filter: unionFilters(known.filter, piece.filter) } : piece);
  };
  for (const entry of entries) {
    const filterAtoms = entries.filter((e) => entry.segs.every((s) => e.segs.includes(s))).flatMap((e) => e.atoms);
    const filter = filterOfAtoms(filterAtoms);
    for (const [a0, a1] of joined(entry.segs)) for (const p of piecesOfRange(family, a0, a1, filter)) add(p);
  }
  for (const [a0, a1] of joined(all)) for (const p of piecesOfRange(family, a0, a1, { kind: 'all' })) add(p);
  const pieces = [...byCidr.values()];
  return givesExactly(pieces, target, family) ? pieces : disjointPieces(target);
}

function hasAtom(filter: Filter1x, atom: Atom): boolean {
  if (filter.kind !== 'some') return false;
  if (atom.proto === 'icmp') return filter.icmp;
  const ranges = filter[atom.proto];
  return (ranges ?? []).some(([lo, hi]) => lo <= atom.lo && atom.hi <= hi);
}

function filterOfAtoms(atoms: readonly Atom[]): Filter1x {
  const tcp: [number, number][] = [];
  const udp: [number, number][] = [];
  let icmp = false;
  for (const atom of atoms) {
    if (atom.proto === 'icmp') icmp = true;
    else (atom.proto === 'tcp' ? tcp : udp).push([atom.lo, atom.hi]);
  }
  const list = (r: [number, number][]): Ranges | null => (r.length > 0 ? normalize(r) : null);
  return { kind: 'some', tcp: list(tcp), udp: list(udp), icmp };
}

function joined(segs: readonly TargetSegment[]): [bigint, bigint][] {
  const out: [bigint, bigint][] = [];
  for (const s of [...segs].sort((x, y) => (x.a0 < y.a0 ? -1 : 1))) {
    const last = out[out.length - 1];
    if (last && last[1] + 1n === s.a0) last[1] = s.a1;
    else out.push([s.a0, s.a1]);
  }
  return out;
}

function givesExactly(pieces: readonly Piece[], target: readonly TargetSegment[], family: IpFamily): boolean {
  const resources: Resource1x[] = pieces.map((p) => ({ ...p, id: p.cidr }));
  const got = reach1x(resources, family, 'filter');
  const want: Segment[] = [];
  for (const t of target) {
    const access = accessOfFilter(t.filter);
    const last = want[want.length - 1];
    if (last && last.a1 + 1n === t.a0 && filterKeyOfAccess(last) === filterKeyOfAccess({ access })) last.a1 = t.a1;
    else want.push({ family, a0: t.a0, a1: t.a1, access });
  }
  if (got.length !== want.length) return false;
  return got.every((g, i) => {
    const w = want[i]!;
    return g.a0 === w.a0 && g.a1 === w.a1 && filterKeyOfAccess(g) === filterKeyOfAccess(w);
  });
}

function filterKeyOfAccess(s: { access: Segment['access'] }): string {
  const a = s.access;
  return `${a.tcp.map((r) => r.join('-')).join(',')}|${a.udp.map((r) => r.join('-')).join(',')}|${a.icmp}|${a.other}`;
}
