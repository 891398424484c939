/**
 * Matching: declared users and devices are paired with live ones by natural key; a pair whose
 * values differ (fields left out count at their default: defaults.ts) is an update (or, for device fields a 0.7.26+ server ignores, a replacement), a
 * declaration without a live object is a create.
 */
import { fieldOfFlag, isLegacyUpdatable, useDefaultFlag, type WritableDeviceField } from '../model/device-fields.js';
import { deviceKeyOfOwnerKey, userKey } from '../model/keys.js';
import type { Secret } from '../model/secret.js';
import type { DesiredDevice, DesiredDeviceFields, DesiredUser } from '../model/state.js';
import type { ApiDevice, ApiUser } from '../model/types.js';
import { PHASE, type OwnerRef, type PlanContext } from './context.js';
import { changedDeviceFields, liveDeviceBody, managedDeviceFields } from './device-fields.js';
import { comparedDeviceFields, DEFAULT_ROLE, managedRole, nowManagedNote } from './defaults.js';
import { fingerprintOf } from './fingerprint.js';
import type { NotePart } from './notes.js';
import { checkDeviceRenameTarget, renamedDevice } from './renames.js';
import { planSecret } from './secrets.js';
import type { SecretSend } from './problems.js';
import type { FieldChange, PlanSecret } from './types.js';

/** Pairs every declared user with its live user (by email). */
export function matchDeclaredUsers(ctx: PlanContext): void {
  const absentUsers = new Set(ctx.desired.absent.users.map((u) => userKey(u.email)));
  for (const user of ctx.desired.users) {
    const key = userKey(user.email);
    if (absentUsers.has(key)) ctx.problems.push({ code: 'declared_and_absent', kind: 'user', name: user.email });
    ctx.declaredUsers.set(key, { user, live: ctx.uniqueLive('user', key, ctx.index.usersByKey.get(key)) });
  }
}

export function planUsers(ctx: PlanContext): void {
  for (const [key, { user, live, renamedFrom }] of ctx.declaredUsers) planUser(ctx, key, user, live, renamedFrom);
}

export function planDevices(ctx: PlanContext): void {
  for (const { user, live } of ctx.declaredUsers.values()) planUserDevices(ctx, user, live);
}

function planUser(
  ctx: PlanContext,
  key: string,
  user: DesiredUser,
  live: ApiUser | undefined,
  renamedFrom?: string,
): void {
  const id = `user:${key}`;
  const label = `user ${user.email}`;
  if (!live) {
    const body: Record<string, unknown> = { email: user.email.trim() };
    const fields: FieldChange[] = [{ field: 'email', before: null, after: user.email.trim() }];
    if (user.role) body.role = user.role;
    fields.push({ field: 'role', before: null, after: user.role ?? 'unprivileged' });
    const secrets: PlanSecret[] = [];
    if (user.password && sendable(ctx, { send: 'user_created', email: user.email }, user.password)) {
      secrets.push(planSecret('password', user.password));
      fields.push({ field: 'password', before: null, after: null, sensitive: true });
    }
    ctx.add({
      id,
      kind: 'user',
      action: 'create',
      key,
      label,
      phase: PHASE.users,
      fingerprint: null,
      fields,
      body,
      ...(secrets.length ? { secrets } : {}),
    });
    return;
  }
  const fields: FieldChange[] = [];
  const body: Record<string, unknown> = {};
  const secrets: PlanSecret[] = [];
  // A rename, or the same email in another case (the key is case-insensitive; the server keeps the case written).
  if (renamedFrom !== undefined || live.email !== user.email.trim()) {
    fields.push({ field: 'email', before: live.email, after: user.email.trim() });
    body.email = user.email.trim();
  }
  const nowManaged: string[] = [];
  const role = managedRole(user, ctx.desired.settings);
  if (role !== undefined && role !== live.role) {
    fields.push({ field: 'role', before: live.role, after: role });
    body.role = role;
    if (user.role === undefined) nowManaged.push('role');
  } else if (role === undefined && live.role !== (user.role ?? DEFAULT_ROLE)) {
    ctx.held.kept.push({
      reason: 'ignored',
      id,
      field: 'role',
      text: { code: 'role_ignored', label, role: live.role },
    });
  }
  if (
    ctx.options.rotatePasswords &&
    user.password &&
    sendable(ctx, { send: 'password_rotated', email: user.email }, user.password)
  ) {
    fields.push({ field: 'password', before: null, after: null, sensitive: true, resent: true });
    secrets.push(planSecret('password', user.password));
  }
  if (fields.length === 0) return;
  const demotes = body.role === 'unprivileged' && live.role === 'admin';
  ctx.add({
    id,
    kind: 'user',
    action: 'update',
    key,
    label,
    liveId: live.id,
    phase: demotes ? PHASE.userDeletes : PHASE.users,
    fingerprint: fingerprintOf('user', live),
    fields,
    body,
    ...(secrets.length ? { secrets } : {}),
    ...noteOf(ctx, renamedFrom !== undefined ? [{ code: 'user_renamed', from: renamedFrom }] : undefined, nowManaged),
  });
}

