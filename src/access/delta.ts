/**
 * The access delta: for every (user, device), the packets it reaches after a change that it could
 * not reach before (gained) and those it reached and no longer does (lost), exactly (interval
 * arithmetic over addresses and ports, never sampling), each part with the rules that decide it on
 * either side. The base of `netform check no-new-access` and of a plan's `access_delta`
 * (schemas/access-delta.schema.json). Pure.
 *
 * A device that keeps its tunnel in a family can change verdict only where a changed rule is (every
 * other packet meets the same rules on both sides), so only there is it compared. A device (or a
 * whole user) that has no tunnel in a family before and has one after gains everything it reaches
 * there (the server's own addresses included: they are never filtered); the reverse loses
 * everything. A kept tunnel never gains or loses the server's own addresses.
 */
import type { IpFamily } from '../model/net.js';
import { mergePortRanges, type AccessBlock, type ClassIndex } from './changes.js';
import type { DeltaSides } from './compared.js';
import { CidrTexts } from './delta-blocks.js';
import { FamilyBaseline, type Sharing } from './delta-family.js';
import {
  cellOf,
  groupCells,
  partsOfFamilies,
  regionsOfCells,
  type CellGroup,
  type ChangedCell,
  type GroupRuns,
} from './delta-groups.js';
import { recordParts, sizeOfParts } from './delta-sets.js';
import { CompiledRules } from './evaluate.js';
import type { AccessModel, AccessRule, AccessUser, CompiledRule } from './model.js';
import { decideRegion, MAX_PORT, type Decider, type Region } from './partition.js';
import { hasAddress } from './reach.js';
import { RuleIndex } from './rule-index.js';

/**
 * The version of the delta's shape (schemas/access-delta.schema.json): a new member keeps it, a
 * changed meaning bumps it. 2: the regions are stated once in `region_sets`, entries refer to them
 * (version 1 listed every entry's regions in it; delta-sets.ts reads both).
 */
export const ACCESS_DELTA_VERSION = 2;

/** A rule as the delta names it: what it says, and where it is declared or its id on the server. */
export interface DeltaRule {
  /** The owner's email, or null for a global rule. */
  user: string | null;
  action: 'accept' | 'drop';
  destination: string;
  port_type: 'tcp' | 'udp' | null;
  port_range: string | null;
  file?: string;
  line?: number;
  /** The live rule's id, for a rule no file declares. */
  id?: string;
}

/** Packets of one family: address blocks × a protocol × ports, with what decides them on each side. */
export interface DeltaRegion extends AccessBlock {
  /** The rule deciding these packets before the change; null: none (the chain policy accepts, or there was no tunnel). */
  before: DeltaRule | null;
  /** The rule deciding them after; null: none (the chain policy accepts). */
  after: DeltaRule | null;
  /** How many (address, port) pairs: a protocol without ports counts one port, `all` 2 × 65,536 + 1. */
  address_ports: string;
}

/** What one user's devices (those with the same change) gain and lose. */
export interface DeviceDelta {
  user: string;
  devices: string[];
  /** Per family where it changes: `kept` (a tunnel before and after), `new` (none before), `gone` (none after). */
  tunnel: { 4?: TunnelChange; 6?: TunnelChange };
  gained: DeltaRegion[];
  lost: DeltaRegion[];
}

export type TunnelChange = 'kept' | 'new' | 'gone';

export interface BlastRadius {
  /** Users with a device that gains or loses anything. */
  users_affected: number;
  devices_affected: number;
  /** Summed over every (user, device): address × port pairs. Decimal strings (IPv6 is large). */
  gained: { users: number; devices: number; address_ports: string };
  lost: { users: number; devices: number; address_ports: string };
  /** Users who become admins, or stop being admins (new and removed admins included). */
  admins_gained: string[];
  admins_lost: string[];
}

/**
 * The delta in memory, each entry's regions listed in it (the shape of version 1, whatever
 * `version` says); accessDeltaDocument (delta-sets.ts) writes it as documents carry it.
 */
