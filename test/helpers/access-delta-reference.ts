/**
 * The access delta as it was computed before its whole-family baseline (each device's new or gone
 * family decided in full, its cells grouped afresh): kept verbatim as the reference the optimized
 * computeAccessDelta must equal exactly, regions, order and rules included
 * (test/unit/access/delta-equivalence.test.ts).
 */
import type { IpFamily } from '../../src/model/net.js';
import {
  accessBlocksOf,
  exceptForm,
  mergePortRanges,
  type AccessBlock,
  type ClassIndex,
  type PacketCell,
} from '../../src/access/changes.js';
import { everyPacketRegion } from '../../src/access/destination.js';
import { CompiledRules } from '../../src/access/evaluate.js';
import type { AccessRule, AccessUser, CompiledRule } from '../../src/access/model.js';
import { decideRegion, FAMILY_END, MAX_PORT, type Decider, type Region } from '../../src/access/partition.js';
import { hasAddress } from '../../src/access/reach.js';
import {
  ACCESS_DELTA_VERSION,
  type AccessDelta,
  type BlastRadius,
  type DeltaInput,
  type DeltaRegion,
  type DeltaRule,
  type DeviceDelta,
} from '../../src/access/delta.js';

const PORTS_OF_ALL = 2n * 65536n + 1n;

function textKey(rule: AccessRule): string {
  return `${rule.owner ?? '*'}|${rule.action}|${rule.destination}|${rule.port_type ?? ''}|${rule.port_range ?? ''}`;
}

