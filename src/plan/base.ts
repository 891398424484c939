/**
 * A pull request's plan, told apart from what was already there (`netform plan --base REF`): the
 * files of the pull request and those of its base are planned against the same live state, and
 * every change of the pull request's plan gets its origin: `pr` when its base's plan lacks it or
 * plans it differently (compare.ts), `base` when the base's plan has it identically (drift, or
 * changes merged and not yet applied). Changes of the base's plan that the pull request's does
 * not make are what the pull request undoes (`resolved_by_pr`). Pure.
 */
import { compareChanges } from './compare.js';
import type { Change, Plan, PlanBase, ResolvedChange } from './types.js';

function resolved(change: Change): ResolvedChange {
  const { id, kind, action, key, label, fields, cascade, note } = change;
  return {
    id,
    kind,
    action,
    key,
    label,
    fields,
    ...(cascade !== undefined ? { cascade } : {}),
    ...(note !== undefined ? { note } : {}),
  };
}

/**
 * The pull request's plan with each change's origin and what it undoes. `base` null: no base plan
 * (the path does not exist at the base, or its files cannot be planned; `info.note` says why), so
 * every change is the pull request's.
 */
export function compareWithBase(pr: Plan, base: Plan | null, info: PlanBase): Plan {
  const baseById = new Map((base?.changes ?? []).map((c) => [c.id, c]));
  const changes = pr.changes.map((change): Change => {
    const there = baseById.get(change.id);
    return { ...change, origin: there && compareChanges(change, there) === 'same' ? 'base' : 'pr' };
  });
  const prIds = new Set(pr.changes.map((c) => c.id));
  return {
    ...pr,
    changes,
    base: info,
    resolved_by_pr: (base?.changes ?? []).filter((c) => !prIds.has(c.id)).map(resolved),
  };
}
