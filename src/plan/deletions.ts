/**
 * Deletions: objects listed under `absent`, and (prune on) live objects in the managed scope
 * that no file declares. A user's deletion carries its devices and rules as a cascade.
 */
import { deviceKey, userKey } from '../model/keys.js';
import type { ApiDevice, ApiRule, ApiUser } from '../model/types.js';
import { PHASE, type PlanContext } from './context.js';
import { fingerprintOf } from './fingerprint.js';
import { ruleLabel } from './live-index.js';
import type { NotePart } from './notes.js';
import type { CascadeItem } from './types.js';

/** The note of a deletion of a live object no file declares, with prune on. */
const PRUNED: NotePart[] = [{ code: 'pruned' }];

export function planRuleDelete(ctx: PlanContext, rule: ApiRule, phase: number, note: NotePart[]): void {
  const key = ctx.index.ruleKeyOf.get(rule)!;
  const id = `rule:${key}`;
  if (ctx.changes.has(id) || ctx.isDuplicated('rule', key)) return;
  ctx.add({
    id,
    kind: 'rule',
    action: 'delete',
    key,
    label: `rule ${ruleLabel(rule, ctx.index.ruleOwnerOf(rule))}`,
    liveId: rule.id,
    phase,
    fingerprint: fingerprintOf('rule', rule),
    fields: [],
    note,
  });
}

export function planDeviceDelete(ctx: PlanContext, device: ApiDevice, note?: NotePart[]): void {
  const key = ctx.index.deviceKeyOf.get(device)!;
  const id = `device:${key}`;
  if (ctx.changes.has(id) || ctx.isDuplicated('device', key)) return;
  ctx.add({
    id,
    kind: 'device',
    action: 'delete',
    key,
    label: `device ${key}`,
    liveId: device.id,
    phase: PHASE.memberDeletes,
    fingerprint: fingerprintOf('device', device),
    fields: [],
    ...(note ? { note } : {}),
  });
}

export function planUserDelete(ctx: PlanContext, user: ApiUser, note?: NotePart[]): void {
  const key = userKey(user.email);
  const id = `user:${key}`;
  if (ctx.changes.has(id) || ctx.isDuplicated('user', key)) return;
  const cascade: CascadeItem[] = [];
  for (const device of ctx.index.devicesByUserId.get(user.id) ?? []) {
    const deviceId = `device:${ctx.index.deviceKeyOf.get(device)}`;
    ctx.changes.delete(deviceId);
    cascade.push({
      kind: 'device',
      key: ctx.index.deviceKeyOf.get(device)!,
      liveId: device.id,
      label: `device ${ctx.index.deviceKeyOf.get(device)}`,
      fingerprint: fingerprintOf('device', device),
    });
  }
  for (const rule of ctx.index.rulesByUserId.get(user.id) ?? []) {
    ctx.changes.delete(`rule:${ctx.index.ruleKeyOf.get(rule)}`);
    cascade.push({
      kind: 'rule',
      key: ctx.index.ruleKeyOf.get(rule)!,
      liveId: rule.id,
      label: `rule ${ruleLabel(rule, user.email)}`,
      fingerprint: fingerprintOf('rule', rule),
    });
  }
  ctx.deletedUserIds.add(user.id);
  ctx.add({
    id,
    kind: 'user',
    action: 'delete',
    key,
    label: `user ${user.email}`,
    liveId: user.id,
    phase: PHASE.userDeletes,
    fingerprint: fingerprintOf('user', user),
    fields: [],
    ...(cascade.length ? { cascade } : {}),
    ...(note ? { note } : {}),
  });
}

export function planAbsent(ctx: PlanContext): void {
  for (const { email, expired } of ctx.desired.absent.users) {
    const key = userKey(email);
    const live = ctx.uniqueLive('user', key, ctx.index.usersByKey.get(key));
    if (live) planUserDelete(ctx, live, [expired ? { code: 'expired', expires: expired } : { code: 'absent' }]);
  }
  for (const absent of ctx.desired.absent.devices) {
    const key = deviceKey(absent.user, absent.name);
    if (ctx.declaredUsers.get(userKey(absent.user))?.user.devices.some((d) => deviceKey(absent.user, d.name) === key)) {
      ctx.problems.push({ code: 'declared_and_absent', kind: 'device', name: key });
      continue;
    }
    const live = ctx.uniqueLive('device', key, ctx.index.devicesByKey.get(key));
    if (live && !ctx.deletedUserIds.has(live.user_id)) {
      ctx.claimedDevices.add(live);
      planDeviceDelete(ctx, live, [absent.expired ? { code: 'expired', expires: absent.expired } : { code: 'absent' }]);
    }
  }
}

export function planPrune(ctx: PlanContext): void {
  if (!ctx.prune) return;
  for (const user of ctx.live.users) {
    const key = userKey(user.email);
    if (
      ctx.declaredUsers.has(key) ||
      ctx.matchedUserIds.has(user.id) ||
      ctx.deletedUserIds.has(user.id) ||
      !ctx.scope.managesUser(user.email)
    )
      continue;
    if (ctx.scope.isProtected(user.email)) continue; // reported by the guards when it would apply
    planUserDelete(ctx, user, PRUNED);
  }
  for (const { user, live } of ctx.declaredUsers.values()) {
    if (!live || !ctx.scope.managesUser(user.email)) continue;
    for (const device of ctx.index.devicesByUserId.get(live.id) ?? []) {
      if (!ctx.claimedDevices.has(device)) planDeviceDelete(ctx, device, PRUNED);
    }
    for (const rule of ctx.index.rulesByUserId.get(live.id) ?? []) {
      if (!ctx.claimedRules.has(rule)) planRuleDelete(ctx, rule, PHASE.memberDeletes, PRUNED);
    }
  }
  for (const rule of ctx.live.rules) {
    if (rule.user_id !== null || ctx.claimedRules.has(rule) || !ctx.scope.managesGlobalRule(rule.destination)) continue;
    planRuleDelete(ctx, rule, PHASE.memberDeletes, PRUNED);
  }
}
