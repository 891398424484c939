/**
 * The reverse questions, exactly (interval arithmetic over addresses and ports, as access changes
 * are): `reach USER`, everything a user's devices reach, and `who-can-reach TO`, every source that
 * reaches a destination, each part with the rule that decides it. Pure functions of an access
 * model (declared or live).
 *
 * A user with no device has no tunnel (nothing reaches anything from it); `EMAIL/*` evaluates the
 * user's rules as any future device of theirs would meet them (with an address in both families).
 */
import { userKey } from '../model/keys.js';
import { parseIpAddress, type IpFamily } from '../model/net.js';
import { rangeToCidrs, RuleIndex, type ClassIndex } from './changes.js';
import { everyPacketRegion } from './destination.js';
import { CompiledRules } from './evaluate.js';
import type { AccessDevice, AccessModel, AccessSettings, AccessUser, CompiledRule } from './model.js';
import type { Parsed } from './notation.js';
import { parseTo } from './notation.js';
import {
  decideRegion,
  FAMILY_END,
  IntervalSet,
  MAX_PORT,
  piecesOf,
  type DecidedCell,
  type ReachPiece,
  type Region,
} from './partition.js';

export const REACH_TARGET_HELP =
  'must be ADDRESS (any protocol and port), ADDRESS/PREFIX (any part of the block), ADDRESS:PORT/tcp, ' +
  'ADDRESS:PORT/udp, ADDRESS/icmp or ADDRESS/other (IPv6 as [ADDRESS]:PORT/tcp)';
export const REACH_SOURCE_HELP =
  "must be a user's email (each of their devices), EMAIL/DEVICE_NAME, or EMAIL/* (as any future device of theirs)";

/** What `who-can-reach` asks about: a region of one family, and how to say it. */
export interface ReachTarget {
  text: string;
  region: Region;
  /** `any protocol and port`, `tcp 22`, `icmp and other protocols without ports`. */
  what: string;
}

/**
 * The `to:` notation of tests and `explain` (notation.ts parseTo): a bare ADDRESS or ADDRESS/PREFIX
 * is every protocol and port to the address or any address of the block (host bits are ignored,
 * as rules do); a packet notation is that packet.
 */
export function parseReachTarget(input: string): Parsed<ReachTarget> {
  const text = input.trim();
  const to = parseTo(text);
  if (!to.ok) {
    const reason = to.message.includes('; ') ? to.message.slice(to.message.indexOf('; ') + 2) : to.message;
    return { ok: false, message: `${REACH_TARGET_HELP}; ${reason}` };
  }
  if (to.value.kind === 'every')
    return { ok: true, value: { text, region: everyPacketRegion(to.value), what: 'any protocol and port' } };
  const { destination, protocol, port } = to.value.packet;
  const at = (classes: ClassIndex[], p0: number, p1: number): Region => ({
    family: destination.family,
    a0: destination.value,
    a1: destination.value,
    classes,
    p0,
    p1,
  });
  if (protocol === 'tcp' || protocol === 'udp')
    return {
      ok: true,
      value: { text, region: at([protocol === 'tcp' ? 0 : 1], port!, port!), what: `${protocol} ${port}` },
    };
  return { ok: true, value: { text, region: at([2], 0, MAX_PORT), what: `${protocol} (a protocol without ports)` } };
}

/** Who `reach` asks about: a user's devices, one device, or any future device of the user. */
export interface ReachSource {
  user: string;
  device?: string;
  future?: boolean;
}

export function parseReachSource(input: string): Parsed<ReachSource> {
  const text = input.trim();
  const at = text.indexOf('@');
  if (at <= 0) return { ok: false, message: `${REACH_SOURCE_HELP}; "${text}" has no @` };
  const slash = text.indexOf('/', at);
  if (slash === -1) return { ok: true, value: { user: userKey(text) } };
  const device = text.slice(slash + 1).trim();
  if (device === '' || slash === at + 1) return { ok: false, message: REACH_SOURCE_HELP };
  const user = userKey(text.slice(0, slash));
  return { ok: true, value: device === '*' ? { user, future: true } : { user, device } };
}

function serverValues(settings: AccessSettings, family: IpFamily): Set<bigint> {
  const out = new Set<bigint>();
  for (const text of settings.serverAddresses) {
    const parsed = parseIpAddress(text);
    if (parsed && parsed.family === family) out.add(parsed.value);
  }
  return out;
}