export interface AccessDelta {
  version: number;
  /** Which two states were compared (codes; JSON shows them in words: src/views/ops-compared.ts). */
  compared: DeltaSides;
  entries: DeviceDelta[];
  blast_radius: BlastRadius;
}

export interface DeltaInput {
  before: AccessModel;
  after: AccessModel;
  /** Admins (emails in normal form) on each side, for the blast radius; empty when unknown. */
  admins?: { before: ReadonlySet<string>; after: ReadonlySet<string> };
  compared: DeltaSides;
  /** How whole families are shared between devices (tests set small sizes). */
  sharing?: Sharing;
}

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

const accepts = (d: Decider | null): boolean => d !== null && (d.kind !== 'rule' || d.rule.rule.action === 'accept');

/** One side's rules for one user, in evaluation order. */
interface Side {
  own: CompiledRule[];
  global: CompiledRule[];
  server: Set<bigint>;
  /** The global rules indexed by address (each user's compare reads only those a region meets). */
  index?: RuleIndex;
}

function meets(rule: CompiledRule, region: Region): boolean {
  return rule.family === region.family && rule.end >= region.a0 && rule.start <= region.a1;
}

function within(side: Side, region: Region): Side {
  return {
    own: side.own.filter((r) => meets(r, region)),
    global: side.index
      ? side.index.meeting(region.a0, region.a1).filter((r) => r.family === region.family)
      : side.global.filter((r) => meets(r, region)),
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

function serverValues(rules: CompiledRules, family: IpFamily): Set<bigint> {
  const out = new Set<bigint>();
  for (const key of rules.serverAddresses)
    if (key.startsWith(`${family}:`)) out.add(BigInt(key.slice(key.indexOf(':') + 1)));
  return out;
}

/** The delta of every (user, device) from one access model to another. */
export function computeAccessDelta(input: DeltaInput): AccessDelta {
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
  type Parts = { gained: DeltaRegion[][]; lost: DeltaRegion[][] };
  const shared = new Map<string, Parts>();
  const sharedRuleless = new Map<string, Parts>();
  const ownMeetsDirty = (key: string): boolean =>
    [rulesBefore, rulesAfter].some((rules) =>
      (rules.byOwner.get(key) ?? []).some((r) => globalDirty.some((region) => meets(r, region))),
    );
  // Each side's global rules and server addresses per family, and its whole families, made once.
  const sides = new Map<
    CompiledRules,
    Map<IpFamily, { global: CompiledRule[]; server: Set<bigint>; index: RuleIndex }>
  >();
  const commonOf = (rules: CompiledRules, family: IpFamily) => {
    let byFamily = sides.get(rules);
    if (!byFamily) sides.set(rules, (byFamily = new Map()));
    let common = byFamily.get(family);
    if (!common) {
      const global = (rules.byOwner.get(null) ?? []).filter((r) => r.family === family);
      const index = new RuleIndex(global);
      byFamily.set(family, (common = { global, server: serverValues(rules, family), index }));
    }
    return common;
  };
  const sideOf = (rules: CompiledRules, user: string, family: IpFamily): Side => ({
    own: (rules.byOwner.get(user) ?? []).filter((r) => r.family === family),
    ...commonOf(rules, family),
  });
  const baselines = new Map<CompiledRules, Map<IpFamily, FamilyBaseline>>();
  const texts = new CidrTexts();
  const runs: GroupRuns = new Map();
  const wholeFamily = (rules: CompiledRules, user: string, family: IpFamily, gained: boolean): CellGroup[] => {
    let byFamily = baselines.get(rules);
    if (!byFamily) baselines.set(rules, (byFamily = new Map()));
    let baseline = byFamily.get(family);
    if (!baseline) {
      const { global, server } = commonOf(rules, family);
      byFamily.set(family, (baseline = new FamilyBaseline(family, global, server, runs, input.sharing)));
    }
    return baseline.groupsFor(sideOf(rules, user, family).own, gained);
  };
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
    const mine = new Map<string, Parts>();
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
        // Per family in turn (IPv4 first), the groups it gains and loses; joined as one list each.
        const gained: CellGroup[][] = [];
        const lost: CellGroup[][] = [];
        for (const family of [4, 6] as IpFamily[]) {
          const change = tunnel[family];
          if (change === 'kept') {
            const dirty = own.length === 0 ? globalDisjoint[family] : disjoint([...globalDirty, ...own], family);
            const cells = compareSides(dirty, sideOf(rulesBefore, key, family), sideOf(rulesAfter, key, family));
            gained.push(groupCells(cells.filter((c) => c.accept)));
            lost.push(groupCells(cells.filter((c) => !c.accept)));
          } else if (change === 'new') gained.push(wholeFamily(rulesAfter, key, family, true));
          else if (change === 'gone') lost.push(wholeFamily(rulesBefore, key, family, false));
        }
        delta = { gained: partsOfFamilies(gained, texts, runs), lost: partsOfFamilies(lost, texts, runs) };
        cache.set(signature, delta);
      }
      if (delta.gained.every((p) => p.length === 0) && delta.lost.every((p) => p.length === 0)) continue;
      const grouped = byChange.get(signature);
      if (grouped) grouped.devices.push(name);
      else {
        const entry: DeviceDelta = {
          user: (a ?? b)!.email,
          devices: [name],
          tunnel,
          gained: joined(delta.gained),
          lost: joined(delta.lost),
        };
        recordParts(entry, delta);
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

/** Parts joined in order as one list (as flat() does, copied into a list of the final length). */
function joined(parts: readonly DeltaRegion[][]): DeltaRegion[] {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Array<DeltaRegion>(length);
  let at = 0;
  for (const part of parts) for (const region of part) out[at++] = region;
  return out;
}

/** The devices of a user that have a tunnel (none for a disabled user). */
function tunnelDevices(user: AccessUser | undefined): AccessUser['devices'] {
  return user === undefined || user.noTunnel ? [] : user.devices;
}

const pickGained = (e: DeviceDelta) => e.gained;
const pickLost = (e: DeviceDelta) => e.lost;

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
      size += sizeOfParts(entry, pick === pickGained) * BigInt(entry.devices.length);
    }
    return { users: users.size, devices, address_ports: size.toString() };
  };
  const before = admins?.before ?? new Set<string>();
  const after = admins?.after ?? new Set<string>();
  return {
    users_affected: new Set(entries.map((e) => e.user)).size,
    devices_affected: entries.reduce((n, e) => n + e.devices.length, 0),
    gained: side(pickGained),
    lost: side(pickLost),
    admins_gained: [...after].filter((u) => !before.has(u)).sort(),
    admins_lost: [...before].filter((u) => !after.has(u)).sort(),
  };
}

