/**
 * What a plan does to access, judged on the state after apply (after-apply.ts): its access
 * changes (the live rules now against the rules after apply, each as the server stores it), its
 * access tests, and the live rules no file declares that decide packets inside the managed blocks.
 * Pure.
 */
import type { DesiredState, LiveState } from '../model/state.js';
import { outcomeOf, planOutcome } from '../plan/outcome.js';
import type { Change, OutcomeItem, Plan, UndeclaredItem } from '../plan/types.js';
import { NO_LEFT_OBJECT_POLICY, stateAfterApply, type LeftObjectPolicy, type StateAfterApply } from './after-apply.js';
import { boundAccessChanges, computeAccessChanges, type AccessChangeLimits, type AccessChanges } from './changes.js';
import { decidingText, decidingLeftRules } from './deciding.js';
import type { AccessRule } from './model.js';
import { planAccessTests } from './saved-tests.js';
import { afterApplyTestsSummary } from './tests.js';

/** What the plan does to every user's access (live now against after apply); bounded for display. */
export function planAccessChanges(
  plan: Pick<Plan, 'changes' | 'undeclared'>,
  live: LiveState,
  desired: DesiredState,
  limits?: AccessChangeLimits,
): AccessChanges {
  return accessChangesAfter(live, desired, [], plan.changes, limits);
}

/**
 * What the changes `then` do to every user's access once the changes `first` are made (changes of
 * plans made against `live`): a plan's effect in two parts, such as a pull request's own changes
 * after those already on its base (src/plan/base.ts). Both ends are states after apply. Bounded for display.
 */
export function accessChangesAfter(
  live: LiveState,
  desired: DesiredState,
  first: readonly Change[],
  then: readonly Change[],
  limits?: AccessChangeLimits,
): AccessChanges {
  const before = stateAfterApply({ changes: first, live, desired });
  const after = stateAfterApply({ changes: [...first, ...then], live, desired });
  return boundAccessChanges(accessBetween(before, after), limits);
}

/**
 * The access changes from one state to another: live rules present in both are the same objects
 * (an unchanged rule is not compared by text); users that exist in both.
 */
function accessBetween(before: StateAfterApply, after: StateAfterApply): AccessChanges {
  const byId = new Map<string, AccessRule>();
  for (const rule of before.model.rules) if (rule.id !== undefined) byId.set(rule.id, rule);
  const afterRules = after.model.rules.map((rule) => (rule.id !== undefined ? (byId.get(rule.id) ?? rule) : rule));
  const users = [...after.model.users.keys()].filter((key) => before.model.users.has(key));
  const { portRules } = after.model.settings;
  // Live rules with ports stay out of the ruleset when port_rules is false (docs/rule-semantics.md §5.1.2).
  return computeAccessChanges({ before: before.model.rules, after: afterRules, users, portRules });
}

export interface JudgeOptions {
  /** Run the desired state's `tests:` on the state after apply (plan and apply do; drift does not). */
  tests?: boolean;
  /** Live objects named as known or let go (later: `acknowledged:`, `forget:`); default none. */
  policy?: LeftObjectPolicy;
  /** Live objects kept out of the plan (forgotten, acknowledged as a whole): left in place, with why. */
  left?: readonly UndeclaredItem[];
}

/**
 * A plan judged on the state after apply: its access changes, its tests (when asked), the live
 * objects no file declares that decide packets inside the managed blocks (`deciding`), and its
 * outcome with those: a rule that counts leaves the plan pending (exit 2, drift) whatever
 * `drift.undeclared` says; a user outside `manage.users` is kept (listed, exit code unchanged).
 */
export function judgeAfterApply(plan: Plan, live: LiveState, desired: DesiredState, options: JudgeOptions = {}): Plan {
  const now = stateAfterApply({ changes: [], live, desired });
  const undeclared = options.left?.length ? [...(plan.undeclared ?? []), ...options.left] : plan.undeclared;
  const after = stateAfterApply({ changes: plan.changes, undeclared, live, desired });
  const access = boundAccessChanges(accessBetween(now, after));
  const deciding = decidingLeftRules(after, options.policy ?? NO_LEFT_OBJECT_POLICY);
  const tests = options.tests ? afterApplyTestsSummary(desired, after) : undefined;
  const outcome = planOutcome(plan);
  const known = new Set([...outcome.pending, ...outcome.kept].map((item) => item.id));
  const pending: OutcomeItem[] = [];
  const kept: OutcomeItem[] = [];
  for (const item of deciding) {
    const entry: OutcomeItem = { reason: 'deciding', id: item.id, text: decidingText(item) };
    if (item.status === 'counts') {
      // An undeclared rule already pending (drift.undeclared: access) is named once.
      if (!known.has(item.id)) pending.push(entry);
    } else if (!known.has(item.id)) kept.push(entry);
  }
  const judged: Plan = {
    ...plan,
    access,
    ...(deciding.length > 0 ? { deciding } : {}),
    outcome: outcomeOf(plan.changes, {
      pending: [...outcome.pending, ...pending],
      kept: [...outcome.kept, ...kept],
      not_checked: outcome.not_checked,
    }),
  };
  if (!tests) return judged;
  // The tests go with the plan to its apply, which judges them again on the server as it is then.
  const carried = planAccessTests(desired);
  // Failures first: a reader of the document (or of a pull-request comment) sees them before the changes.
  return tests.failed > 0
    ? { tests, ...judged, ...(carried ? { access_tests: carried } : {}) }
    : { ...judged, tests, ...(carried ? { access_tests: carried } : {}) };
}
