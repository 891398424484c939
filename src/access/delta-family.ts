/**
 * What a device reaches in a whole family, as the access delta's groups, for a device whose tunnel
 * in that family is new (it gains all of it) or gone (it loses all of it). The global rules decide
 * the same packets for every user except inside the blocks of the user's own rules, which come
 * first: the family is decided once with the global rules alone (the baseline, its groups written
 * once), and for each user again only inside its own rules' blocks; the groups those blocks do not
 * touch are the baseline's, written regions included. The same cells, groups and order as deciding
 * the whole family for each user. Pure.
 *
 * What devices share is kept shared, so that the delta states it once (delta-sets.ts): runs of
 * the baseline's groups (GroupRuns), and a large group (the addresses no rule decides, with a hole
 * per rule) in chunks, of which a user's own rules replace only those they touch.
 */
import type { IpFamily } from '../model/net.js';
import type { PacketCell } from './changes.js';
import { keyOf, type CellGroup, type GroupKey, type GroupRuns } from './delta-groups.js';
import type { CompiledRule } from './model.js';
import { RuleIndex } from './rule-index.js';
import { decideRegion, FAMILY_END, MAX_PORT, type DecidedCell, type Decider, type Region } from './partition.js';

const accepts = (d: Decider): boolean => d.kind !== 'rule' || d.rule.rule.action === 'accept';

/** Where a cell comes in decideRegion's order: by address, then class, then port. */
function before(x: PacketCell, y: PacketCell): boolean {
  if (x.a0 !== y.a0) return x.a0 < y.a0;
  if (x.cls !== y.cls) return x.cls < y.cls;
  return x.p0 < y.p0;
}

/** Made once per direction: gained (a new tunnel) and lost (a gone one). */
interface Directed {
  gained?: CellGroup;
  lost?: CellGroup;
}

interface Chunk extends Directed {
  cells: DecidedCell[];
  /** The addresses from the first cell's start to the last end. */
  a0: bigint;
  a1: bigint;
}

interface BaseGroup extends Directed {
  key: GroupKey;
  decider: Decider;
  cells: DecidedCell[];
  /** A large group's cells in address order, cut in chunks (none for a small group). */
  chunks?: Chunk[];
}

/** How the baseline shares: groups of more than `chunkCells` cells are cut in chunks of that many; runs of `runGroups` groups. */
export interface Sharing {
  chunkCells: number;
  runGroups: number;
}

export const DEFAULT_SHARING: Sharing = { chunkCells: 256, runGroups: 64 };

const asGroup = (decider: Decider, cells: PacketCell[], gained: boolean): CellGroup =>
  gained ? { before: null, after: decider, cells } : { before: decider, after: null, cells };

export class FamilyBaseline {
  readonly #family: IpFamily;
  readonly #global: CompiledRule[];
  #index?: RuleIndex;
  readonly #server: ReadonlySet<bigint>;
  /** The accepted cells of the family with the global rules alone, in decideRegion's order. */
  readonly #cells: DecidedCell[];
  readonly #groups: BaseGroup[] = [];
  readonly #groupOf = new Map<GroupKey, BaseGroup>();
  readonly #sharing: Sharing;
  readonly #runs: GroupRuns;
  readonly #runsMade = { gained: false, lost: false };

  constructor(
    family: IpFamily,
    global: CompiledRule[],
    server: ReadonlySet<bigint>,
    runs: GroupRuns,
    sharing: Sharing = DEFAULT_SHARING,
  ) {
    this.#family = family;
    this.#global = global;
    this.#server = server;
    this.#runs = runs;
    this.#sharing = sharing;
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
    const size = sharing.chunkCells;
    for (const group of this.#groups) {
      if (group.cells.length <= size) continue;
      group.chunks = [];
      for (let i = 0; i < group.cells.length; i += size) {
        const cells = group.cells.slice(i, i + size);
        let a1 = cells[0]!.a1;
        for (const c of cells) if (c.a1 > a1) a1 = c.a1;
        group.chunks.push({ cells, a0: cells[0]!.a0, a1 });
      }
    }
  }

  #region(a0: bigint, a1: bigint): Region {
    return { family: this.#family, a0, a1, classes: [0, 1, 2], p0: 0, p1: MAX_PORT };
  }

