/**
 * The compiler: a 0.7 state (its access model) into Firezone 1.x objects, and per user the
 * comparison of its reach under 0.7.36 with its reach under 1.x (docs/firezone-1x.md).
 *
 * Users whose target reach is the same share one Group; identical Resources (block and filter
 * list) are shared by the Groups they serve. By default a user's Resources never overlap, so its
 * reach is the same on every client; `assumeFilterRouting` lets them overlap (fewer objects) for
 * clients with firezone#12684. Where 1.x cannot express a reach exactly the target is the largest
 * expressible reach inside it (narrower), or with `prefer: wider` the smallest around it. Pure.
 */
import { CompiledRules } from '../access/evaluate.js';
import type { AccessModel, AccessUser, CompiledRule } from '../access/model.js';
import { describeRule } from '../model/rule.js';
import type { IpFamily } from '../model/net.js';
import { differenceOf, standardCauses, type Difference } from './diff.js';
import { reach1x, type Resource1x, type Segment } from './evaluate-1x.js';
import { baselineReach, globalRulesOf, userReach, type Reach07 } from './reach-07.js';
import { DEFAULT_SCOPE, DEFAULT_TUNNEL_BLOCKS, labelAt, labelSpace, type SpaceSegment } from './space.js';
import { disjointPieces, overlappingPieces, targetKey, targetOf, type Piece, type TargetSegment } from './target.js';
import { nameObjects } from './names.js';
import type {
  DeviceFacts,
  DiffEntry,
  ExpiringGrant,
  Group1x,
  MigrateOptions,
  Migration,
  Note,
  UserResult,
} from './types.js';

const FAMILIES: IpFamily[] = [4, 6];

export interface MigrateInput {
  model: AccessModel;
  options: MigrateOptions;
  /** Devices by user (email in normal form), when more is known than the access model holds. */
  devices?: Map<string, DeviceFacts[]>;
  /** Grants with `expires:` (none until the desired state has them). */
  expiring?: ExpiringGrant[];
}

interface Side {
  /** The user's 0.7 reach: kept only while it is used (10,000 users' copies do not fit in memory). */
  reach?: Record<IpFamily, Reach07>;
  /** Per family, whether the user's reach is the baseline's (no own rules of that family). */
  own: Record<IpFamily, boolean>;
  drops: CompiledRule[];
  target: Record<IpFamily, TargetSegment[]>;
  key: string;
}

interface GroupDraft {
  key: string;
  target: Record<IpFamily, TargetSegment[]>;
  members: string[];
  everyone?: string;
  pieces: Piece[];
}

