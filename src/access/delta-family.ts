/**
 * What a device reaches in a whole family, as the access delta's groups, for a device whose tunnel
 * in that family is new (it gains all of it) or gone (it loses all of it). The global rules decide
 * the same packets for every user except inside the blocks of the user's own rules, which come
 * first: the family is decided once with the global rules alone (the baseline, its groups written
 * once), and for each user again only inside its own rules' blocks; the groups those blocks do not
 * touch are the baseline's, written regions included. The same cells, groups and order as deciding
 * the whole family for each user. Pure.
 */
import type { IpFamily } from '../model/net.js';
import type { PacketCell } from './changes.js';
import { keyOf, type CellGroup, type GroupKey } from './delta-groups.js';
import type { CompiledRule } from './model.js';
import { decideRegion, FAMILY_END, MAX_PORT, type DecidedCell, type Decider, type Region } from './partition.js';

const accepts = (d: Decider): boolean => d.kind !== 'rule' || d.rule.rule.action === 'accept';

/** Where a cell comes in decideRegion's order: by address, then class, then port. */
function before(x: PacketCell, y: PacketCell): boolean {
  if (x.a0 !== y.a0) return x.a0 < y.a0;
  if (x.cls !== y.cls) return x.cls < y.cls;
  return x.p0 < y.p0;
}

interface BaseGroup {
  key: GroupKey;
  decider: Decider;
  cells: DecidedCell[];
  /** Written once per direction: gained (a new tunnel) and lost (a gone one). */
  gained?: CellGroup;
  lost?: CellGroup;
}

const asGroup = (decider: Decider, cells: PacketCell[], gained: boolean): CellGroup =>
  gained ? { before: null, after: decider, cells } : { before: decider, after: null, cells };

export class FamilyBaseline {
  readonly #family: IpFamily;
  readonly #global: CompiledRule[];
  readonly #server: ReadonlySet<bigint>;
  /** The accepted cells of the family with the global rules alone, in decideRegion's order. */
  readonly #cells: DecidedCell[];
  readonly #groups: BaseGroup[] = [];
  readonly #groupOf = new Map<GroupKey, BaseGroup>();

  constructor(family: IpFamily, global: CompiledRule[], server: ReadonlySet<bigint>) {
    this.#family = family;
    this.#global = global;
    this.#server = server;
    this.#cells = decideRegion([], global, this.#region(0n, FAMILY_END[family]), server, true).filter((c) =>
      accepts(c.decider),
    );
    for (const cell of this.#cells) {
      const key = keyOf(cell.decider);
      let group = this.#groupOf.get(key);
      if (!group) {
        this.#groupOf.set(key, (group = { key, decider: cell.decider, cells: [] }));
        this.#groups.push(group);
      }
      group.cells.push(cell);
    }
  }

  #region(a0: bigint, a1: bigint): Region {
    return { family: this.#family, a0, a1, classes: [0, 1, 2], p0: 0, p1: MAX_PORT };
  }

  #base(group: BaseGroup, gained: boolean): CellGroup {
    const made = gained ? group.gained : group.lost;
    if (made) return made;
    const out = asGroup(group.decider, group.cells, gained);
    if (gained) group.gained = out;
    else group.lost = out;
    return out;
  }

  /**
   * The groups of what a device of a user whose own rules in this family are `own` (in evaluation
   * order) reaches in the whole family: `gained` with the deciding rule after (a new tunnel), else
   * before (a gone one). Decided anew only inside the own rules' blocks.
   */
  groupsFor(own: readonly CompiledRule[], gained: boolean): CellGroup[] {
    if (own.length === 0) return this.#groups.map((g) => this.#base(g, gained));
    const blocks = mergedBlocks(own);
    const touched = new Set<BaseGroup>();
    const cells = this.#cells;
    for (const [u0, u1] of blocks) {
      for (let i = firstEndingAtOrAfter(cells, u0); i < cells.length && cells[i]!.a0 <= u1; i++)
        touched.add(this.#groupOf.get(keyOf(cells[i]!.decider))!);
    }
    // The touched groups' cells outside the blocks, then what the blocks decide, grouped anew.
    const fresh = new Map<GroupKey, { decider: Decider; cells: PacketCell[]; first: PacketCell }>();
    const add = (decider: Decider, cell: PacketCell) => {
      const key = keyOf(decider);
      const group = fresh.get(key);
      if (!group) fresh.set(key, { decider, cells: [cell], first: cell });
      else {
        group.cells.push(cell);
        if (before(cell, group.first)) group.first = cell;
      }
    };
    for (const group of touched)
      for (const cell of group.cells) for (const piece of outside(cell, blocks)) add(group.decider, piece);
    for (const [u0, u1] of blocks) {
      const global = this.#global.filter((r) => r.end >= u0 && r.start <= u1);
      for (const cell of decideRegion(own, global, this.#region(u0, u1), this.#server, true))
        if (accepts(cell.decider)) add(cell.decider, cell);
    }
    const made = [...fresh.values()].sort((x, y) => (before(x.first, y.first) ? -1 : 1));
    // Merge by first cell: the untouched groups keep the baseline's order and first cells.
    const out: CellGroup[] = [];
    let next = 0;
    for (const group of this.#groups) {
      if (touched.has(group)) continue;
      while (next < made.length && before(made[next]!.first, group.cells[0]!))
        out.push(asGroup(made[next]!.decider, made[next++]!.cells, gained));
      out.push(this.#base(group, gained));
    }
    for (; next < made.length; next++) out.push(asGroup(made[next]!.decider, made[next]!.cells, gained));
    return out;
  }
}

/** The own rules' address blocks, merged where they overlap or touch, in address order. */
function mergedBlocks(own: readonly CompiledRule[]): [bigint, bigint][] {
  const ranges = own
    .map((r): [bigint, bigint] => [r.start, r.end])
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const out: [bigint, bigint][] = [];
  for (const [a0, a1] of ranges) {
    const last = out.at(-1);
    if (last && a0 <= last[1] + 1n) {
      if (a1 > last[1]) last[1] = a1;
    } else out.push([a0, a1]);
  }
  return out;
}

/** The first cell (cells in address order, disjoint address intervals) that ends at or after `a`. */
function firstEndingAtOrAfter(cells: readonly PacketCell[], a: bigint): number {
  let lo = 0;
  let hi = cells.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cells[mid]!.a1 < a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The parts of a cell's addresses outside the blocks (sorted, disjoint), as cells. */
function outside(cell: PacketCell, blocks: readonly [bigint, bigint][]): PacketCell[] {
  let pieces: PacketCell[] | undefined;
  let from = cell.a0;
  for (const [u0, u1] of blocks) {
    if (u1 < from || u0 > cell.a1) continue;
    pieces ??= [];
    if (u0 > from) pieces.push({ ...piece(cell), a0: from, a1: u0 - 1n });
    from = u1 + 1n;
    if (from > cell.a1) break;
  }
  if (pieces === undefined) return [cell];
  if (from <= cell.a1) pieces.push({ ...piece(cell), a0: from, a1: cell.a1 });
  return pieces;
}

function piece(c: PacketCell): PacketCell {
  return { family: c.family, cls: c.cls, a0: c.a0, a1: c.a1, p0: c.p0, p1: c.p1 };
}
