/**
 * The access delta as documents carry it (schemas/access-delta.schema.json, version 2): every list
 * of regions stated once in `region_sets`, each entry's `gained` and `lost` the indexes of the
 * sets that, joined in that order, are its regions. A device whose tunnel is new gains everything
 * it reaches, and devices of users without own rules reach the same: as one list per entry that was
 * devices × reach (413 M characters on the bench fleet, longer than a JavaScript string can be).
 * Sets are the parts the computation shares (delta-groups.ts partsOfFamilies), stated once each,
 * and parts with the same regions are one set. Version 1 (every entry's regions in it) is read
 * too: expandAccessDelta gives either version's entries with their regions listed. Pure.
 */
import type { DeltaSides } from './compared.js';
import type { AccessDelta, BlastRadius, DeltaRegion, DeviceDelta, TunnelChange } from './delta.js';

/** An entry of a document: `gained` and `lost` are indexes into `region_sets`. */
export interface AccessDeltaEntry {
  user: string;
  devices: string[];
  tunnel: { 4?: TunnelChange; 6?: TunnelChange };
  gained: number[];
  lost: number[];
}

/** The delta as `plan --format json`, saved plans and `check --format json` carry it. */
export interface AccessDeltaDocument {
  version: 2;
  compared: DeltaSides;
  region_sets: DeltaRegion[][];
  entries: AccessDeltaEntry[];
  blast_radius: BlastRadius;
}

/** Version 1 as earlier releases wrote it: each entry's regions listed in it. */
export interface AccessDeltaV1 {
  version: 1;
  compared: DeltaSides;
  entries: DeviceDelta[];
  blast_radius: BlastRadius;
}

interface Parts {
  gained: DeltaRegion[][];
  lost: DeltaRegion[][];
}

/** The parts each computed entry's lists are made of (entries made otherwise have none: one part each). */
const partsOfEntry = new WeakMap<DeviceDelta, Parts>();
const sizeOfPart = new WeakMap<DeltaRegion[], bigint>();

export function recordParts(entry: DeviceDelta, parts: Parts): void {
  partsOfEntry.set(entry, parts);
}

function partsOf(entry: DeviceDelta, gained: boolean): DeltaRegion[][] {
  const parts = partsOfEntry.get(entry);
  if (parts) return gained ? parts.gained : parts.lost;
  return [gained ? entry.gained : entry.lost];
}

/** Address × port pairs of an entry's gained (or lost) regions for one device, each part summed once. */
export function sizeOfParts(entry: DeviceDelta, gained: boolean): bigint {
  let size = 0n;
  for (const part of partsOf(entry, gained)) {
    let sum = sizeOfPart.get(part);
    if (sum === undefined) {
      sum = 0n;
      for (const r of part) sum += BigInt(r.address_ports);
      sizeOfPart.set(part, sum);
    }
    size += sum;
  }
  return size;
}

/** The delta as documents carry it: each distinct list of regions once, entries referring to them. */
export function accessDeltaDocument(delta: AccessDelta): AccessDeltaDocument {
  const sets: DeltaRegion[][] = [];
  const byPart = new Map<DeltaRegion[], number>();
  const byText = new Map<string, number>();
  const indexOf = (part: DeltaRegion[]): number => {
    let index = byPart.get(part);
    if (index !== undefined) return index;
    // Parts made apart with the same regions are one set.
    const text = JSON.stringify(part);
    index = byText.get(text);
    if (index === undefined) {
      index = sets.push(part) - 1;
      byText.set(text, index);
    }
    byPart.set(part, index);
    return index;
  };
  const refs = (entry: DeviceDelta, gained: boolean) =>
    partsOf(entry, gained)
      .filter((p) => p.length > 0)
      .map(indexOf);
  const entries = delta.entries.map((e): AccessDeltaEntry => ({
    user: e.user,
    devices: e.devices,
    tunnel: e.tunnel,
    gained: refs(e, true),
    lost: refs(e, false),
  }));
  return {
    version: 2,
    compared: delta.compared,
    region_sets: sets,
    entries,
    blast_radius: delta.blast_radius,
  };
}

/**
 * A document's delta (version 2, or version 1 as earlier releases saved it) with each entry's
 * regions listed in it; a region shared by several entries is the same object in each.
 */
export function expandAccessDelta(doc: AccessDeltaDocument | AccessDeltaV1): AccessDelta {
  if (doc.version === 1) return doc;
  const sets = doc.region_sets;
  const join = (refs: readonly number[]) => refs.flatMap((i) => sets[i] ?? []);
  return {
    version: doc.version,
    compared: doc.compared,
    entries: doc.entries.map((e) => ({ ...e, gained: join(e.gained), lost: join(e.lost) })),
    blast_radius: doc.blast_radius,
  };
}
