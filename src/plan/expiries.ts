/**
 * Expiries in the plan (src/desired/expiry.ts made the effective state): live rules whose
 * declaration expired are deleted whatever `prune` says, and each change an expiry causes (a
 * deletion, a demotion) names it in `expired`, which the views word, `apply --expired-only` keeps
 * and a limit's refusal lists.
 */
import { ruleKey, userKey } from '../model/keys.js';
import { parseInstant } from '../model/instant.js';
import type { Expiry } from '../model/state.js';
import { narrowPlan } from './target.js';
import type { Change, Plan } from './types.js';
import { PHASE, type PlanContext } from './context.js';
import { planRuleDelete } from './deletions.js';
import { withNotePart } from './notes.js';

/** The live rules of expired declarations: deleted (prune on or off), unless their user is deleted already. */
export function planExpiredRules(ctx: PlanContext): void {
  for (const { user, rule } of ctx.desired.expiredRules ?? []) {
    const owner = user === null ? undefined : ctx.index.usersByKey.get(userKey(user));
    if (user !== null && (!owner || ctx.deletedUserIds.has(owner.id))) continue;
    const key = ruleKey({
      ownerEmail: owner ? owner.email : null,
      action: rule.action,
      destination: rule.destination,
      port_type: rule.port_type,
      port_range: rule.port_range,
    });
    const live = ctx.uniqueLive('rule', key, ctx.index.rulesByKey.get(key));
    if (!live || ctx.claimedRules.has(live)) continue;
    ctx.claimedRules.add(live);
    planRuleDelete(ctx, live, PHASE.memberDeletes, [{ code: 'expired', expires: expiryOf(ctx, 'rule', key) }]);
  }
}

function expiryOf(ctx: PlanContext, kind: string, key: string): string | undefined {
  return ctx.desired.expiries?.find((e) => e.expired && e.kind === kind && e.key === key)?.expires;
}

/**
 * Marks the changes expiries cause (`expired`: deletions of expired objects, demotions of expired
 * roles), and the changes that grant something that will expire (`expires`: the earliest expiry of
 * what the change writes, its user's included), so that a saved or reviewed plan applied after that
 * instant is refused for it.
 */
export function markExpiries(ctx: PlanContext): void {
  const all = ctx.desired.expiries ?? [];
  if (all.length === 0) return;
  markGrants(
    ctx,
    all.filter((e) => !e.expired),
  );
  const expired = all.filter((e) => e.expired);
  for (const item of expired) {
    const kind = item.kind === 'role' ? 'user' : item.kind;
    const change = ctx.changes.get(`${kind}:${item.key}`);
    if (!change) continue;
    if (item.kind === 'role') {
      if (change.action !== 'update' || change.body?.role !== 'unprivileged') continue;
      change.expired = item.expires;
      change.note = withNotePart(change.note, { code: 'role_expired', expires: item.expires });
    } else if (change.action === 'delete') {
      change.expired = item.expires;
    }
  }
}

/** Whether a device key (`EMAIL/NAME`) or a rule key (`EMAIL|...`) belongs to the user of this key. */
function ownedBy(kind: string, key: string, user: string): boolean {
  if (kind === 'device') return key.startsWith(`${user}/`);
  return kind === 'rule' && key.startsWith(`${user}|`);
}

function earlier(a: Expiry | undefined, b: Expiry | undefined): Expiry | undefined {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(b.instant) < Date.parse(a.instant) ? b : a;
}

/** `expires` on each create, update or replace of an object that expires (or whose user does). */
function markGrants(ctx: PlanContext, coming: Expiry[]): void {
  if (coming.length === 0) return;
  const byKey = new Map(coming.map((e) => [`${e.kind}:${e.key}`, e]));
  const users = coming.filter((e) => e.kind === 'user');
  for (const change of ctx.changes.values()) {
    if (change.action === 'delete' || change.kind === 'configuration') continue;
    let when = byKey.get(`${change.kind}:${change.key}`);
    for (const user of users) if (ownedBy(change.kind, change.key, user.key)) when = earlier(when, user);
    // A user written as an admin grants the role until role_expires.
    if (change.kind === 'user' && change.body?.role === 'admin') when = earlier(when, byKey.get(`role:${change.key}`));
    if (when) change.expires = when.expires;
  }
}

/** The instant of an expiry as written (`expires`), or null when it cannot be read. */
function instantOf(written: string): number | null {
  const parsed = parseInstant(written);
  return parsed.ok ? parsed.instant.getTime() : null;
}

/** The changes of a plan that grant something expired at `at` (their `expires` has passed). */
export function grantsExpiredAt(plan: Pick<Plan, 'changes'>, at: Date): Change[] {
  return plan.changes.filter((change) => {
    if (change.expires === undefined) return false;
    const when = instantOf(change.expires);
    return when !== null && when <= at.getTime();
  });
}

/**
 * `apply --expired-only`: the plan narrowed to the deletions and demotions expiries cause, and the
 * labels of every other change, which are not written.
 */
export function expiredOnly(plan: Plan): { plan: Plan; others: string[] } {
  const kept = plan.changes.filter((change) => change.expired !== undefined);
  const others = plan.changes.filter((change) => change.expired === undefined).map((change) => change.label);
  return { plan: narrowPlan(plan, kept), others };
}

/**
 * A saved plan's change that grants something expired by the time it is applied: why the plan is
 * stale, as a code with the change's label and its `expires:` as written (src/views/apply.ts words it).
 */
export interface ExpiredSincePlan {
  code: 'expired_since_plan';
  label: string;
  expires: string;
}

export function expiredSincePlan(change: Change): ExpiredSincePlan {
  return { code: 'expired_since_plan', label: change.label, expires: change.expires ?? '' };
}
