/**
 * Safety limits on one apply (docs/netform.md section 4). Without `settings.limits`, a plan may
 * delete at most 25% of the live objects (users, devices and rules together; cascades count) and
 * update at most 50% of them, and always at least 5 deletions and 10 updates so that a small
 * server can still be worked on. So one bad commit (a deleted file, a wrong glob with prune on)
 * cannot delete most of a server without someone saying so with --allow-deletes.
 * Limits written in the files apply exactly as written (a percentage rounds down).
 *
 * One function checks a plan against them, `evaluateLimits`: when the plan is made (allowances
 * from the files), when `--target` keeps part of it, and when a saved plan is applied (the
 * allowances it recorded, lifted again by this run's `--allow-*`).
 */
import type { Limit } from '../model/state.js';
import type { Change, LimitCheck, PlanSummary } from './types.js';

export const DEFAULT_LIMITS = {
  delete: { percent: 25, atLeast: 5 },
  update: { percent: 50, atLeast: 10 },
} as const;

export type LimitKind = LimitCheck['kind'];
const LIMIT_KINDS: readonly LimitKind[] = ['delete', 'update'];

/** How many objects a limit allows, and how that was written: `10%`, `25`, `default (25%, at least 5)`. */
export type LimitAllowance = Pick<LimitCheck, 'kind' | 'allowed' | 'source'>;

/** `--allow-deletes N` / `--allow-updates N`: this run allows N, whatever else says. */
export interface LimitOverrides {
  allowDeletes?: number;
  allowUpdates?: number;
}

/** The summary of a list of changes: counts per action, and the devices and rules that go with deleted users. */
export function summarize(changes: readonly Change[]): PlanSummary {
  const summary: PlanSummary = { create: 0, update: 0, delete: 0, replace: 0, cascade: 0 };
  for (const change of changes) {
    summary[change.action]++;
    summary.cascade += change.cascade?.length ?? 0;
  }
  return summary;
}

/** What a limit counts: deletions with their cascades, or updates with replacements. */
export function plannedCount(kind: LimitKind, summary: PlanSummary): number {
  return kind === 'delete' ? summary.delete + summary.cascade : summary.update + summary.replace;
}

/** The allowances of the files (`settings.limits`), or the defaults, for a server holding `liveCount` objects. */
export function configuredAllowances(
  liveCount: number,
  configured: { delete?: Limit; update?: Limit },
): LimitAllowance[] {
  return LIMIT_KINDS.map((kind) => {
    const limit = configured[kind];
    if (limit) {
      const allowed = limit.kind === 'count' ? limit.value : Math.floor((limit.value * liveCount) / 100);
      return { kind, allowed, source: limit.kind === 'count' ? String(limit.value) : `${limit.value}%` };
    }
    const d = DEFAULT_LIMITS[kind];
    const allowed = Math.max(d.atLeast, Math.floor((d.percent * liveCount) / 100));
    return { kind, allowed, source: { code: 'default', percent: d.percent, atLeast: d.atLeast } };
  });
}

/** Each limit checked against the summary, with `--allow-*` overriding the allowance it was given. */
export function evaluateLimits(
  summary: PlanSummary,
  allowances: readonly LimitAllowance[],
  overrides: LimitOverrides = {},
): LimitCheck[] {
  return allowances.map(({ kind, allowed: given, source: written }) => {
    const override = kind === 'delete' ? overrides.allowDeletes : overrides.allowUpdates;
    const allowed = override ?? given;
    const source = override !== undefined ? `--allow-${kind}s ${override}` : written;
    const planned = plannedCount(kind, summary);
    return { kind, planned, allowed, source, exceeded: planned > allowed };
  });
}