/** Whether a device has a tunnel address in a family (a declared device without a pinned one is assumed to). */
export function hasAddress(device: AccessDevice, family: IpFamily): boolean {
  return (family === 4 ? device.ipv4 : device.ipv6) !== null;
}

// ---------------------------------------------------------------------------------------------
// reach USER

export interface ReachFamily {
  family: IpFamily;
  /** The devices this applies to (those with an address in the family); `*` for any future device. */
  devices: string[];
  /** The devices without an address in the family: no tunnel for it. */
  without: string[];
  /** Reached by a rule, or as the server's own address (`by: server`). */
  reached: ReachPiece[];
  /** Dropped by a rule. Everything else of the family is reached by default (no rule matches). */
  blocked: ReachPiece[];
}

export interface Reach {
  user: string;
  device?: string;
  future?: boolean;
  /** Why nothing is reached: the user is disabled, or has no device. */
  noTunnel?: string;
  families: ReachFamily[];
}

/** Everything the source's devices reach, per family, with the rule behind each part. */
export function reachOf(model: AccessModel, source: ReachSource, where: 'declared' | 'live'): Parsed<Reach> {
  const user = model.users.get(source.user);
  if (!user)
    return {
      ok: false,
      message: where === 'live' ? `the server has no user ${source.user}` : `no user ${source.user} is declared`,
    };
  let devices: AccessDevice[];
  if (source.future) devices = [{ name: '*' }];
  else if (source.device !== undefined) {
    const device = user.devices.find((d) => d.name === source.device);
    if (!device) {
      const names = user.devices.map((d) => d.name);
      return {
        ok: false,
        message: `user ${user.email} has no device named ${source.device} (${names.length === 0 ? 'it has no device' : `its devices: ${names.join(', ')}`})`,
      };
    }
    devices = [device];
  } else devices = user.devices;
  const result: Reach = { user: user.email, families: [] };
  if (source.device !== undefined) result.device = source.device;
  if (source.future) result.future = true;
  if (user.noTunnel) return { ok: true, value: { ...result, noTunnel: user.noTunnel } };
  if (devices.length === 0)
    return {
      ok: true,
      value: {
        ...result,
        noTunnel: `${user.email} has no device: no tunnel, so nothing is reached (${user.email}/* shows what any future device of theirs would reach)`,
      },
    };
  const rules = new CompiledRules(model);
  const own = rules.byOwner.get(user.key) ?? [];
  const global = rules.byOwner.get(null) ?? [];
  for (const family of [4, 6] as IpFamily[]) {
    const withAddress = devices.filter((d) => hasAddress(d, family)).map((d) => d.name);
    const without = devices.filter((d) => !hasAddress(d, family)).map((d) => d.name);
    const entry: ReachFamily = { family, devices: withAddress, without, reached: [], blocked: [] };
    if (withAddress.length > 0) {
      const cells = decideRegion(
        own,
        global,
        everyPacketRegion({ family, a0: 0n, a1: FAMILY_END[family] }),
        serverValues(model.settings, family),
        false,
      );
      for (const piece of piecesOf(cells)) (piece.verdict === 'accept' ? entry.reached : entry.blocked).push(piece);
    }
    result.families.push(entry);
  }
  return { ok: true, value: result };
}

// ---------------------------------------------------------------------------------------------
// who-can-reach TO

/** Sources with one outcome: one user, or every user without own rules meeting the target. */
export interface WhoEntry {
  /** The users shown (all of them unless bounded). */
  users: string[];
  /** How many users the entry stands for. */
  userCount: number;
  /** How many of their devices (with an address in the target's family). */
  devices: number;
  /** True for the entry of every user without own rules meeting the target. */
  everyoneElse: boolean;
  /** What decides each part of the target for them (accept pieces for `accepted`, drop pieces for `stopped`). */
  pieces: ReachPiece[];
  /**
   * Outside `stopped`: the parts a drop stops for them (where they reach only part of the target),
   * so that each user's line says both what is accepted and what is not.
   */
  dropped: ReachPiece[];
  /** Every packet to the target accepted, none, or some: the verdict `test` and `explain` give for the same source. */
  verdict: 'accept' | 'drop' | 'partial';
  /**
   * For a user whose own rules cover only part of the target: the blocks of the target they cover,
   * where `pieces` apply. Elsewhere the user meets what a user without own rules there does
   * (WhoCanReach.everyoneElse).
   */
  within?: string[];
}

