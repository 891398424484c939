/**
 * Undeclared objects: live users, devices and rules inside the managed scope that no file
 * declares (and no `absent` entry names). Runs after the guards, so each item says what the plan
 * finally does with it: deleted (prune on) or kept, and why.
 */
import { userKey } from '../model/keys.js';
import type { ApiDevice, ApiRule, ApiUser } from '../model/types.js';
import type { PlanContext } from './context.js';
import { ruleLabel } from './live-index.js';
import type { UndeclaredReason } from './notes.js';
import type { ResourceKind, UndeclaredItem } from './types.js';

export function findUndeclared(ctx: PlanContext): UndeclaredItem[] {
  const items: UndeclaredItem[] = [];
  const absentUsers = new Set(ctx.desired.absent.users.map((u) => userKey(u.email)));
  const item = (kind: ResourceKind, key: string, liveId: string, label: string): void => {
    const change = ctx.changes.get(`${kind}:${key}`);
    const deleted = change !== undefined && change.action === 'delete' && change.liveId === liveId;
    items.push({
      kind,
      key,
      liveId,
      label,
      fate: deleted ? 'delete' : 'keep',
      reason: deleted ? { code: 'prune_on' } : keptBecause(ctx, kind, key, label),
    });
  };
  for (const user of ctx.live.users) {
    const key = userKey(user.email);
    if (
      ctx.declaredUsers.has(key) ||
      ctx.matchedUserIds.has(user.id) ||
      absentUsers.has(key) ||
      !ctx.scope.managesUser(user.email)
    )
      continue;
    item('user', key, user.id, userLabel(ctx, user));
  }
  for (const { user, live } of ctx.declaredUsers.values()) {
    if (!live || !ctx.scope.managesUser(user.email)) continue;
    for (const device of ctx.index.devicesByUserId.get(live.id) ?? []) {
      if (!ctx.claimedDevices.has(device))
        item('device', ctx.index.deviceKeyOf.get(device)!, device.id, deviceLabel(ctx, device));
    }
    for (const rule of ctx.index.rulesByUserId.get(live.id) ?? []) {
      if (!ctx.claimedRules.has(rule)) item('rule', ctx.index.ruleKeyOf.get(rule)!, rule.id, liveRuleLabel(ctx, rule));
    }
  }
  for (const rule of ctx.live.rules) {
    if (rule.user_id !== null || ctx.claimedRules.has(rule) || !ctx.scope.managesGlobalRule(rule.destination)) continue;
    item('rule', ctx.index.ruleKeyOf.get(rule)!, rule.id, liveRuleLabel(ctx, rule));
  }
  return items;
}

function keptBecause(ctx: PlanContext, kind: ResourceKind, key: string, label: string): UndeclaredReason {
  if (!ctx.prune) return { code: 'kept', kind, by: 'prune_off' };
  if (kind === 'user' && ctx.scope.isProtected(key)) return { code: 'kept', kind, by: 'protected' };
  // A guard's warning says why (`not deleting user X: why`): quoted here, never pointed at unless it exists.
  const name = label.replace(/ \(with .*\)$/, '');
  const warning = ctx.warnings.find(
    (w) => typeof w !== 'string' && w.code === 'guarded' && w.action === 'delete' && w.label === name,
  );
  return warning !== undefined && typeof warning !== 'string' && warning.code === 'guarded'
    ? { code: 'kept', kind, by: 'not_deleted', guard: warning.why }
    : { code: 'kept', kind, by: 'not_deleted' };
}

function userLabel(ctx: PlanContext, user: ApiUser): string {
  // A device moved to a declared user (conflicts.ts) is claimed by its move: not counted here.
  const devices = (ctx.index.devicesByUserId.get(user.id) ?? []).filter((d) => !ctx.claimedDevices.has(d)).length;
  const rules = ctx.index.rulesByUserId.get(user.id)?.length ?? 0;
  const with_ = devices + rules > 0 ? ` (with ${plural(devices, 'device')}, ${plural(rules, 'rule')})` : '';
  return `user ${user.email}${with_}`;
}

function deviceLabel(ctx: PlanContext, device: ApiDevice): string {
  return `device ${ctx.index.deviceKeyOf.get(device)}`;
}

function liveRuleLabel(ctx: PlanContext, rule: ApiRule): string {
  return `rule ${ruleLabel(rule, ctx.index.ruleOwnerOf(rule))}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