/** A change's note and `now_managed` members: the now-managed note first (src/plan/defaults.ts). */
function noteOf(
  ctx: PlanContext,
  note: NotePart[] | undefined,
  nowManaged: string[],
): { note?: NotePart[]; now_managed?: string[] } {
  // Version 2 files mean their defaults as written: nothing there is "now managed".
  if (nowManaged.length === 0 || ctx.desired.version === 2) return note === undefined ? {} : { note };
  const managed = nowManagedNote(nowManaged);
  return { note: note === undefined ? managed : [...managed, ...note], now_managed: nowManaged };
}

function planUserDevices(ctx: PlanContext, user: DesiredUser, liveUser: ApiUser | undefined): void {
  const owner = ctx.ownerRef(user, liveUser);
  const ownerKey = userKey(user.email);
  // A renamed user's devices are found under its live (old) email.
  const liveOwnerKey = liveUser ? userKey(liveUser.email) : ownerKey;
  for (const device of user.devices) {
    const key = deviceKeyOfOwnerKey(ownerKey, device.name);
    const liveKey = liveOwnerKey === ownerKey ? key : deviceKeyOfOwnerKey(liveOwnerKey, device.name);
    const live = liveUser ? ctx.uniqueLive('device', liveKey, ctx.index.devicesByKey.get(liveKey)) : undefined;
    if (live) {
      for (const same of ctx.allWithKey('device', liveKey, live)) ctx.claimedDevices.add(same);
      checkDeviceRenameTarget(ctx, device, liveUser!, live);
      planDeviceUpdate(ctx, key, device, live);
      continue;
    }
    const renamed = liveUser ? renamedDevice(ctx, user, liveUser, device) : undefined;
    if (renamed) {
      ctx.claimedDevices.add(renamed);
      planDeviceUpdate(ctx, key, device, renamed);
    } else {
      planDeviceCreate(ctx, key, device, owner);
    }
  }
}

function planDeviceCreate(ctx: PlanContext, key: string, device: DesiredDevice, owner: OwnerRef): void {
  const body: Record<string, unknown> = { user_id: owner.userId, name: device.name.trim() };
  const fields: FieldChange[] = [{ field: 'name', before: null, after: device.name.trim() }];
  for (const field of createFields(device)) {
    body[field] = device.fields[field];
    fields.push({ field, before: null, after: device.fields[field] });
  }
  const secrets: PlanSecret[] = [];
  if (device.preshared_key && sendable(ctx, { send: 'device_created', key }, device.preshared_key)) {
    secrets.push(planSecret('preshared_key', device.preshared_key));
    fields.push({ field: 'preshared_key', before: null, after: null, sensitive: true });
  }
  ctx.add({
    id: `device:${key}`,
    kind: 'device',
    action: 'create',
    key,
    label: `device ${key}`,
    phase: PHASE.members,
    fingerprint: null,
    fields,
    body,
    ...(secrets.length ? { secrets } : {}),
    ...(owner.dependsOn.length ? { dependsOn: owner.dependsOn } : {}),
  });
}

function planDeviceUpdate(ctx: PlanContext, key: string, device: DesiredDevice, live: ApiDevice): void {
  const compared = comparedDeviceFields(device, ctx.desired.settings);
  const changed = changedDeviceFields(device, live, compared.fields);
  const fields: FieldChange[] = changed.map((field) => ({ field, before: live[field], after: compared.fields[field] }));
  const nowManaged = compared.defaulted.filter((field) => changed.includes(useDefaultFlag(field)));
  noteIgnoredDifferences(ctx, key, device, live, compared.ignored);
  const renamed = live.name.trim() !== device.name.trim();
  if (renamed) fields.unshift({ field: 'name', before: live.name, after: device.name.trim() });
  const pskChanged = presharedKeyChanged(ctx, key, device, live);
  if (pskChanged) fields.push({ field: 'preshared_key', before: null, after: null, sensitive: true });
  if (fields.length === 0) return;
  const base = {
    id: `device:${key}`,
    kind: 'device' as const,
    key,
    label: `device ${key}`,
    liveId: live.id,
    fingerprint: fingerprintOf('device', live),
    fields,
  };
  const ignoredByLegacyServers = changed.some((f) => !isLegacyUpdatable(f)) || pskChanged;
  if (ctx.replaceDevices && ignoredByLegacyServers) {
    // Delete then create, keeping what the files do not change: keys, pinned addresses, other values.
    const body: Record<string, unknown> = { user_id: live.user_id, name: device.name.trim(), ...liveDeviceBody(live) };
    for (const field of managedDeviceFields(compared.fields)) body[field] = compared.fields[field];
    for (const field of defaultedFields(compared.fields)) delete body[field];
    const keepFromLive = !device.preshared_key && live.preshared_key ? ['preshared_key'] : [];
    if (device.preshared_key) sendable(ctx, { send: 'device_replaced', key }, device.preshared_key);
    ctx.add({
      ...base,
      action: 'replace',
      phase: PHASE.members,
      body,
      ...(device.preshared_key ? { secrets: [planSecret('preshared_key', device.preshared_key)] } : {}),
      ...(keepFromLive.length ? { keepFromLive } : {}),
      ...noteOf(
        ctx,
        [
          ...(renamed ? [{ code: 'renamed', from: live.name } as const] : []),
          { code: 'device_replaced', fields: fields.map((f) => f.field) },
        ],
        nowManaged,
      ),
    });
    return;
  }
  if (pskChanged && device.preshared_key) sendable(ctx, { send: 'psk_changed', key }, device.preshared_key);
  const body: Record<string, unknown> = {};
  if (renamed) body.name = device.name.trim();
  for (const field of changed) body[field] = compared.fields[field];
  ctx.add({
    ...base,
    action: 'update',
    phase: PHASE.members,
    body,
    ...noteOf(
      ctx,
      renamed ? [{ code: 'device_renamed', from: live.name, fields: fields.map((f) => f.field) }] : undefined,
      nowManaged,
    ),
    ...(pskChanged && device.preshared_key ? { secrets: [planSecret('preshared_key', device.preshared_key)] } : {}),
  });
}

