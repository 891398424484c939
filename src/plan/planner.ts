/**
 * planChanges: the pure diff of a desired state against a live state (spec/netform.md
 * sections 2 and 4). No state file: live objects are matched to declared ones by natural key.
 * Linear in the number of objects: every lookup goes through maps built once.
 */
import { deviceKey, normalizeDestination, ruleKey, userKey } from '../model/keys.js';
import { normalizePortRange } from '../model/ports.js';
import { parseRule, rulesOverlap, type ParsedRule } from '../model/rule.js';
import type { DesiredDevice, DesiredRule, DesiredState, DesiredUser, LiveState } from '../model/state.js';
import type { ApiDevice, ApiRule, ApiUser } from '../model/types.js';
import { changedDeviceFields, LEGACY_UPDATABLE_DEVICE_FIELDS, liveDeviceBody, managedDeviceFields, type WritableDeviceField } from './device-fields.js';
import { planConfiguration } from './configuration.js';
import { fingerprintOf } from './fingerprint.js';
import { checkLimit } from './limits.js';
import { indexLiveState, ruleLabel, type LiveIndex } from './live-index.js';
import { buildScope, type Scope } from './scope.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, type CascadeItem, type Change, type FieldChange, type Plan, type PlanSecret, type PlanSummary } from './types.js';

export interface PlanOptions {
  /** The server the live state came from (shown, and checked when a saved plan is applied). */
  server: string;
  /** ISO time the plan is made at (a parameter: the planner reads no clock). */
  createdAt: string;
  /** Email of the token's owner; when unknown, no admin is deleted. */
  tokenUser?: string | null;
  /** Plan device changes that upstream 0.7.26+ ignores on update as delete-then-create. */
  replace?: boolean;
  /** Send declared passwords to existing users too. */
  rotatePasswords?: boolean;
  allowDeletes?: number;
  allowUpdates?: number;
}

