/**
 * An access delta's meaning, whatever its regions' cut: per entry and side (gained, lost), the
 * packets as (family, protocol class, the rules deciding them before and after) → address
 * intervals each with its merged port ranges, adjacent intervals with the same ports joined. Two
 * deltas that cut the same packets into different regions (the shared sets of version 2 cut a large
 * group in chunks) have the same meaning.
 */
import type { AccessDelta, DeltaRegion } from '../../src/access/delta.js';
import { cidrRange } from '../../src/model/net.js';

type Box = { a0: bigint; a1: bigint; p0: number; p1: number };

const FULL: [number, number][] = [[0, 65535]];

function portsOf(region: DeltaRegion): { cls: string; ports: [number, number][] }[] {
  if (region.protocol === 'all')
    return [
      { cls: 'tcp', ports: FULL },
      { cls: 'udp', ports: FULL },
      { cls: 'other', ports: FULL },
    ];
  if (region.protocol === 'other') return [{ cls: 'other', ports: FULL }];
  const ports = region
    .ports!.split(', ')
    .map((part) => part.split('-').map(Number))
    .map(([lo, hi]): [number, number] => [lo!, hi ?? lo!]);
  return [{ cls: region.protocol, ports }];
}

function canonical(boxes: Box[]): string[] {
  const compare = (x: bigint, y: bigint) => (x < y ? -1 : x > y ? 1 : 0);
  const points = [...new Set(boxes.flatMap((b) => [b.a0, b.a1 + 1n]))].sort(compare);
  // A sweep over the points: the boxes covering [points[i], points[i+1]) are those started at or
  // before points[i] and not yet ended (a box ends at a1 + 1, itself one of the points).
  const starts = [...boxes].sort((p, q) => compare(p.a0, q.a0));
  let next = 0;
  let active: Box[] = [];
  const out: { a0: bigint; a1: bigint; ports: string }[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const x = points[i]!;
    active = active.filter((b) => b.a1 >= x);
    while (next < starts.length && starts[next]!.a0 <= x) active.push(starts[next++]!);
    const ranges = active.map((b): [number, number] => [b.p0, b.p1]).sort((p, q) => p[0] - q[0]);
    const merged: [number, number][] = [];
    for (const [p0, p1] of ranges) {
      const last = merged.at(-1);
      if (last && p0 <= last[1] + 1) last[1] = Math.max(last[1], p1);
      else merged.push([p0, p1]);
    }
    if (merged.length === 0) continue;
    const ports = merged.map(([p0, p1]) => `${p0}-${p1}`).join(',');
    const end = points[i + 1]! - 1n;
    const last = out.at(-1);
    if (last && last.ports === ports && last.a1 + 1n === x) last.a1 = end;
    else out.push({ a0: x, a1: end, ports });
  }
  return out.map((r) => `${r.a0}-${r.a1}:${r.ports}`);
}

function sideMeaning(regions: readonly DeltaRegion[]): Record<string, string[]> {
  const byKey = new Map<string, Box[]>();
  for (const region of regions) {
    const ranges = region.addresses.map((text) => cidrRange(text)!);
    const decided = `${JSON.stringify(region.before)}|${JSON.stringify(region.after)}`;
    for (const { cls, ports } of portsOf(region)) {
      const key = `${region.family}|${cls}|${decided}`;
      let boxes = byKey.get(key);
      if (!boxes) byKey.set(key, (boxes = []));
      for (const range of ranges) for (const [p0, p1] of ports) boxes.push({ a0: range.start, a1: range.end, p0, p1 });
    }
  }
  return Object.fromEntries([...byKey.keys()].sort().map((key) => [key, canonical(byKey.get(key)!)]));
}

/** The delta's meaning: its entries (who, tunnel, what is gained and lost) and its blast radius. */
export function deltaMeaning(delta: AccessDelta): unknown {
  return {
    compared: delta.compared,
    entries: delta.entries.map((e) => ({
      user: e.user,
      devices: e.devices,
      tunnel: e.tunnel,
      gained: sideMeaning(e.gained),
      lost: sideMeaning(e.lost),
    })),
    blast_radius: delta.blast_radius,
  };
}
