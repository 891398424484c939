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
import { describeRule } from '../views/model-rule.js';
import type { IpFamily } from '../model/net.js';
import { serverAddressesOf } from '../access/destination.js';
import { accessOfFilter } from './access.js';
import { bucketsOf, differenceOf, standardCauses, type Difference } from './diff.js';
import { SharedDifference } from './diff-patch.js';
import { pushSegment, reach1x, type Resource1x, type Segment } from './evaluate-1x.js';
import { patchKey, sizeOf, targetInside, wholeTarget } from './patch.js';
import { baselineReach, blocksOfRules, globalRulesOf, reachInside, RuleIndex, type Reach07 } from './reach-07.js';
import { DEFAULT_SCOPE, DEFAULT_TUNNEL_BLOCKS, labelAt, labelSpaces, type SpaceSegment } from './space.js';
import { disjointPieces, overlappingPieces, targetOf, type Piece, type TargetSegment } from './target.js';
import { nameObjects } from './names.js';
import type {
  DeviceFacts,
  DiffEntry,
  ExpiringGrant,
  Group1x,
  MigrateOptions,
  Migration,
  Note,
  ResourceOut,
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
  /** Per family, the blocks of the user's own rules (none: its reach is the baseline's). */
  blocks: Record<IpFamily, [bigint, bigint][]>;
  /** Per family, its 0.7 reach inside the blocks. */
  reach: Record<IpFamily, Segment[]>;
  /** Per family, its target inside the blocks. */
  target: Record<IpFamily, TargetSegment[]>;
  drops: CompiledRule[];
  /** Where its target differs from the baseline's: the same for users with the same target. */
  key: string;
  /** Its target is empty: no Group. */
  empty: boolean;
}

interface GroupDraft {
  key: string;
  target: Record<IpFamily, TargetSegment[]>;
  members: string[];
  everyone?: string;
  pieces: Piece[];
}

/** Per family, what users with the global rules only reach and are given, computed once. */
interface Baseline {
  reach: Reach07;
  dropSet: ReadonlySet<CompiledRule>;
  /** Its drop rules in the migrated space (written as Resources around them). */
  drops: CompiledRule[];
  target: TargetSegment[];
  targetSize: bigint;
  index: RuleIndex;
  server: Set<bigint>;
}

/**
 * Users with own rules differ from users with the global rules only inside the blocks of their
 * own rules, so everything per user (reach, target, difference) is computed inside those blocks
 * and the rest is the baseline's, computed once: the cost grows with the users' own rules, not
 * with users × global rules.
 */