export function compileMigration(input: MigrateInput): Migration {
  const { model, options } = input;
  const rules = new CompiledRules(model);
  const scope = [...(options.scope ?? DEFAULT_SCOPE)];
  // The rules' destinations in one order whatever the order of the rules (files and server list them differently).
  const destinations = [...new Set(model.rules.map((rule) => rule.destination))].sort((a, b) =>
    a.localeCompare(b, 'en', { numeric: true }),
  );
  for (const destination of destinations) if (!scope.includes(destination)) scope.push(destination);
  const tunnel: string[] = [...DEFAULT_TUNNEL_BLOCKS];
  for (const user of model.users.values())
    for (const d of user.devices)
      for (const a of [d.ipv4, d.ipv6]) if (typeof a === 'string' && a !== '') tunnel.push(a);
  const spaceInput = { scope, tunnel, server: model.settings.serverAddresses };
  const space: Record<IpFamily, SpaceSegment[]> = { 4: labelSpace(spaceInput, 4), 6: labelSpace(spaceInput, 6) };

  // The reach of users with the global rules only, and of each user with own rules, per family.
  const global = { 4: globalRulesOf(rules, 4), 6: globalRulesOf(rules, 6) };
  const baseline: Record<IpFamily, Reach07> = {
    4: baselineReach(rules, global[4], 4),
    6: baselineReach(rules, global[6], 6),
  };
  const reachOf = (user: AccessUser): Record<IpFamily, Reach07> => {
    const reach = {} as Record<IpFamily, Reach07>;
    for (const f of FAMILIES) {
      const own = (rules.byOwner.get(user.key) ?? []).filter((r) => r.family === f);
      reach[f] = own.length > 0 ? userReach(rules, own, global[f], baseline[f], f) : baseline[f];
    }
    return reach;
  };
  const sideOf = (user: AccessUser): Side => {
    const reach = reachOf(user);
    const target = {} as Record<IpFamily, TargetSegment[]>;
    for (const f of FAMILIES) target[f] = targetOf(reach[f].segments, space[f], f, options.prefer);
    return {
      own: { 4: reach[4] !== baseline[4], 6: reach[6] !== baseline[6] },
      // Only drops in the migrated space are written as resources around them.
      drops: FAMILIES.flatMap((f) =>
        reach[f].drops.filter((d) => labelAt(space[f], d.start) === 'ok' || labelAt(space[f], d.end) === 'ok'),
      ),
      target,
      key: FAMILIES.map((f) => targetKey(target[f])).join('#'),
    };
  };
  const baseTarget = {
    4: targetOf(baseline[4].segments, space[4], 4, options.prefer),
    6: targetOf(baseline[6].segments, space[6], 6, options.prefer),
  };
  const baseKey = FAMILIES.map((f) => targetKey(baseTarget[f])).join('#');

  const users = [...model.users.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const sides = new Map<string, Side>();
  const drafts = new Map<string, GroupDraft>();
  for (const user of users) {
    if (user.noTunnel) continue;
    const side = sideOf(user);
    sides.set(user.key, side);
    if (side.key === FAMILIES.map(() => '').join('#')) continue;
    let draft = drafts.get(side.key);
    if (!draft) drafts.set(side.key, (draft = { key: side.key, target: side.target, members: [], pieces: [] }));
    draft.members.push(user.key);
  }
  if (options.everyoneGroup !== undefined && baseKey !== FAMILIES.map(() => '').join('#')) {
    const draft = drafts.get(baseKey);
    if (draft) draft.everyone = options.everyoneGroup;
    else
      drafts.set(baseKey, {
        key: baseKey,
        target: baseTarget,
        members: [],
        everyone: options.everyoneGroup,
        pieces: [],
      });
  }
  for (const draft of drafts.values())
    draft.pieces = FAMILIES.flatMap((f) =>
      options.assumeFilterRouting ? overlappingPieces(draft.target[f], f) : disjointPieces(draft.target[f]),
    );

  const named = nameObjects(users, [...drafts.values()]);
  const groupOf = new Map<string, Group1x>();
  for (const [key, group] of named.groupsByKey) for (const m of drafts.get(key)!.members) groupOf.set(m, group);
  const everyone = [...named.groupsByKey.values()].find((g) => g.everyone !== undefined);

  // 1.x reach per group (and the Everyone group's Resources for every enabled user), both routings.
  const resourcesOf = (group: Group1x | undefined): Resource1x[] => {
    const out = new Map<string, Resource1x>();
    for (const g of [group, everyone])
      if (g)
        for (const r of named.resources)
          if (r.groups.includes(g.address))
            out.set(r.address, {
              id: r.address,
              family: r.family,
              start: r.start,
              end: r.end,
              prefix: r.prefix,
              filter: r.filter,
            });
    return [...out.values()];
  };
  const reachCache = new Map<string, Record<'filter' | 'prefix', Record<IpFamily, Segment[]>>>();
  const reachOfGroup = (group: Group1x | undefined) => {
    const key = group?.address ?? '';
    let cached = reachCache.get(key);
    if (!cached) {
      const resources = resourcesOf(group);
      const per = (routing: 'filter' | 'prefix') => ({
        4: reach1x(resources, 4, routing),
        6: reach1x(resources, 6, routing),
      });
      reachCache.set(key, (cached = { filter: per('filter'), prefix: per('prefix') }));
    }
    return cached;
  };

  const gainedCode =
    options.prefer === 'wider'
      ? 'PREFER_WIDER'
      : options.everyoneGroup !== undefined
        ? 'EVERYONE_GROUP'
        : 'NOT_EXPRESSED';
  const causes = standardCauses('NOT_EXPRESSED', gainedCode);
  const routingCauses = standardCauses('ROUTING', 'ROUTING');
  const diffCache = new Map<string, { main: Difference; old: DiffEntry[] }>();
  const results: UserResult[] = [];
  const expiring = input.expiring ?? [];
  for (const user of users) {
    const actorCollision = named.collisions.get(user.key);
    const notes: Note[] = [];
    if (actorCollision) notes.push({ code: 'NAME_COLLISION', subject: actorCollision });
    for (const grant of expiring)
      if (grant.owner === user.key || grant.owner === null)
        notes.push({ code: 'GRANT_EXPIRES', subject: `${grant.rule} (expires ${grant.expires})` });
    const devices = devicesOf(user, input.devices?.get(user.key));
    if (user.noTunnel) {
      notes.push({ code: 'DISABLED_USER' });
      results.push({ email: user.email, verdict: 'equal', lost: [], gained: [], oldClients: [], notes, devices });
      continue;
    }
    const side = sides.get(user.key)!;
    const group = groupOf.get(user.key) ?? (side.key === baseKey ? everyone : undefined);
    const reach = reachOfGroup(groupOf.get(user.key));
    const own = side.own[4] || side.own[6];
    const cacheKey = `${own ? user.key : ''}@${group?.address ?? ''}`;
    let diff = diffCache.get(cacheKey);
    if (!diff) {
      const mine = own ? reachOf(user) : baseline;
      const main: Difference = { lost: [], gained: [] };
      const old: DiffEntry[] = [];
      for (const f of FAMILIES) {
        const d = differenceOf(mine[f].segments, reach.filter[f], space[f], f, causes);
        main.lost.push(...d.lost);
        main.gained.push(...d.gained);
        old.push(...differenceOf(reach.filter[f], reach.prefix[f], space[f], f, routingCauses).lost);
      }
      diff = { main, old };
      // Users with own rules have a difference of their own: not kept once written.
      if (!own) diffCache.set(cacheKey, diff);
    }
    notes.push(...dropNotes(side.drops, group, named.resources));
    results.push({
      email: user.email,
      verdict: diff.main.gained.length > 0 ? 'wider' : diff.main.lost.length > 0 ? 'narrower' : 'equal',
      ...(group ? { group: group.address } : {}),
      lost: diff.main.lost,
      gained: diff.main.gained,
      oldClients: diff.old,
      notes,
      devices,
    });
  }

  const account: Note[] = [];
  if (options.everyoneGroup === undefined && baseKey !== FAMILIES.map(() => '').join('#'))
    account.push({ code: 'FUTURE_USERS' });
  if (results.some((u) => u.lost.some((e) => e.code === 'FULL_TUNNEL')))
    account.push({ code: 'PAID_TIER', subject: 'Internet Resource' });
  for (const name of named.resourceCollisions) account.push({ code: 'NAME_COLLISION', subject: name });
  return {
    options,
    scope,
    actors: named.actors,
    groups: [...named.groupsByKey.values()].sort((a, b) => a.address.localeCompare(b.address)),
    memberships: named.memberships,
    resources: named.resources,
    policies: named.policies,
    users: results,
    account,
  };
}

/** Each drop rule deciding some of the user's packets, with how many of its Group's Resources lie in the drop's block's neighbourhood. */
function dropNotes(
  drops: readonly CompiledRule[],
  group: Group1x | undefined,
  resources: Migration['resources'],
): Note[] {
  return drops.map((drop) => {
    // The neighbourhood: the /8 (IPv4) or /32 (IPv6) holding the drop's block, or the block itself if larger.
    const bits = drop.family === 4 ? 32n : 128n;
    const keep = drop.family === 4 ? 8n : 32n;
    const size = drop.end - drop.start + 1n;
    const shift = size > 1n << (bits - keep) ? BigInt(size.toString(2).length - 1) : bits - keep;
    const lo = (drop.start >> shift) << shift;
    const hi = lo + (1n << shift) - 1n;
    const pieces = group
      ? resources.filter(
          (r) => r.family === drop.family && r.groups.includes(group.address) && r.start <= hi && r.end >= lo,
        ).length
      : 0;
    return { code: 'DROP_COMPLEMENT' as const, subject: describeRule(drop.rule), pieces };
  });
}

function devicesOf(user: AccessUser, facts: DeviceFacts[] | undefined): UserResult['devices'] {
  const list: DeviceFacts[] = facts ?? user.devices.map((d) => ({ name: d.name }));
  const order = [...list].sort((a, b) => {
    const ha = a.lastHandshake ?? '';
    const hb = b.lastHandshake ?? '';
    if (ha !== hb) return ha < hb ? 1 : -1;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
  return order.map((d) => {
    const notes: Note[] = [{ code: 'RE_ENROL' }];
    if (d.allowedIps && d.allowedIps.length > 0) notes.push({ code: 'ALLOWED_IPS', subject: d.allowedIps.join(', ') });
    return { name: d.name, ...(d.lastHandshake !== undefined ? { lastHandshake: d.lastHandshake } : {}), notes };
  });
}