/** The packets a rule can match, as one region per protocol class. */
function regionsOf(rule: CompiledRule): Region[] {
  const { family, start: a0, end: a1 } = rule;
  if (rule.portType === null)
    return [
      { family, a0, a1, classes: [0], p0: 0, p1: MAX_PORT },
      { family, a0, a1, classes: [1], p0: 0, p1: MAX_PORT },
      { family, a0, a1, classes: [2], p0: 0, p1: MAX_PORT },
    ];
  return [{ family, a0, a1, classes: [rule.portType === 'tcp' ? 0 : 1], p0: rule.low, p1: rule.high }];
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Regions of one family made disjoint: per address interval, the union of their port ranges per class. */
function disjoint(regions: readonly Region[], family: IpFamily): Region[] {
  const mine = regions.filter((r) => r.family === family);
  if (mine.length === 0) return [];
  const points = new Set<bigint>();
  for (const r of mine) {
    points.add(r.a0);
    points.add(r.a1 + 1n);
  }
  const breaks = [...points].sort(compareBig);
  const out: Region[] = [];
  for (let i = 0; i + 1 < breaks.length; i++) {
    const x = breaks[i]!;
    const end = breaks[i + 1]! - 1n;
    const ports: [number, number][][] = [[], [], []];
    for (const r of mine) if (r.a0 <= x && r.a1 >= x) for (const c of r.classes) ports[c]!.push([r.p0, r.p1]);
    for (const [cls, list] of ports.entries()) {
      mergePortRanges(list);
      for (const [p0, p1] of list) out.push({ family, a0: x, a1: end, classes: [cls as ClassIndex], p0, p1 });
    }
  }
  return out;
}

/** A changed part: the cell and what decides it before and after. */
interface ChangedCell extends PacketCell {
  before: Decider | null;
  after: Decider | null;
  accept: boolean;
}

const accepts = (d: Decider | null): boolean => d !== null && (d.kind !== 'rule' || d.rule.rule.action === 'accept');

/** One side's rules for one user, in evaluation order. */
interface Side {
  own: CompiledRule[];
  global: CompiledRule[];
  server: Set<bigint>;
}

function meets(rule: CompiledRule, region: Region): boolean {
  return rule.family === region.family && rule.end >= region.a0 && rule.start <= region.a1;
}

function within(side: Side, region: Region): Side {
  return {
    own: side.own.filter((r) => meets(r, region)),
    global: side.global.filter((r) => meets(r, region)),
    server: side.server,
  };
}

/** The cells of `regions` whose verdict differs between the two sides. */
function compareSides(regions: readonly Region[], before: Side, after: Side): ChangedCell[] {
  const out: ChangedCell[] = [];
  for (const region of regions) {
    const b = within(before, region);
    const a = within(after, region);
    for (const cell of decideRegion(b.own, b.global, region, b.server, true)) {
      const sub: Region = {
        family: cell.family,
        a0: cell.a0,
        a1: cell.a1,
        classes: [cell.cls],
        p0: cell.p0,
        p1: cell.p1,
      };
      for (const next of decideRegion(a.own, a.global, sub, a.server, true)) {
        const was = accepts(cell.decider);
        const now = accepts(next.decider);
        if (was === now || cell.decider.kind === 'server' || next.decider.kind === 'server') continue;
        out.push({ ...cellOf(next), before: cell.decider, after: next.decider, accept: now });
      }
    }
  }
  return out;
}

function cellOf(c: PacketCell): PacketCell {
  return { family: c.family, cls: c.cls, a0: c.a0, a1: c.a1, p0: c.p0, p1: c.p1 };
}

/** Everything a side reaches (`accept`) in a whole family, as changed cells from (or to) no tunnel. */
function wholeFamily(family: IpFamily, side: Side, gained: boolean): ChangedCell[] {
  const region = everyPacketRegion({ family, a0: 0n, a1: FAMILY_END[family] });
  const s = within(side, region);
  return decideRegion(s.own, s.global, region, s.server, true)
    .filter((c) => accepts(c.decider))
    .map((c) => ({
      ...cellOf(c),
      before: gained ? null : c.decider,
      after: gained ? c.decider : null,
      accept: gained,
    }));
}

function serverValues(rules: CompiledRules, family: IpFamily): Set<bigint> {
  const out = new Set<bigint>();
  for (const key of rules.serverAddresses)
    if (key.startsWith(`${family}:`)) out.add(BigInt(key.slice(key.indexOf(':') + 1)));
  return out;
}

function ruleOf(decider: Decider | null): DeltaRule | null {
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
function sizeOfBlock(block: AccessBlock): bigint {
  let addresses = 0n;
  const bits = block.family === 4 ? 32n : 128n;
  for (const cidr of block.addresses) addresses += 1n << (bits - BigInt(cidr.slice(cidr.indexOf('/') + 1)));
  if (block.protocol === 'all') return addresses * PORTS_OF_ALL;
  if (block.protocol === 'other') return addresses;
  let ports = 0n;
  for (const part of (block.ports ?? '').split(', ')) {
    const [lo, hi] = part.split('-').map(Number);
    ports += BigInt((hi ?? lo!) - lo! + 1);
  }
  return addresses * ports;
}

/** Changed cells as regions, grouped by the rules deciding them on each side. */
function regionsOfCells(cells: readonly ChangedCell[]): DeltaRegion[] {
  const groups = new Map<string, { before: Decider | null; after: Decider | null; cells: ChangedCell[] }>();
  const ids = new Map<unknown, number>();
  const idOf = (d: Decider | null) => {
    // The server's own address is reached as where no rule matches: one region with it.
    const key = d === null || d.kind !== 'rule' ? null : d.rule;
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = ids.size));
    return id;
  };
  for (const cell of cells) {
    const key = `${idOf(cell.before)}|${idOf(cell.after)}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { before: cell.before, after: cell.after, cells: [] }));
    group.cells.push(cell);
  }
  const out: DeltaRegion[] = [];
  for (const { before, after, cells: mine } of groups.values()) {
    for (const block of accessBlocksOf(mine.map(cellOf))) {
      // The same addresses as one block with holes, where that is shorter to read (as `reach` does).
      const except = exceptForm(block.family, block.addresses);
      out.push({
        ...block,
        ...(except ? { except } : {}),
        before: ruleOf(before),
        after: ruleOf(after),
        address_ports: sizeOfBlock(block).toString(),
      });
    }
  }
  return out;
}

/** The delta of every (user, device) from one access model to another. */
export function referenceAccessDelta(input: DeltaInput): AccessDelta {
  const { before, after } = input;
  const rulesBefore = new CompiledRules(before);
  const rulesAfter = new CompiledRules(after);
  const afterKeys = new Set(after.rules.map(textKey));
  const beforeKeys = new Set(before.rules.map(textKey));
  const changed = [...rulesBefore.byOwner.values(), ...rulesAfter.byOwner.values()]
    .flat()
    .filter((r) => !(beforeKeys.has(textKey(r.rule)) && afterKeys.has(textKey(r.rule))));
  const globalDirty = changed.filter((r) => r.rule.owner === null).flatMap(regionsOf);
  const ownChanged = new Map<string, Region[]>();
  for (const r of changed) {
    if (r.rule.owner === null) continue;
    let list = ownChanged.get(r.rule.owner);
    if (!list) ownChanged.set(r.rule.owner, (list = []));
    list.push(...regionsOf(r));
  }
  const globalDisjoint = { 4: disjoint(globalDirty, 4), 6: disjoint(globalDirty, 6) };
  // Users without own rules where rules changed share one result per tunnel change.
  const shared = new Map<string, { gained: DeltaRegion[]; lost: DeltaRegion[] }>();
  const sharedRuleless = new Map<string, { gained: DeltaRegion[]; lost: DeltaRegion[] }>();
  const ownMeetsDirty = (key: string): boolean =>
    [rulesBefore, rulesAfter].some((rules) =>
      (rules.byOwner.get(key) ?? []).some((r) => globalDirty.some((region) => meets(r, region))),
    );
  const sideOf = (rules: CompiledRules, user: string, family: IpFamily): Side => ({
    own: (rules.byOwner.get(user) ?? []).filter((r) => r.family === family),
    global: (rules.byOwner.get(null) ?? []).filter((r) => r.family === family),
    server: serverValues(rules, family),
  });
  const entries: DeviceDelta[] = [];
  const userKeys = new Set([...before.users.keys(), ...after.users.keys()]);
  for (const key of userKeys) {
    const b = before.users.get(key);
    const a = after.users.get(key);
    const names = new Set([...tunnelDevices(b).map((d) => d.name), ...tunnelDevices(a).map((d) => d.name)]);
    if (names.size === 0) continue;
    const own = ownChanged.get(key) ?? [];
    const alone = own.length === 0 && !ownMeetsDirty(key);
    // A user without own rules on either side meets the global rules alone, also with a new tunnel.
    const ruleless = !rulesBefore.byOwner.has(key) && !rulesAfter.byOwner.has(key);
    const mine = new Map<string, { gained: DeltaRegion[]; lost: DeltaRegion[] }>();
    const byChange = new Map<string, DeviceDelta>();
    for (const name of [...names].sort()) {
      const db = tunnelDevices(b).find((d) => d.name === name);
      const da = tunnelDevices(a).find((d) => d.name === name);
      const tunnel: DeviceDelta['tunnel'] = {};
      for (const family of [4, 6] as IpFamily[]) {
        const had = db !== undefined && hasAddress(db, family);
        const has = da !== undefined && hasAddress(da, family);
        if (had || has) tunnel[family] = had && has ? 'kept' : has ? 'new' : 'gone';
      }
      const signature = JSON.stringify(tunnel);
      // Where the user has no own rule, a kept tunnel changes as everyone's does.
      const cache = ruleless
        ? sharedRuleless
        : alone && Object.values(tunnel).every((t) => t === 'kept')
          ? shared
          : mine;
      let delta = cache.get(signature);
      if (!delta) {
        const cells: ChangedCell[] = [];
        for (const family of [4, 6] as IpFamily[]) {
          const change = tunnel[family];
          if (change === 'kept') {
            const dirty = own.length === 0 ? globalDisjoint[family] : disjoint([...globalDirty, ...own], family);
            cells.push(...compareSides(dirty, sideOf(rulesBefore, key, family), sideOf(rulesAfter, key, family)));
          } else if (change === 'new') cells.push(...wholeFamily(family, sideOf(rulesAfter, key, family), true));
          else if (change === 'gone') cells.push(...wholeFamily(family, sideOf(rulesBefore, key, family), false));
        }
        delta = {
          gained: regionsOfCells(cells.filter((c) => c.accept)),
          lost: regionsOfCells(cells.filter((c) => !c.accept)),
        };
        cache.set(signature, delta);
      }
      if (delta.gained.length === 0 && delta.lost.length === 0) continue;
      const grouped = byChange.get(signature);
      if (grouped) grouped.devices.push(name);
      else {
        const entry: DeviceDelta = { user: (a ?? b)!.email, devices: [name], tunnel, ...delta };
        byChange.set(signature, entry);
        entries.push(entry);
      }
    }
  }
  return {
    version: ACCESS_DELTA_VERSION,
    compared: input.compared,
    entries,
    blast_radius: blastRadius(entries, input.admins),
  };
}

/** The devices of a user that have a tunnel (none for a disabled user). */
function tunnelDevices(user: AccessUser | undefined): AccessUser['devices'] {
  return user === undefined || user.noTunnel ? [] : user.devices;
}

function blastRadius(entries: readonly DeviceDelta[], admins: DeltaInput['admins']): BlastRadius {
  const side = (pick: (e: DeviceDelta) => DeltaRegion[]) => {
    const users = new Set<string>();
    let devices = 0;
    let size = 0n;
    for (const entry of entries) {
      const regions = pick(entry);
      if (regions.length === 0) continue;
      users.add(entry.user);
      devices += entry.devices.length;
      for (const r of regions) size += BigInt(r.address_ports) * BigInt(entry.devices.length);
    }
    return { users: users.size, devices, address_ports: size.toString() };
  };
  const before = admins?.before ?? new Set<string>();
  const after = admins?.after ?? new Set<string>();
  return {
    users_affected: new Set(entries.map((e) => e.user)).size,
    devices_affected: entries.reduce((n, e) => n + e.devices.length, 0),
    gained: side((e) => e.gained),
    lost: side((e) => e.lost),
    admins_gained: [...after].filter((u) => !before.has(u)).sort(),
    admins_lost: [...before].filter((u) => !after.has(u)).sort(),
  };
}