  #base(group: BaseGroup, gained: boolean): CellGroup {
    return directed(group, gained, () => asGroup(group.decider, group.cells, gained));
  }

  /** The baseline's groups in order, cut in runs (the group no rule decides, in both families, ends a run). */
  #makeRuns(gained: boolean): void {
    if (this.#runsMade[gained ? 'gained' : 'lost']) return;
    this.#runsMade[gained ? 'gained' : 'lost'] = true;
    let run: CellGroup[] = [];
    const close = () => {
      if (run.length > 1) this.#runs.set(run[0]!, { groups: run });
      run = [];
    };
    for (const group of this.#groups) {
      if (group.key === null) {
        close();
        continue;
      }
      run.push(this.#base(group, gained));
      if (run.length === this.#sharing.runGroups) close();
    }
    close();
  }

  /**
   * The groups of what a device of a user whose own rules in this family are `own` (in evaluation
   * order) reaches in the whole family: `gained` with the deciding rule after (a new tunnel), else
   * before (a gone one). Decided anew only inside the own rules' blocks.
   */
  groupsFor(own: readonly CompiledRule[], gained: boolean): CellGroup[] {
    this.#makeRuns(gained);
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
    // A large touched group keeps the chunks no block meets as they are (shared with other users).
    const keptChunks = new Map<GroupKey, CellGroup[]>();
    for (const group of touched) {
      const chunks = group.chunks ?? [{ cells: group.cells, a0: 0n, a1: -1n }];
      const kept: CellGroup[] = [];
      for (const chunk of chunks) {
        if (group.chunks && !meetsBlocks(chunk, blocks)) {
          kept.push(directed(chunk, gained, () => asGroup(group.decider, chunk.cells, gained)));
          const first = chunk.cells[0]!;
          const entry = fresh.get(group.key);
          if (!entry) fresh.set(group.key, { decider: group.decider, cells: [], first });
          else if (before(first, entry.first)) entry.first = first;
        } else for (const cell of chunk.cells) for (const piece of outside(cell, blocks)) add(group.decider, piece);
      }
      if (kept.length > 0) keptChunks.set(group.key, kept);
    }
    for (const [u0, u1] of blocks) {
      const global = (this.#index ??= new RuleIndex(this.#global)).meeting(u0, u1);
      for (const cell of decideRegion(own, global, this.#region(u0, u1), this.#server, true))
        if (accepts(cell.decider)) add(cell.decider, cell);
    }
    const made = [...fresh.entries()].sort(([, x], [, y]) => (before(x.first, y.first) ? -1 : 1));
    const madeGroup = ([key, { decider, cells }]: (typeof made)[number]): CellGroup => {
      const kept = keptChunks.get(key);
      if (!kept) return asGroup(decider, cells, gained);
      const pieces = cells.length > 0 ? [...kept, asGroup(decider, cells, gained)] : kept;
      return { ...asGroup(decider, [], gained), pieces };
    };
    // Merge by first cell: the untouched groups keep the baseline's order and first cells.
    const out: CellGroup[] = [];
    let next = 0;
    for (const group of this.#groups) {
      if (touched.has(group)) continue;
      while (next < made.length && before(made[next]![1].first, group.cells[0]!)) out.push(madeGroup(made[next++]!));
      out.push(this.#base(group, gained));
    }
    for (; next < made.length; next++) out.push(madeGroup(made[next]!));
    return out;
  }
}

/** What `of` made for this direction, made by `make` the first time. */
function directed(of: Directed, gained: boolean, make: () => CellGroup): CellGroup {
  const made = gained ? of.gained : of.lost;
  if (made) return made;
  const out = make();
  if (gained) of.gained = out;
  else of.lost = out;
  return out;
}

/** Whether some block (sorted, disjoint) meets the chunk's addresses. */
function meetsBlocks(chunk: Chunk, blocks: readonly [bigint, bigint][]): boolean {
  let lo = 0;
  let hi = blocks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (blocks[mid]![1] < chunk.a0) lo = mid + 1;
    else hi = mid;
  }
  return lo < blocks.length && blocks[lo]![0] <= chunk.a1;
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
