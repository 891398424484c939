/**
 * The access delta's regions: changed cells grouped by the rules that decide them on each side
 * (in order of first appearance), each group written as blocks with those two rules. A group's
 * regions depend on its cells alone, so a group that many devices share is written once. Pure.
 */
import type { PacketCell } from './changes.js';
import { addressCount, CidrTexts, exceptOfRanged, rangedBlocksOf, type RangedBlock } from './delta-blocks.js';
import type { DeltaRegion, DeltaRule } from './delta.js';
import type { CompiledRule } from './model.js';
import type { Decider } from './partition.js';

const PORTS_OF_ALL = 2n * 65536n + 1n;

/** A changed part: the cell and what decides it before and after. */
export interface ChangedCell extends PacketCell {
  before: Decider | null;
  after: Decider | null;
  accept: boolean;
}

/** What a group is keyed by on one side: the deciding rule, or null (no rule: the chain policy, the server's own address, no tunnel). */
export type GroupKey = CompiledRule | null;

export const keyOf = (d: Decider | null): GroupKey => (d === null || d.kind !== 'rule' ? null : d.rule);

/**
 * Cells of one family decided by the same rules on each side; `regions`, once written, are reused.
 * With `pieces`, the group is those groups in turn (its `cells` unused): parts of a large group
 * that several devices share, and the part that is a device's own.
 */
export interface CellGroup {
  before: Decider | null;
  after: Decider | null;
  cells: PacketCell[];
  regions?: DeltaRegion[];
  pieces?: CellGroup[];
}

/**
 * Runs of groups that come one after the other in many devices' lists (what a new device of any
 * user reaches outside its own rules), each written as one part: keyed by the run's first group.
 */
export type GroupRuns = Map<CellGroup, { groups: CellGroup[]; regions?: DeltaRegion[] }>;

export function cellOf(c: PacketCell): PacketCell {
  return { family: c.family, cls: c.cls, a0: c.a0, a1: c.a1, p0: c.p0, p1: c.p1 };
}

/** Groups of (before, after) keys in order of first appearance, for joining lists of groups. */
export class GroupOrder<T extends { before: Decider | null; after: Decider | null }> {
  readonly list: { first: T; parts: T[] }[] = [];
  readonly #byKey = new Map<GroupKey, Map<GroupKey, { first: T; parts: T[] }>>();

  /** The entry of `item`'s keys, made (at the end) when new. */
  entry(item: T): { first: T; parts: T[] } {
    const b = keyOf(item.before);
    let inner = this.#byKey.get(b);
    if (!inner) this.#byKey.set(b, (inner = new Map()));
    const a = keyOf(item.after);
    let entry = inner.get(a);
    if (!entry) {
      inner.set(a, (entry = { first: item, parts: [] }));
      this.list.push(entry);
    }
    return entry;
  }
}

/** Cells grouped by the rules deciding them on each side, in order of first appearance. */
export function groupCells(cells: readonly ChangedCell[]): CellGroup[] {
  const order = new GroupOrder<ChangedCell>();
  const groups = new Map<{ first: ChangedCell; parts: ChangedCell[] }, CellGroup>();
  for (const cell of cells) {
    const entry = order.entry(cell);
    let group = groups.get(entry);
    if (!group) groups.set(entry, (group = { before: cell.before, after: cell.after, cells: [] }));
    group.cells.push(cellOf(cell));
  }
  return [...groups.values()];
}

export function ruleOf(decider: Decider | null): DeltaRule | null {
  if (decider === null || decider.kind !== 'rule') return null;
  const rule = decider.rule.rule;
  return {
    user: rule.owner,
    action: rule.action,
    destination: rule.destination,
    port_type: rule.port_type,
    port_range: rule.port_range,
    ...(rule.source ? { file: rule.source.file, line: rule.source.line } : {}),
    ...(rule.id !== undefined && !rule.source ? { id: rule.id } : {}),
  };
}

/** Address × port pairs of a block: its addresses times its ports (one for a protocol without ports). */
function sizeOfBlock(ranged: RangedBlock): bigint {
  const { block } = ranged;
  const addresses = addressCount(ranged);
  if (block.protocol === 'all') return addresses * PORTS_OF_ALL;
  if (block.protocol === 'other') return addresses;
  let ports = 0n;
  for (const part of (block.ports ?? '').split(', ')) {
    const [lo, hi] = part.split('-').map(Number);
    ports += BigInt((hi ?? lo!) - lo! + 1);
  }
  return addresses * ports;
}

/** A group's cells as regions with the rules deciding them on each side (written once per group). */
export function regionsOfGroup(group: CellGroup, texts: CidrTexts): DeltaRegion[] {
  if (group.regions) return group.regions;
  if (group.pieces) return (group.regions = group.pieces.flatMap((piece) => regionsOfGroup(piece, texts)));
  const out: DeltaRegion[] = [];
  for (const ranged of rangedBlocksOf(group.cells, texts)) {
    // The same addresses as one block with holes, where that is shorter to read (as `reach` does).
    const except = exceptOfRanged(ranged, texts);
    out.push({
      ...ranged.block,
      ...(except ? { except } : {}),
      before: ruleOf(group.before),
      after: ruleOf(group.after),
      address_ports: sizeOfBlock(ranged).toString(),
    });
  }
  return (group.regions = out);
}

/**
 * The regions of the groups of each family (IPv4's first), as one list in parts: a group whose
 * rules appear in both families is one, at the place of its first; its blocks are those of each
 * family in turn (blocks never join across families). Each part is a list of regions that other
 * devices' lists may hold too (the same array): a run of `runs`, a group, or a piece of a group.
 * The parts joined are the list.
 */
export function partsOfFamilies(
  families: readonly (readonly CellGroup[])[],
  texts: CidrTexts,
  runs: GroupRuns,
): DeltaRegion[][] {
  const order = new GroupOrder<CellGroup>();
  for (const groups of families) for (const group of groups) order.entry(group).parts.push(group);
  const list: CellGroup[] = [];
  for (const { parts } of order.list) for (const part of parts) list.push(part);
  const out: DeltaRegion[][] = [];
  for (let i = 0; i < list.length; i++) {
    const run = runs.get(list[i]!);
    if (run && run.groups.every((g, k) => list[i + k] === g)) {
      out.push((run.regions ??= run.groups.flatMap((g) => regionsOfGroup(g, texts))));
      i += run.groups.length - 1;
      continue;
    }
    const group = list[i]!;
    if (group.pieces) for (const piece of group.pieces) out.push(regionsOfGroup(piece, texts));
    else out.push(regionsOfGroup(group, texts));
  }
  return out;
}

/** Changed cells as regions, grouped by the rules deciding them on each side. */
export function regionsOfCells(cells: readonly ChangedCell[]): DeltaRegion[] {
  const texts = new CidrTexts();
  return groupCells(cells).flatMap((g) => regionsOfGroup(g, texts));
}
