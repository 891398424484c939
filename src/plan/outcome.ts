/**
 * The plan's outcome (PlanOutcome, types.ts), computed in one place: whether the server matches
 * the files, differs with changes planned, differs with nothing planned (pending: a guard cancelled
 * a change, `--target` left changes out, an undeclared admin or rule is kept), or has things kept or
 * unchecked that do not count as drift (protected users, other undeclared objects kept with prune
 * off, fields under `ignore_changes`, fields not compared for want of a secret). Every renderer,
 * exit code and drift status reads it through planOutcome; its words are src/views/outcome.ts and src/views/plan-outcome.ts.
 */
import type { UndeclaredPolicy } from '../model/state.js';
import type { Change, OutcomeItem, Plan, PlanOutcome, UndeclaredItem } from './types.js';

/** The outcome's status from its parts: changes first, then pending, then kept or unchecked. */
export function outcomeOf(
  changes: readonly Change[],
  parts: Pick<PlanOutcome, 'pending' | 'kept' | 'not_checked'>,
): PlanOutcome {
  const status =
    changes.length > 0
      ? 'changes'
      : parts.pending.length > 0
        ? 'pending'
        : parts.kept.length + parts.not_checked.length > 0
          ? 'kept'
          : 'matches';
  return { status, pending: [...parts.pending], kept: [...parts.kept], not_checked: [...parts.not_checked] };
}

/** The plan's outcome; a plan saved by an older version has none: then changes or "matches". */
export function planOutcome(plan: Plan): PlanOutcome {
  return plan.outcome ?? outcomeOf(plan.changes, { pending: [], kept: [], not_checked: [] });
}

/** Whether the plan leaves the server different from the files (exit 2, drift): changes or pending. */
export function isPending(plan: Plan): boolean {
  const status = planOutcome(plan).status;
  return status === 'changes' || status === 'pending';
}

/**
 * Undeclared objects the plan keeps, as outcome items: protected users are kept; of the others,
 * those the policy names (`access`: admins and rules, a user with rules of its own standing for
 * them; `all`; `none`) are pending, the rest kept.
 */
export function undeclaredOutcome(
  items: readonly UndeclaredItem[],
  policy: UndeclaredPolicy,
  isAdmin: (item: UndeclaredItem) => boolean,
  isProtected: (item: UndeclaredItem) => boolean,
  hasRules: (item: UndeclaredItem) => boolean = () => false,
): { pending: OutcomeItem[]; kept: OutcomeItem[] } {
  const pending: OutcomeItem[] = [];
  const kept: OutcomeItem[] = [];
  for (const item of items) {
    if (item.fate !== 'keep') continue;
    const id = `${item.kind}:${item.key}`;
    if (item.kind === 'user' && isProtected(item)) {
      kept.push({ reason: 'protected', id, text: { code: 'protected', label: item.label } });
      continue;
    }
    const access = item.kind === 'rule' || (item.kind === 'user' && (isAdmin(item) || hasRules(item)));
    const counts = policy === 'all' || (policy === 'access' && access);
    const admin = item.kind === 'user' && isAdmin(item);
    (counts ? pending : kept).push({
      reason: 'undeclared',
      id,
      text: { code: 'undeclared', label: item.label, admin },
    });
  }
  return { pending, kept };
}