export interface WhoCategory {
  users: number;
  devices: number;
  entries: WhoEntry[];
  /** Users counted but not shown (bounds, or `byDefault` without `all`). */
  omitted: number;
}

export interface NoTunnelSource {
  user: string;
  device?: string;
  reason: string;
}

export interface WhoCanReach {
  target: ReachTarget;
  /** What decides each part of the target for a user without own rules meeting it (accept and drop). */
  everyoneElse: ReachPiece[];
  /** Reach some part of the target by an accept rule. */
  accepted: WhoCategory;
  /** Reach some part only because no rule matches (the chain policy accepts). */
  byDefault: WhoCategory;
  /** Reach only the server's own address in it (never filtered). */
  server: WhoCategory;
  /** Reach no part of it: every part is dropped by a rule. */
  stopped: WhoCategory;
  /** Sources without a tunnel in the target's family: no device, disabled, no address in the family. */
  noTunnel: { count: number; entries: NoTunnelSource[]; omitted: number };
}

export interface WhoCanReachOptions {
  /** List every source (and those reaching it by default); otherwise at most `limit` users per list. */
  all?: boolean;
  /** Default 100. */
  limit?: number;
}

type CategoryName = 'accepted' | 'byDefault' | 'server' | 'stopped';

interface Member {
  user: AccessUser;
  devices: number;
  /** Own cells within `ranges`; undefined for a user without own rules meeting the target. */
  cells?: DecidedCell[];
  verdict: 'accept' | 'drop' | 'partial';
  ranges?: IntervalSet;
}

const isRuleAccept = (c: DecidedCell) => c.decider.kind === 'rule' && c.decider.rule.rule.action === 'accept';
const isDefault = (c: DecidedCell) => c.decider.kind === 'default';
const isServer = (c: DecidedCell) => c.decider.kind === 'server';
const isDrop = (c: DecidedCell) => c.decider.kind === 'rule' && c.decider.rule.rule.action === 'drop';
const isAccepted = (c: DecidedCell) => !isDrop(c);

function verdictOf(has: (test: (c: DecidedCell) => boolean) => boolean): 'accept' | 'drop' | 'partial' {
  const accepted = has(isAccepted);
  const dropped = has(isDrop);
  return accepted && dropped ? 'partial' : dropped ? 'drop' : 'accept';
}

function categoryOf(has: (test: (c: DecidedCell) => boolean) => boolean): CategoryName {
  if (has(isRuleAccept)) return 'accepted';
  if (has(isDefault)) return 'byDefault';
  if (has(isServer)) return 'server';
  return 'stopped';
}