/**
 * Every (user, device) that reaches some packet of `region` in a model, with the parts it reaches
 * and the rule that decides each (`after`; null: no rule matches, the chain policy accepts), the
 * server's own addresses left out; users for whom `skip` is true are not evaluated.
 */
export function reachingInto(model: AccessModel, region: Region, skip: (email: string) => boolean): DeviceDelta[] {
  const rules = new CompiledRules(model);
  const { family } = region;
  const server = serverValues(rules, family);
  const global = (rules.byOwner.get(null) ?? []).filter((r) => meets(r, region));
  let baseline: DeltaRegion[] | undefined;
  const entries: DeviceDelta[] = [];
  for (const user of model.users.values()) {
    if (skip(user.email)) continue;
    const devices = tunnelDevices(user).filter((d) => hasAddress(d, family));
    if (devices.length === 0) continue;
    const own = (rules.byOwner.get(user.key) ?? []).filter((r) => meets(r, region));
    const reached = (): DeltaRegion[] =>
      regionsOfCells(
        decideRegion(own, global, region, server, true)
          .filter((c) => c.decider.kind !== 'server' && accepts(c.decider))
          .map((c) => ({ ...cellOf(c), before: null, after: c.decider, accept: true })),
      );
    const gained = own.length === 0 ? (baseline ??= reached()) : reached();
    if (gained.length === 0) continue;
    entries.push({
      user: user.email,
      devices: devices.map((d) => d.name),
      tunnel: { [family]: 'kept' },
      gained,
      lost: [],
    });
  }
  return entries;
}
