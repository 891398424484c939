/** The plan document: ordered changes, the summary, the safety limits, warnings, the outcome and settings. */
import { notCheckedLine } from '../views/model-secret.js';
import type { PlanContext } from './context.js';
import { configuredAllowances, evaluateLimits, summarize } from './limits.js';
import { orderedChanges } from './ordering.js';
import { outcomeOf, undeclaredOutcome } from './outcome.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, type Plan, type UndeclaredItem } from './types.js';

export function planDocument(ctx: PlanContext, undeclared: UndeclaredItem[]): Plan {
  const changes = orderedChanges(ctx);
  const summary = summarize(changes);
  const liveCount = ctx.live.users.length + ctx.live.devices.length + ctx.live.rules.length;
  // An object a guard kept is in the outcome once, for the guard's reason.
  const held = new Set([...ctx.held.pending, ...ctx.held.kept].map((item) => item.id));
  const fromUndeclared = undeclaredOutcome(
    undeclared.filter((item) => !held.has(`${item.kind}:${item.key}`)),
    ctx.desired.settings.drift?.undeclared ?? 'access',
    (item) => ctx.index.usersById.get(item.liveId)?.role === 'admin',
    (item) => ctx.scope.isProtected(item.key),
    (item) => (ctx.index.rulesByUserId.get(item.liveId)?.length ?? 0) > 0,
  );
  return {
    format: PLAN_FORMAT,
    format_version: PLAN_FORMAT_VERSION,
    created_at: ctx.options.createdAt,
    server: ctx.options.server,
    sources: [...ctx.desired.sources],
    changes,
    summary,
    limits: evaluateLimits(summary, configuredAllowances(liveCount, ctx.desired.settings.limits), ctx.options),
    warnings: ctx.warnings,
    undeclared,
    outcome: outcomeOf(changes, {
      pending: [...ctx.held.pending, ...fromUndeclared.pending],
      kept: [...ctx.held.kept, ...fromUndeclared.kept],
      not_checked: ctx.notChecked.map((item) => ({
        reason: 'not_checked' as const,
        id: item.id,
        text: notCheckedLine(item),
      })),
    }),
    settings: {
      prune: ctx.prune,
      replace: ctx.replaceDevices,
      rotatePasswords: ctx.options.rotatePasswords ?? false,
      tokenUser: ctx.options.tokenUser ?? null,
    },
    ...(ctx.notChecked.length > 0 ? { not_checked: ctx.notChecked } : {}),
  };
}