/** Every source's outcome for the target, grouped: accepted by a rule, by default, only the server, stopped, no tunnel. */
export function whoCanReach(model: AccessModel, target: ReachTarget, options: WhoCanReachOptions = {}): WhoCanReach {
  const { region } = target;
  const family = region.family;
  const limit = options.all ? Infinity : (options.limit ?? 100);
  const rules = new CompiledRules(model);
  const meets = (r: CompiledRule) => r.family === family && r.end >= region.a0 && r.start <= region.a1;
  const global = (rules.byOwner.get(null) ?? []).filter(meets);
  const server = serverValues(model.settings, family);
  const baseline = decideRegion([], global, region, server, true);
  const baselineVerdict = verdictOf((test) => baseline.some(test));
  const baseSets = new Map<(c: DecidedCell) => boolean, IntervalSet>();
  for (const test of [isRuleAccept, isDefault, isServer, isDrop, isAccepted])
    baseSets.set(test, new IntervalSet(baseline.filter(test).map((c) => [c.a0, c.a1] as const)));
  const index = new RuleIndex(global);
  const position = new Map(global.map((r, i) => [r, i]));

  const members: Record<CategoryName, Member[]> = { accepted: [], byDefault: [], server: [], stopped: [] };
  const noTunnel: NoTunnelSource[] = [];
  const baselineMembers: Member[] = [];
  for (const user of model.users.values()) {
    if (user.noTunnel) {
      noTunnel.push({ user: user.email, reason: user.noTunnel });
      continue;
    }
    if (user.devices.length === 0) {
      noTunnel.push({ user: user.email, reason: 'no device (no tunnel)' });
      continue;
    }
    let devices = 0;
    for (const device of user.devices) {
      if (hasAddress(device, family)) devices++;
      else
        noTunnel.push({
          user: user.email,
          device: device.name,
          reason: `no IPv${family} address (no IPv${family} tunnel)`,
        });
    }
    if (devices === 0) continue;
    const own = (rules.byOwner.get(user.key) ?? []).filter(meets);
    if (own.length === 0) {
      baselineMembers.push({ user, devices, verdict: baselineVerdict });
      continue;
    }
    // Only within the user's own rules' blocks can the outcome differ from everyone else's.
    const ranges = new IntervalSet(
      own.map((r) => [r.start > region.a0 ? r.start : region.a0, r.end < region.a1 ? r.end : region.a1] as const),
    );
    const cells: DecidedCell[] = [];
    for (let i = 0; i < ranges.size; i++) {
      const sub: Region = { ...region, a0: ranges.starts[i]!, a1: ranges.ends[i]! };
      const found = new Set<CompiledRule>();
      index.query(family, sub.a0, sub.a1, found);
      const near = [...found].sort((x, y) => position.get(x)! - position.get(y)!);
      for (const cell of decideRegion(own, near, sub, server, true)) cells.push(cell);
    }
    const has = (test: (c: DecidedCell) => boolean): boolean => {
      if (cells.some(test)) return true;
      const set = baseSets.get(test)!;
      let inside = 0n;
      for (let i = 0; i < ranges.size; i++) inside += set.covered(ranges.starts[i]!, ranges.ends[i]!);
      return set.total > inside;
    };
    members[categoryOf(has)].push({ user, devices, cells, ranges, verdict: verdictOf(has) });
  }
  const baselineCategory = categoryOf((test) => baseline.some(test));
  const everyoneElse = piecesOf(baseline);
  const regionSize = region.a1 - region.a0 + 1n;

  const category = (name: CategoryName): WhoCategory => {
    const list = members[name];
    const others = baselineCategory === name ? baselineMembers : [];
    const users = list.length + others.length;
    let devices = 0;
    for (const m of list) devices += m.devices;
    for (const m of others) devices += m.devices;
    const shown = name === 'byDefault' && !options.all ? 0 : limit;
    const entries: WhoEntry[] = [];
    let left = shown;
    const keep = (p: ReachPiece) => (name === 'stopped' ? p.verdict === 'drop' : p.verdict === 'accept');
    const drops = (pieces: ReachPiece[]) => (name === 'stopped' ? [] : pieces.filter((p) => p.verdict === 'drop'));
    for (const m of list) {
      if (left <= 0) break;
      left--;
      const ranges = m.ranges!;
      const pieces = piecesOf(m.cells!);
      const entry: WhoEntry = {
        users: [m.user.email],
        userCount: 1,
        devices: m.devices,
        everyoneElse: false,
        pieces: pieces.filter(keep),
        dropped: drops(pieces),
        verdict: m.verdict,
      };
      // Outside its own rules' blocks the user meets what everyone else does (everyoneElse).
      if (ranges.total < regionSize) {
        entry.within = [];
        for (let i = 0; i < ranges.size; i++)
          for (const cidr of rangeToCidrs(family, ranges.starts[i]!, ranges.ends[i]!)) entry.within.push(cidr);
      }
      entries.push(entry);
    }
    if (others.length > 0 && left > 0) {
      let count = 0;
      for (const m of others) count += m.devices;
      const names = others.slice(0, Math.min(left, others.length)).map((m) => m.user.email);
      entries.push({
        users: names,
        userCount: others.length,
        devices: count,
        everyoneElse: true,
        pieces: everyoneElse.filter(keep),
        dropped: drops(everyoneElse),
        verdict: baselineVerdict,
      });
    }
    const listed = entries.reduce((n, e) => n + e.users.length, 0);
    return { users, devices, entries, omitted: users - listed };
  };
  return {
    target,
    everyoneElse,
    accepted: category('accepted'),
    byDefault: category('byDefault'),
    server: category('server'),
    stopped: category('stopped'),
    noTunnel: {
      count: noTunnel.length,
      entries: noTunnel.slice(0, Number.isFinite(limit) ? limit : noTunnel.length),
      omitted: Math.max(0, noTunnel.length - limit),
    },
  };
}
