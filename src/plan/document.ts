/** The plan document: ordered changes, the summary, the safety limits, warnings and settings. */
import type { PlanContext } from './context.js';
import { configuredAllowances, evaluateLimits, summarize } from './limits.js';
import { orderedChanges } from './ordering.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, type Plan, type UndeclaredItem } from './types.js';

export function planDocument(ctx: PlanContext, undeclared: UndeclaredItem[]): Plan {
  const changes = orderedChanges(ctx);
  const summary = summarize(changes);
  const liveCount = ctx.live.users.length + ctx.live.devices.length + ctx.live.rules.length;
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
    settings: {
      prune: ctx.prune,
      replace: ctx.replaceDevices,
      rotatePasswords: ctx.options.rotatePasswords ?? false,
      tokenUser: ctx.options.tokenUser ?? null,
    },
    ...(ctx.notChecked.length > 0 ? { not_checked: ctx.notChecked } : {}),
  };
}