export function compileMigration(input: MigrateInput): Migration {
  const { model, options } = input;
  const rules = new CompiledRules(model);
  const scope = [...(options.scope ?? DEFAULT_SCOPE)];
  // The rules' destinations in one order whatever the order of the rules (files and server list them differently).
  // One collator (as localeCompare(b, 'en', { numeric: true }) orders, without making one per comparison).
  const collator = new Intl.Collator('en', { numeric: true });
  const destinations = [...new Set(model.rules.map((rule) => rule.destination))].sort(collator.compare);
  const inScope = new Set(scope);
  for (const destination of destinations)
    if (!inScope.has(destination)) {
      inScope.add(destination);
      scope.push(destination);
    }
  const tunnel: string[] = [...DEFAULT_TUNNEL_BLOCKS];
  for (const user of model.users.values())
    for (const d of user.devices)
      for (const a of [d.ipv4, d.ipv6]) if (typeof a === 'string' && a !== '') tunnel.push(a);
  const spaceInput = { scope, tunnel, server: model.settings.serverAddresses };
  const space: Record<IpFamily, SpaceSegment[]> = labelSpaces(spaceInput);
  const inMigratedSpace = (f: IpFamily) => (d: CompiledRule) =>
    labelAt(space[f], d.start) === 'ok' || labelAt(space[f], d.end) === 'ok';

  const baselineOf = (f: IpFamily): Baseline => {
    const global = globalRulesOf(rules, f);
    const reach = baselineReach(rules, global, f);
    const target = targetOf(reach.segments, space[f], f, options.prefer);
    return {
      reach,
      dropSet: new Set(reach.drops),
      drops: reach.drops.filter(inMigratedSpace(f)),
      target,
      targetSize: sizeOf(target),
      index: new RuleIndex(global),
      server: serverAddressesOf(rules, f),
    };
  };
  const baseline: Record<IpFamily, Baseline> = { 4: baselineOf(4), 6: baselineOf(6) };
  const baseKey = FAMILIES.map(() => '').join('#');

  const sideOf = (user: AccessUser): Side => {
    const side: Side = {
      blocks: { 4: [], 6: [] },
      reach: { 4: [], 6: [] },
      target: { 4: [], 6: [] },
      drops: [],
      key: '',
      empty: true,
    };
    const keys: string[] = [];
    for (const f of FAMILIES) {
      const base = baseline[f];
      // The drops of the baseline first, then those of the user's own blocks: the order of the whole reach's.
      side.drops.push(...base.drops);
      const own = (rules.byOwner.get(user.key) ?? []).filter((r) => r.family === f);
      const blocks = blocksOfRules(own);
      if (blocks.length === 0) {
        keys.push('');
        if (base.targetSize > 0n) side.empty = false;
        continue;
      }
      const inside = reachInside(own, base.index, f, blocks, base.server);
      const target = targetOf(inside.segments, space[f], f, options.prefer);
      const sharedInside = targetInside(base.target, blocks);
      side.blocks[f] = blocks;
      side.reach[f] = inside.segments;
      side.target[f] = target;
      keys.push(patchKey(sharedInside, target));
      if (target.length > 0 || base.targetSize > sizeOf(sharedInside)) side.empty = false;
      side.drops.push(...inside.drops.filter((d) => !base.dropSet.has(d)).filter(inMigratedSpace(f)));
    }
    side.key = keys.join('#');
    return side;
  };
  const wholeTargetOf = (side: Side): Record<IpFamily, TargetSegment[]> => {
    const out = {} as Record<IpFamily, TargetSegment[]>;
    for (const f of FAMILIES)
      out[f] =
        side.blocks[f].length === 0
          ? baseline[f].target
          : wholeTarget(baseline[f].target, side.target[f], side.blocks[f]);
    return out;
  };
  const baseEmpty = FAMILIES.every((f) => baseline[f].targetSize === 0n);

  const users = [...model.users.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const sides = new Map<string, Side>();
  const drafts = new Map<string, GroupDraft>();
  for (const user of users) {
    if (user.noTunnel) continue;
    const side = sideOf(user);
    sides.set(user.key, side);
    if (side.empty) continue;
    let draft = drafts.get(side.key);
    if (!draft) drafts.set(side.key, (draft = { key: side.key, target: wholeTargetOf(side), members: [], pieces: [] }));
    draft.members.push(user.key);
  }
  if (options.everyoneGroup !== undefined && !baseEmpty) {
    const draft = drafts.get(baseKey);
    if (draft) draft.everyone = options.everyoneGroup;
    else
      drafts.set(baseKey, {
        key: baseKey,
        target: { 4: baseline[4].target, 6: baseline[6].target },
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
  const resourcesByGroup = new Map<string, ResourceOut[]>();
  for (const r of named.resources)
    for (const g of r.groups) {
      const list = resourcesByGroup.get(g);
      if (list) list.push(r);
      else resourcesByGroup.set(g, [r]);
    }

  // 1.x reach per group (and the Everyone group's Resources for every enabled user), both routings:
  // what clients without firezone#12684 refuse depends on the group only.
  const resourcesOf = (group: Group1x | undefined): Resource1x[] => {
    const out = new Map<string, Resource1x>();
    for (const g of [group, everyone])
      if (g)
        for (const r of resourcesByGroup.get(g.address) ?? [])
          if (!out.has(r.address))
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
  const routingCauses = standardCauses('ROUTING', 'ROUTING');
  const oldCache = new Map<string, DiffEntry[]>();
  const oldClientsOf = (group: Group1x | undefined): DiffEntry[] => {
    const key = group?.address ?? '';
    let old = oldCache.get(key);
    if (!old) {
      const resources = resourcesOf(group);
      old = FAMILIES.flatMap(
        (f) =>
          differenceOf(reach1x(resources, f, 'filter'), reach1x(resources, f, 'prefix'), space[f], f, routingCauses)
            .lost,
      );
      oldCache.set(key, old);
    }
    return old;
  };

  // The difference of users with the global rules only, once; each user's is it patched inside its blocks.
  const causes = standardCauses('NOT_EXPRESSED', gainedCodeOf(options));
  const shared = {} as Record<IpFamily, SharedDifference>;
  for (const f of FAMILIES)
    shared[f] = new SharedDifference(
      bucketsOf(baseline[f].reach.segments, segmentsOfTarget(baseline[f].target, f), space[f], causes),
      f,
    );
  const differenceOfSide = (side: Side): Difference => {
    const out: Difference = { lost: [], gained: [] };
    for (const f of FAMILIES) {
      const blocks = side.blocks[f];
      let d: Difference;
      if (blocks.length === 0) d = shared[f].plain;
      else {
        // 1.x gives the user its target, and the Everyone group's Resources (the baseline's target) with --everyone-group.
        const after = everyone
          ? reach1x(
              [...side.target[f], ...targetInside(baseline[f].target, blocks)].map((t) => ({
                id: '',
                family: f,
                start: t.a0,
                end: t.a1,
                prefix: 0,
                filter: t.filter,
              })),
              f,
              'filter',
            )
          : segmentsOfTarget(side.target[f], f);
        d = shared[f].patched(bucketsOf(side.reach[f], after, space[f], causes), blocks);
      }
      out.lost.push(...d.lost);
      out.gained.push(...d.gained);
    }
    return out;
  };

  const notesOfDrop = dropNotes(resourcesByGroup);
  const results: UserResult[] = [];
  const expiring = expiringByUser(input.expiring ?? []);
  for (const user of users) {
    const actorCollision = named.collisions.get(user.key);
    const notes: Note[] = [];
    if (actorCollision) notes.push({ code: 'NAME_COLLISION', subject: actorCollision });
    for (const grant of expiring(user.key))
      notes.push({ code: 'GRANT_EXPIRES', subject: `${grant.rule} (expires ${grant.expires})` });
    const devices = devicesOf(user, input.devices?.get(user.key));
    if (user.noTunnel) {
      notes.push({ code: 'DISABLED_USER' });
      results.push({ email: user.email, verdict: 'equal', lost: [], gained: [], oldClients: [], notes, devices });
      continue;
    }
    const side = sides.get(user.key)!;
    const group = groupOf.get(user.key) ?? (side.key === baseKey ? everyone : undefined);
    const main = differenceOfSide(side);
    for (const drop of side.drops) notes.push(notesOfDrop(drop, group));
    results.push({
      email: user.email,
      verdict: main.gained.length > 0 ? 'wider' : main.lost.length > 0 ? 'narrower' : 'equal',
      ...(group ? { group: group.address } : {}),
      lost: main.lost,
      gained: main.gained,
      oldClients: oldClientsOf(groupOf.get(user.key)),
      notes,
      devices,
    });
  }

  const account: Note[] = [];
  if (options.everyoneGroup === undefined && !baseEmpty) account.push({ code: 'FUTURE_USERS' });
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

/** A target as the 1.x reach it gives (each block's filter list, every Resource disjoint or exact). */
function segmentsOfTarget(target: readonly TargetSegment[], family: IpFamily): Segment[] {
  const out: Segment[] = [];
  for (const t of target) pushSegment(out, { family, a0: t.a0, a1: t.a1, access: accessOfFilter(t.filter) });
  return out;
}

/** The grants with `expires:` a user has (its own and the global ones), in the order given. */
function expiringByUser(grants: readonly ExpiringGrant[]): (user: string) => ExpiringGrant[] {
  const global: number[] = [];
  const own = new Map<string, number[]>();
  grants.forEach((g, i) => {
    if (g.owner === null) global.push(i);
    else {
      const list = own.get(g.owner);
      if (list) list.push(i);
      else own.set(g.owner, [i]);
    }
  });
  return (user) => {
    const mine = own.get(user);
    if (!mine) return global.map((i) => grants[i]!);
    return [...mine, ...global].sort((a, b) => a - b).map((i) => grants[i]!);
  };
}

/**
 * The note of a drop rule deciding some of a user's packets, with how many of its Group's Resources
 * lie in the drop's block's neighbourhood; the same for every member of a Group, made once.
 */
function dropNotes(
  resourcesByGroup: ReadonlyMap<string, readonly ResourceOut[]>,
): (drop: CompiledRule, group: Group1x | undefined) => Note {
  const made = new Map<CompiledRule, Map<string, Note>>();
  return (drop, group) => {
    let row = made.get(drop);
    if (!row) made.set(drop, (row = new Map()));
    const key = group?.address ?? '';
    let note = row.get(key);
    if (note) return note;
    // The neighbourhood: the /8 (IPv4) or /32 (IPv6) holding the drop's block, or the block itself if larger.
    const bits = drop.family === 4 ? 32n : 128n;
    const keep = drop.family === 4 ? 8n : 32n;
    const size = drop.end - drop.start + 1n;
    const shift = size > 1n << (bits - keep) ? BigInt(size.toString(2).length - 1) : bits - keep;
    const lo = (drop.start >> shift) << shift;
    const hi = lo + (1n << shift) - 1n;
    const pieces = group
      ? (resourcesByGroup.get(group.address) ?? []).filter(
          (r) => r.family === drop.family && r.start <= hi && r.end >= lo,
        ).length
      : 0;
    note = { code: 'DROP_COMPLEMENT' as const, subject: describeRule(drop.rule), pieces };
    row.set(key, note);
    return note;
  };
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

/** The code of what a user gains under these options: the chosen wider reach, Everyone's grant, or neither. */
export function gainedCodeOf(options: MigrateOptions): 'PREFER_WIDER' | 'EVERYONE_GROUP' | 'NOT_EXPRESSED' {
  if (options.prefer === 'wider') return 'PREFER_WIDER';
  return options.everyoneGroup !== undefined ? 'EVERYONE_GROUP' : 'NOT_EXPRESSED';
}
