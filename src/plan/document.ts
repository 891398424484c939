/** The plan document: ordered changes, the summary, the safety limits, warnings, the outcome and settings. */
import type { PlanContext } from './context.js';
import { checkLimit } from './limits.js';
import { orderedChanges } from './ordering.js';
import { outcomeOf, undeclaredOutcome } from './outcome.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, type Plan, type PlanSummary, type UndeclaredItem } from './types.js';

export function planDocument(ctx: PlanContext, undeclared: UndeclaredItem[]): Plan {
  const changes = orderedChanges(ctx);
  const summary: PlanSummary = { create: 0, update: 0, delete: 0, replace: 0, cascade: 0 };
  for (const change of changes) {
    summary[change.action]++;
    summary.cascade! += change.cascade?.length ?? 0;
  }
  const liveCount = ctx.live.users.length + ctx.live.devices.length + ctx.live.rules.length;
  const limits = ctx.desired.settings.limits;
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
    limits: [
      checkLimit('delete', summary.delete + summary.cascade!, liveCount, limits.delete, ctx.options.allowDeletes),
      checkLimit('update', summary.update + summary.replace, liveCount, limits.update, ctx.options.allowUpdates),
    ],
    warnings: ctx.warnings,
    undeclared,
    outcome: outcomeOf(changes, {
      pending: [...ctx.held.pending, ...fromUndeclared.pending],
      kept: [...ctx.held.kept, ...fromUndeclared.kept],
      not_checked: [],
    }),
    settings: {
      prune: ctx.prune,
      replace: ctx.replaceDevices,
      rotatePasswords: ctx.options.rotatePasswords ?? false,
      tokenUser: ctx.options.tokenUser ?? null,
    },
  };
}