/** The plan cannot be made: every reason, each naming the objects at fault. */
export class PlanError extends Error {
  override readonly name = 'PlanError';
  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? problems[0] : `${problems.length} problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export const PHASE = { users: 1, makeRoom: 2, members: 3, memberDeletes: 4, userDeletes: 5 } as const;

interface RuleCandidate {
  /** Change id once planned. */
  key: string;
  ownerEmail: string | null;
  rule: DesiredRule;
  parsed: ParsedRule | null;
}

export function planChanges(desired: DesiredState, live: LiveState, options: PlanOptions): Plan {
  return new Planner(desired, live, options).plan();
}

class Planner {
  readonly #desired: DesiredState;
  readonly #live: LiveState;
  readonly #options: PlanOptions;
  readonly #index: LiveIndex;
  readonly #scope: Scope;
  readonly #changes = new Map<string, Change>();
  readonly #problems: string[] = [];
  readonly #reportedDuplicates = new Set<string>();
  readonly #warnings: string[] = [];
  /** Declared users by key, and the live user each was matched to. */
  readonly #declaredUsers = new Map<string, { user: DesiredUser; live: ApiUser | undefined }>();
  /** Live objects a declaration or an absent entry accounts for (never pruned). */
  readonly #claimedDevices = new Set<ApiDevice>();
  readonly #claimedRules = new Set<ApiRule>();
  /** Users planned for deletion: their devices and rules go with them. */
  readonly #deletedUserIds = new Set<string>();

  constructor(desired: DesiredState, live: LiveState, options: PlanOptions) {
    this.#desired = desired;
    this.#live = live;
    this.#options = options;
    this.#index = indexLiveState(live);
    this.#scope = buildScope(desired.settings);
  }

  plan(): Plan {
    const absentUsers = new Set(this.#desired.absent.users.map((u) => userKey(u.email)));
    for (const user of this.#desired.users) {
      const key = userKey(user.email);
      if (absentUsers.has(key)) this.#problems.push(`user ${user.email} is both declared and listed under absent`);
      this.#declaredUsers.set(key, { user, live: this.#uniqueLive('user', key, this.#index.usersByKey.get(key)) });
    }
    for (const [key, { user, live }] of this.#declaredUsers) this.#planUser(key, user, live);
    for (const { user, live } of this.#declaredUsers.values()) this.#planDevices(user, live);
    this.#planRules();
    this.#planAbsent();
    if (this.#desired.settings.prune) this.#planPrune();
    this.#makeRoomForNewDevices();
    this.#guardUserRemovals();
    const configuration = planConfiguration(this.#desired.configuration, this.#live.configuration, PHASE.users);
    if (configuration) this.#add(configuration);
    if (this.#problems.length > 0) throw new PlanError(this.#problems);
    return this.#document();
  }

  /** The live object of a key; several with one key is a problem reported, never a guess. */
  #uniqueLive<T>(kind: 'user' | 'device' | 'rule', key: string, found: T | undefined): T | undefined {
    this.#isDuplicated(kind, key);
    return found;
  }

  /** Whether several live objects share the key; reports it (once) as a problem. */
  #isDuplicated(kind: 'user' | 'device' | 'rule', key: string): boolean {
    const all = this.#index.duplicates.get(`${kind}:${key}`);
    if (!all) return false;
    if (!this.#reportedDuplicates.has(`${kind}:${key}`)) {
      this.#reportedDuplicates.add(`${kind}:${key}`);
      this.#problems.push(`the server holds ${all.length} ${kind}s with the key ${key}; netform will not guess which one is meant: remove the extra ones by hand`);
    }
    return true;
  }

  /** Every live object with the key (one, or all duplicates). */
  #allWithKey<T>(kind: 'device' | 'rule', key: string, found: T): T[] {
    return (this.#index.duplicates.get(`${kind}:${key}`) as T[] | undefined) ?? [found];
  }

  #add(change: Change): void {
    this.#changes.set(change.id, change);
  }

  // ---- users ----

  #planUser(key: string, user: DesiredUser, live: ApiUser | undefined): void {
    const id = `user:${key}`;
    const label = `user ${user.email}`;
    if (!live) {
      const body: Record<string, unknown> = { email: user.email.trim() };
      const fields: FieldChange[] = [{ field: 'email', before: null, after: user.email.trim() }];
      if (user.role) body.role = user.role;
      fields.push({ field: 'role', before: null, after: user.role ?? 'unprivileged' });
      const secrets: PlanSecret[] = [];
      if (user.password) {
        secrets.push({ field: 'password', ref: user.password.ref });
        fields.push({ field: 'password', before: null, after: null, sensitive: true });
      }
      this.#add({ id, kind: 'user', action: 'create', key, label, phase: PHASE.users, fingerprint: null, fields, body, ...(secrets.length ? { secrets } : {}) });
      return;
    }
    const fields: FieldChange[] = [];
    const body: Record<string, unknown> = {};
    const secrets: PlanSecret[] = [];
    if (user.role && user.role !== live.role) {
      fields.push({ field: 'role', before: live.role, after: user.role });
      body.role = user.role;
    }
    if (this.#options.rotatePasswords && user.password) {
      fields.push({ field: 'password', before: null, after: null, sensitive: true });
      secrets.push({ field: 'password', ref: user.password.ref });
    }
    if (fields.length === 0) return;
    const demotes = body.role === 'unprivileged' && live.role === 'admin';
    this.#add({
      id, kind: 'user', action: 'update', key, label, liveId: live.id, phase: demotes ? PHASE.userDeletes : PHASE.users,
      fingerprint: fingerprintOf('user', live), fields, body, ...(secrets.length ? { secrets } : {}),
    });
  }

  /** How a device or rule body names its owner: the live id, or a reference to the user created in this plan. */
  #ownerRef(user: DesiredUser, live: ApiUser | undefined): { userId: unknown; dependsOn: string[] } {
    if (live) return { userId: live.id, dependsOn: [] };
    const id = `user:${userKey(user.email)}`;
    return { userId: { $ref: id }, dependsOn: [id] };
  }

  // ---- devices ----

  #planDevices(user: DesiredUser, liveUser: ApiUser | undefined): void {
    const owner = this.#ownerRef(user, liveUser);
    for (const device of user.devices) {
      const key = deviceKey(user.email, device.name);
      const live = liveUser ? this.#uniqueLive('device', key, this.#index.devicesByKey.get(key)) : undefined;
      if (live) {
        for (const same of this.#allWithKey('device', key, live)) this.#claimedDevices.add(same);
        this.#planDeviceUpdate(key, device, live);
      } else {
        this.#planDeviceCreate(key, device, owner);
      }
    }
  }

  #planDeviceCreate(key: string, device: DesiredDevice, owner: { userId: unknown; dependsOn: string[] }): void {
    const body: Record<string, unknown> = { user_id: owner.userId, name: device.name.trim() };
    const fields: FieldChange[] = [{ field: 'name', before: null, after: device.name.trim() }];
    for (const field of createFields(device)) {
      body[field] = device.fields[field];
      fields.push({ field, before: null, after: device.fields[field] });
    }
    const secrets: PlanSecret[] = [];
    if (device.preshared_key) {
      secrets.push({ field: 'preshared_key', ref: device.preshared_key.ref });
      fields.push({ field: 'preshared_key', before: null, after: null, sensitive: true });
    }
    this.#add({
      id: `device:${key}`, kind: 'device', action: 'create', key, label: `device ${key}`, phase: PHASE.members, fingerprint: null,
      fields, body, ...(secrets.length ? { secrets } : {}), ...(owner.dependsOn.length ? { dependsOn: owner.dependsOn } : {}),
    });
  }

  #planDeviceUpdate(key: string, device: DesiredDevice, live: ApiDevice): void {
    const changed = changedDeviceFields(device, live);
    const fields: FieldChange[] = changed.map((field) => ({ field, before: live[field], after: device.fields[field] }));
    const pskChanged = device.preshared_key !== undefined && !device.preshared_key.equals(live.preshared_key);
    if (pskChanged) fields.push({ field: 'preshared_key', before: null, after: null, sensitive: true });
    if (fields.length === 0) return;
    const base = { id: `device:${key}`, kind: 'device' as const, key, label: `device ${key}`, liveId: live.id, fingerprint: fingerprintOf('device', live), fields };
    const ignoredByLegacyServers = changed.some((f) => !LEGACY_UPDATABLE_DEVICE_FIELDS.has(f)) || pskChanged;
    if (this.#options.replace && ignoredByLegacyServers) {
      // Delete then create, keeping what the files do not change: keys, pinned addresses, other values.
      const body: Record<string, unknown> = { user_id: live.user_id, name: live.name, ...liveDeviceBody(live) };
      for (const field of managedDeviceFields(device.fields)) body[field] = device.fields[field];
      for (const field of defaultedFields(device)) delete body[field];
      const keepFromLive = !device.preshared_key && live.preshared_key ? ['preshared_key'] : [];
      this.#add({
        ...base, action: 'replace', phase: PHASE.members, body,
        ...(device.preshared_key ? { secrets: [{ field: 'preshared_key' as const, ref: device.preshared_key.ref }] } : {}),
        ...(keepFromLive.length ? { keepFromLive } : {}),
        note: 'replaced (delete, then create with the same keys and addresses): the server ignores these fields on update',
      });
      return;
    }
    const body: Record<string, unknown> = {};
    for (const field of changed) body[field] = device.fields[field];
    this.#add({
      ...base, action: 'update', phase: PHASE.members, body,
      ...(pskChanged && device.preshared_key ? { secrets: [{ field: 'preshared_key' as const, ref: device.preshared_key.ref }] } : {}),
    });
  }

  // ---- rules ----

  #planRules(): void {
    const unmatched: RuleCandidate[] = [];
    const consider = (ownerEmail: string | null, rule: DesiredRule, ownerLive: ApiUser | undefined) => {
      const key = ruleKey({ ownerEmail, action: rule.action, destination: rule.destination, port_type: rule.port_type, port_range: rule.port_range });
      const existing = ownerEmail !== null && !ownerLive ? undefined : this.#uniqueLive('rule', key, this.#index.rulesByKey.get(key));
      if (existing) {
        for (const same of this.#allWithKey('rule', key, existing)) this.#claimedRules.add(same);
        return;
      }
      const parsed = parseRule({ action: rule.action, destination: rule.destination, port_type: rule.port_type, port_range: rule.port_range, owner: ownerEmail === null ? null : userKey(ownerEmail) });
      unmatched.push({ key, ownerEmail, rule, parsed });
    };
    for (const { user, live } of this.#declaredUsers.values()) for (const rule of user.rules) consider(user.email, rule, live);
    for (const rule of this.#desired.rules) consider(null, rule, undefined);
    if (unmatched.length === 0) return;

    // Live rules no declaration matches, grouped by owner and action: the only ones a declared
    // rule can overlap with on the server.
    const spare = new Map<string, { rule: ApiRule; parsed: ParsedRule | null; used: boolean }[]>();
    for (const rule of this.#live.rules) {
      if (this.#claimedRules.has(rule)) continue;
      const owner = this.#index.ruleOwnerOf(rule);
      const group = `${owner === null ? '*' : userKey(owner)}|${rule.action}`;
      const parsed = parseRule({ action: rule.action, destination: rule.destination, port_type: rule.port_type, port_range: rule.port_range, owner: owner === null ? null : userKey(owner) });
      const list = spare.get(group);
      const entry = { rule, parsed, used: false };
      if (list) list.push(entry);
      else spare.set(group, [entry]);
    }

    unmatched.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const candidate of unmatched) {
      const { ownerEmail, rule, key, parsed } = candidate;
      const owner = ownerEmail === null ? undefined : this.#declaredUsers.get(userKey(ownerEmail));
      const ownerRef = owner ? this.#ownerRef(owner.user, owner.live) : { userId: null, dependsOn: [] as string[] };
      const group = spare.get(`${ownerEmail === null ? '*' : userKey(ownerEmail)}|${rule.action}`) ?? [];
      const overlapping = parsed ? group.filter((e) => e.parsed !== null && rulesOverlap(parsed, e.parsed)) : [];
      const label = `rule ${ruleLabel(rule, ownerEmail)}`;
      const wanted = { action: rule.action, destination: rule.destination.trim(), port_type: rule.port_type, port_range: rule.port_range?.trim() || null };
      const adoptable = overlapping.find((e) => !e.used && this.#managesLiveRule(e.rule));
      const id = `rule:${key}`;
      const makeRoom = overlapping.filter((e) => e !== adoptable);
      const dependsOn = [...ownerRef.dependsOn];
      for (const other of makeRoom) {
        // Another live rule in the way: it must be gone before this one fits (prune deletes it).
        const otherKey = this.#index.ruleKeyOf.get(other.rule)!;
        if (this.#desired.settings.prune && this.#managesLiveRule(other.rule) && !other.used) {
          other.used = true;
          this.#claimedRules.add(other.rule);
          this.#planRuleDelete(other.rule, PHASE.makeRoom, `declared in no file (prune); deleted first to make room for ${label}`);
          dependsOn.push(`rule:${otherKey}`);
        } else if (!other.used) {
          this.#warnings.push(`${label} overlaps the live rule ${ruleLabel(other.rule, this.#index.ruleOwnerOf(other.rule))} that no file declares${this.#desired.settings.prune ? ' and netform does not manage' : ' (prune is off)'}: the server will refuse it until that rule is removed`);
        }
      }
      if (adoptable) {
        adoptable.used = true;
        this.#claimedRules.add(adoptable.rule);
        const live = adoptable.rule;
        const fields: FieldChange[] = [];
        const body: Record<string, unknown> = {};
        if (normalizeDestination(live.destination) !== normalizeDestination(wanted.destination)) {
          fields.push({ field: 'destination', before: live.destination, after: wanted.destination });
          body.destination = wanted.destination;
        }
        // port_type and port_range go together: both are sent when either changes.
        if (live.port_type !== wanted.port_type || normalizePortRange(live.port_range) !== normalizePortRange(wanted.port_range)) {
          if (live.port_type !== wanted.port_type) fields.push({ field: 'port_type', before: live.port_type, after: wanted.port_type });
          if (normalizePortRange(live.port_range) !== normalizePortRange(wanted.port_range)) fields.push({ field: 'port_range', before: live.port_range, after: wanted.port_range });
          body.port_type = wanted.port_type;
          body.port_range = wanted.port_range;
        }
        this.#add({
          id, kind: 'rule', action: 'update', key, label, liveId: live.id, phase: PHASE.members, fingerprint: fingerprintOf('rule', live), fields, body,
          note: `replaces the overlapping rule ${ruleLabel(live, this.#index.ruleOwnerOf(live))} in place`,
          ...(dependsOn.length ? { dependsOn } : {}),
        });
        continue;
      }
      const body: Record<string, unknown> = { ...wanted, user_id: ownerRef.userId };
      const fields: FieldChange[] = (['action', 'destination', 'port_type', 'port_range'] as const)
        .filter((f) => wanted[f] !== null)
        .map((f) => ({ field: f, before: null, after: wanted[f] }));
      if (ownerEmail !== null) fields.push({ field: 'user', before: null, after: ownerEmail });
      this.#add({ id, kind: 'rule', action: 'create', key, label, phase: PHASE.members, fingerprint: null, fields, body, ...(dependsOn.length ? { dependsOn } : {}) });
    }
  }

  #managesLiveRule(rule: ApiRule): boolean {
    if (rule.user_id === null) return this.#scope.managesGlobalRule(rule.destination);
    const owner = this.#index.usersById.get(rule.user_id);
    return owner !== undefined && this.#scope.managesUser(owner.email);
  }

  #planRuleDelete(rule: ApiRule, phase: number, note: string): void {
    const key = this.#index.ruleKeyOf.get(rule)!;
    const id = `rule:${key}`;
    if (this.#changes.has(id) || this.#isDuplicated('rule', key)) return;
    this.#add({ id, kind: 'rule', action: 'delete', key, label: `rule ${ruleLabel(rule, this.#index.ruleOwnerOf(rule))}`, liveId: rule.id, phase, fingerprint: fingerprintOf('rule', rule), fields: [], note });
  }

  #planDeviceDelete(device: ApiDevice, note?: string): void {
    const key = this.#index.deviceKeyOf.get(device)!;
    const id = `device:${key}`;
    if (this.#changes.has(id) || this.#isDuplicated('device', key)) return;
    this.#add({ id, kind: 'device', action: 'delete', key, label: `device ${key}`, liveId: device.id, phase: PHASE.memberDeletes, fingerprint: fingerprintOf('device', device), fields: [], ...(note ? { note } : {}) });
  }

  #planUserDelete(user: ApiUser, note?: string): void {
    const key = userKey(user.email);
    const id = `user:${key}`;
    if (this.#changes.has(id) || this.#isDuplicated('user', key)) return;
    const cascade: CascadeItem[] = [];
    for (const device of this.#index.devicesByUserId.get(user.id) ?? []) {
      const deviceId = `device:${this.#index.deviceKeyOf.get(device)}`;
      this.#changes.delete(deviceId);
      cascade.push({ kind: 'device', key: this.#index.deviceKeyOf.get(device)!, liveId: device.id, label: `device ${this.#index.deviceKeyOf.get(device)}`, fingerprint: fingerprintOf('device', device) });
    }
    for (const rule of this.#index.rulesByUserId.get(user.id) ?? []) {
      this.#changes.delete(`rule:${this.#index.ruleKeyOf.get(rule)}`);
      cascade.push({ kind: 'rule', key: this.#index.ruleKeyOf.get(rule)!, liveId: rule.id, label: `rule ${ruleLabel(rule, user.email)}`, fingerprint: fingerprintOf('rule', rule) });
    }
    this.#deletedUserIds.add(user.id);
    this.#add({
      id, kind: 'user', action: 'delete', key, label: `user ${user.email}`, liveId: user.id, phase: PHASE.userDeletes, fingerprint: fingerprintOf('user', user), fields: [],
      ...(cascade.length ? { cascade } : {}), ...(note ? { note } : {}),
    });
  }

  // ---- absent and prune ----

  #planAbsent(): void {
    for (const { email } of this.#desired.absent.users) {
      const key = userKey(email);
      const live = this.#uniqueLive('user', key, this.#index.usersByKey.get(key));
      if (live) this.#planUserDelete(live, 'listed under absent');
    }
    for (const absent of this.#desired.absent.devices) {
      const key = deviceKey(absent.user, absent.name);
      if (this.#declaredUsers.get(userKey(absent.user))?.user.devices.some((d) => deviceKey(absent.user, d.name) === key)) {
        this.#problems.push(`device ${key} is both declared and listed under absent`);
        continue;
      }
      const live = this.#uniqueLive('device', key, this.#index.devicesByKey.get(key));
      if (live && !this.#deletedUserIds.has(live.user_id)) {
        this.#claimedDevices.add(live);
        this.#planDeviceDelete(live, 'listed under absent');
      }
    }
  }

  #planPrune(): void {
    for (const user of this.#live.users) {
      const key = userKey(user.email);
      if (this.#declaredUsers.has(key) || this.#deletedUserIds.has(user.id) || !this.#scope.managesUser(user.email)) continue;
      if (this.#scope.isProtected(user.email)) continue; // reported by the guard below when it would apply
      this.#planUserDelete(user, PRUNED);
    }
    for (const { user, live } of this.#declaredUsers.values()) {
      if (!live || !this.#scope.managesUser(user.email)) continue;
      for (const device of this.#index.devicesByUserId.get(live.id) ?? []) {
        if (!this.#claimedDevices.has(device)) this.#planDeviceDelete(device, PRUNED);
      }
      for (const rule of this.#index.rulesByUserId.get(live.id) ?? []) {
        if (!this.#claimedRules.has(rule)) this.#planRuleDelete(rule, PHASE.memberDeletes, PRUNED);
      }
    }
    for (const rule of this.#live.rules) {
      if (rule.user_id !== null || this.#claimedRules.has(rule) || !this.#scope.managesGlobalRule(rule.destination)) continue;
      this.#planRuleDelete(rule, PHASE.memberDeletes, PRUNED);
    }
  }

  /** A user's device limit: deletions of its devices go first when it also gets new devices. */
  #makeRoomForNewDevices(): void {
    const usersWithNewDevices = new Set<string>();
    for (const change of this.#changes.values()) {
      if (change.kind === 'device' && change.action === 'create' && typeof change.body?.user_id === 'string') usersWithNewDevices.add(change.body.user_id);
    }
    for (const change of this.#changes.values()) {
      if (change.kind !== 'device' || change.action !== 'delete' || !change.liveId) continue;
      const device = this.#index.devicesById.get(change.liveId);
      if (device && usersWithNewDevices.has(device.user_id)) change.phase = PHASE.makeRoom;
    }
  }

  /** Protected users, the token's owner and the last admin are never deleted or demoted. */
  #guardUserRemovals(): void {
    const tokenUser = this.#options.tokenUser ? userKey(this.#options.tokenUser) : null;
    const removals = [...this.#changes.values()].filter(
      (c) => c.kind === 'user' && (c.action === 'delete' || (c.action === 'update' && c.body?.role === 'unprivileged')),
    );
    const cancel = (change: Change, why: string) => {
      const verb = change.action === 'delete' ? 'deleting' : 'demoting';
      this.#warnings.push(`not ${verb} ${change.label}: ${why}`);
      if (change.action === 'update' && change.fields.some((f) => f.field !== 'role')) {
        // Keep the rest of the update (a password rotation); drop only the demotion.
        change.fields = change.fields.filter((f) => f.field !== 'role');
        delete change.body!.role;
        change.phase = PHASE.users;
        return;
      }
      this.#changes.delete(change.id);
      if (change.liveId) this.#deletedUserIds.delete(change.liveId);
    };
    for (const change of removals) {
      const live = this.#index.usersById.get(change.liveId!)!;
      if (this.#scope.isProtected(live.email)) cancel(change, 'it is protected (settings.protect)');
      else if (tokenUser !== null && userKey(live.email) === tokenUser) cancel(change, 'the API token in use belongs to it');
      else if (tokenUser === null && change.action === 'delete' && live.role === 'admin') {
        cancel(change, "it is an admin and the token's owner is unknown; pass --token-user EMAIL (or NETFORM_TOKEN_USER) to allow deleting other admins");
      }
    }
    // Protected users that prune would have deleted.
    if (this.#desired.settings.prune) {
      for (const user of this.#live.users) {
        if (!this.#declaredUsers.has(userKey(user.email)) && this.#scope.managesUser(user.email) && this.#scope.isProtected(user.email)) {
          this.#warnings.push(`not deleting user ${user.email}: it is protected (settings.protect)`);
        }
      }
    }
    // The last admin: at least one admin must remain after the plan.
    const admins = new Set(this.#live.users.filter((u) => u.role === 'admin').map((u) => u.id));
    let remaining = admins.size;
    for (const change of this.#changes.values()) {
      if (change.kind !== 'user') continue;
      if (change.action === 'create' && change.body?.role === 'admin') remaining++;
      if (change.action === 'update' && change.body?.role === 'admin') remaining++;
    }
    const adminRemovals = [...this.#changes.values()]
      .filter((c) => c.kind === 'user' && c.liveId && admins.has(c.liveId) && (c.action === 'delete' || c.body?.role === 'unprivileged'))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    if (admins.size > 0 && adminRemovals.length >= remaining) {
      for (const change of adminRemovals.slice(Math.max(0, remaining - 1))) cancel(change, 'it would leave the server without an admin');
    }
  }

  // ---- the document ----

  #document(): Plan {
    const changes = [...this.#changes.values()].sort(
      (a, b) => (a.phase ?? 0) - (b.phase ?? 0) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
    const summary: PlanSummary = { create: 0, update: 0, delete: 0, replace: 0, cascade: 0 };
    for (const change of changes) {
      summary[change.action]++;
      summary.cascade! += change.cascade?.length ?? 0;
    }
    const liveCount = this.#live.users.length + this.#live.devices.length + this.#live.rules.length;
    const limits = this.#desired.settings.limits;
    return {
      format: PLAN_FORMAT,
      format_version: PLAN_FORMAT_VERSION,
      created_at: this.#options.createdAt,
      server: this.#options.server,
      sources: [...this.#desired.sources],
      changes,
      summary,
      limits: [
        checkLimit('delete', summary.delete + summary.cascade!, liveCount, limits.delete, this.#options.allowDeletes),
        checkLimit('update', summary.update + summary.replace, liveCount, limits.update, this.#options.allowUpdates),
      ],
      warnings: this.#warnings,
      settings: {
        prune: this.#desired.settings.prune,
        replace: this.#options.replace ?? false,
        rotatePasswords: this.#options.rotatePasswords ?? false,
        tokenUser: this.#options.tokenUser ?? null,
      },
    };
  }
}

const KIND_ORDER = { configuration: -1, user: 0, device: 1, rule: 2 } as const;
const PRUNED = 'declared in no file (prune)';

/** Fields of a declared device sent on create: the managed ones, and flags set on. */
function createFields(device: DesiredDevice): WritableDeviceField[] {
  const managed = new Set<WritableDeviceField>(managedDeviceFields(device.fields));
  for (const field of Object.keys(device.fields) as WritableDeviceField[]) {
    if (field.startsWith('use_default_') && device.fields[field] !== undefined) managed.add(field);
  }
  return [...managed];
}

/** Fields left to the server's default by the declaration (use_default_<x> on). */
function defaultedFields(device: DesiredDevice): string[] {
  return Object.entries(device.fields)
    .filter(([field, value]) => field.startsWith('use_default_') && value === true)
    .map(([field]) => field.slice('use_default_'.length));
}