/** Fields of a declared device sent on create: the managed ones, and flags set on. */
function createFields(device: DesiredDevice): WritableDeviceField[] {
  const managed = new Set<WritableDeviceField>(managedDeviceFields(device.fields));
  for (const field of Object.keys(device.fields) as WritableDeviceField[]) {
    if (fieldOfFlag(field) !== undefined && device.fields[field] !== undefined) managed.add(field);
  }
  return [...managed];
}

/**
 * Ignored fields (`ignore_changes`) whose live value differs from what the file would otherwise
 * mean: not changed, and said so (kept, in the plan's outcome).
 */
function noteIgnoredDifferences(
  ctx: PlanContext,
  key: string,
  device: DesiredDevice,
  live: ApiDevice,
  ignored: ReadonlySet<string>,
): void {
  if (ignored.size === 0) return;
  const unignored = comparedDeviceFields(
    { ...device, ignore_changes: [] },
    { ...ctx.desired.settings, ignore_changes: undefined },
  );
  for (const field of changedDeviceFields(device, live, unignored.fields)) {
    const governed = fieldOfFlag(field) ?? field;
    if (!ignored.has(governed)) continue;
    ctx.held.kept.push({
      reason: 'ignored',
      id: `device:${key}`,
      field,
      text: { code: 'field_ignored', key, field, value: live[field] },
    });
  }
}

/** Fields left to the server's default by the declaration (their default flag on). */
function defaultedFields(fields: DesiredDeviceFields): string[] {
  return Object.entries(fields).flatMap(([name, value]) => {
    const field = fieldOfFlag(name);
    return field !== undefined && value === true ? [field] : [];
  });
}

/**
 * Whether a secret a change sends can be sent: read now, and checked as the server checks it.
 * When it cannot be, a problem names where it is declared, the object, why it is sent and the
 * reference's problem (the plan stops, exit 1); `unreadableSecrets: report` (drift, which never
 * sends) reads nothing; `unpin` (plan) sends a variable it cannot read all the same, read at apply
 * and not pinned (planSecret marks it), while a file it cannot read is still a problem.
 */
function sendable(ctx: PlanContext, why: SecretSend, secret: Secret): boolean {
  const mode = ctx.options.unreadableSecrets;
  if (mode === 'report') return true;
  const read = secret.read();
  const problem = {
    code: 'secret_unsendable',
    ...(secret.at ? { at: secret.at } : {}),
    ref: secret.ref,
    ...why,
  } as const;
  if ('unreadable' in read) {
    if (mode === 'unpin' && !('file' in secret.ref)) return true;
    ctx.problems.push({ ...problem, unreadable: read.unreadable });
  } else if ('invalid' in read) ctx.problems.push({ ...problem, invalid: read.invalid });
  return 'value' in read;
}

/**
 * Whether the declared preshared key differs from the live one. A key that cannot be read here is
 * not compared: the plan lists it as not checked, never as matching.
 */
function presharedKeyChanged(ctx: PlanContext, key: string, device: DesiredDevice, live: ApiDevice): boolean {
  if (device.preshared_key === undefined) return false;
  const read = device.preshared_key.read();
  if ('unreadable' in read) {
    ctx.notChecked.push({
      id: `device:${key}`,
      label: `device ${key}`,
      field: 'preshared_key',
      reason: read.unreadable,
    });
    return false;
  }
  // A value the server would refuse is never equal to the live key: the update then reports it.
  return !('value' in read) || read.value !== live.preshared_key;
}
