/**
 * Planning on a live state already read (ops/plan.ts reads it): the plan made, `--target` applied,
 * the plan judged on the state after apply, compared with a base and given its reviewers. Loaded
 * once the server's state is read, so that a plan whose files or server fail loads neither the
 * planner nor the access evaluator.
 */
import { accessChangesAfter, judgeAfterApply } from '../access/plan.js';
import type { DesiredState, LiveState } from '../model/state.js';
import { formatDiagnostic } from '../model/diagnostic.js';
import { planChanges, PlanError, type Plan, type PlanOptions } from '../plan/index.js';
import { indexLiveState } from '../plan/live-index.js';
import { isPending } from '../plan/outcome.js';
import { lifecycleOf, unusedAcknowledgements, withLifecycle, type Lifecycle } from '../plan/lifecycle.js';
import { liveKeyIds, targetPlan, TargetError } from '../plan/target.js';
import type { PlanBase } from '../plan/types.js';
import type { BaseNote } from '../plan/sources.js';
import { OpError } from './errors.js';
import { elapsedSince, type OpEvents } from './events.js';
import { withOwners } from './owners.js';
import type { LoadedBase, PlanRequest, PlanResult, PlanShaping } from './plan.js';
import { withConfiguration, type Session } from './session.js';

/**
 * Plans against the live state read (`started`: when planning began, after the read), keeps the
 * targets and judges the plan on the state after apply (access changes, tests when asked, live
 * rules outside the files that decide packets: src/access/plan.ts).
 */
export function planOnLive(
  desired: DesiredState,
  live: LiveState,
  shaping: PlanShaping,
  session: Session,
  events: OpEvents,
  started: number,
): Plan {
  try {
    // Forgotten objects and acknowledged differences leave the planner's inputs (src/plan/lifecycle.ts).
    const life = lifecycleOf(desired, live, shaping.instant ?? new Date());
    const whole = withLifecycle(planChanges(life.desired, life.live, planOptionsOf(shaping, session)), life);
    // The live objects' keys: a target that matches nothing gets the nearest one as a hint.
    const targeted = shaping.target?.length
      ? targetPlan(whole, shaping.target, liveKeyIds(indexLiveState(live)))
      : whole;
    events.phase?.('diff', elapsedSince(started));
    const judging = performance.now();
    // Access, tests and live rules outside the files, judged on the state after apply.
    const judged = judgeWithLifecycle(targeted, live, life, { tests: shaping.runTests });
    const plan =
      life.inForce.length > 0 ? withUnused(judged, desired, live, life, planOptionsOf(shaping, session)) : judged;
    events.phase?.('access', elapsedSince(judging));
    return plan;
  } catch (error) {
    if (error instanceof PlanError) throw new OpError('plan', { code: 'cannot_plan', problems: error.problems });
    if (error instanceof TargetError)
      throw new OpError('request', { code: 'target_refused', problem: error.problem, flag: true });
    throw error;
  }
}

/**
 * What follows the plan against a server: compared with the base (when asked), its reviewers
 * named, its access delta attached; `differs` as `netform plan` and drift read it.
 */
export async function finishPlan(
  made: Plan,
  request: PlanRequest,
  read: { desired: DesiredState; session: Session; live: Promise<LiveState>; base: LoadedBase | undefined },
): Promise<PlanResult> {
  const { desired, session, live, base } = read;
  const compared = base ? await compareToBase(made, base, desired, request, session, live) : made;
  const owned = request.routeOwners ? withOwners(compared, base, desired, await live, request.pullRequest) : compared;
  const plan = request.accessDelta
    ? { ...owned, access_delta: (await import('./access-delta.js')).planAccessDelta(owned, await live, desired) }
    : owned;
  return { plan, differs: isPending(plan) };
}

/**
 * The plan with each change's origin (src/plan/base.ts): the base's files planned against the same
 * live state; the access changes in two parts (the base's changes, then the request's own).
 */
async function compareToBase(
  plan: Plan,
  base: LoadedBase,
  desired: DesiredState,
  shaping: PlanShaping,
  session: Session,
  reading: Promise<LiveState>,
): Promise<Plan> {
  const { compareWithBase } = await import('../plan/base.js');
  const info: PlanBase = { ref: base.ref, ...(base.commit ? { commit: base.commit } : {}) };
  const alone = (note: BaseNote): Plan =>
    compareWithBase(plan, null, { ...info, note, ...(plan.access ? { access_pr: plan.access } : {}) });
  if ('missing' in base)
    return alone({ code: 'base_missing', where: base.where, missing: base.missing, ref: base.ref });
  if (!base.result.ok) {
    const [first, ...more] = base.result.diagnostics;
    return alone({ code: 'base_has_errors', ref: base.ref, first: formatDiagnostic(first!), more: more.length });
  }
  let live = await reading;
  if (base.result.state.configuration !== undefined && live.configuration === undefined)
    live = await withConfiguration(reading, session);
  let basePlan: Plan;
  try {
    // The base's plan is compared, never applied: a secret it cannot read stops nothing, and no password is read.
    // The base's own forget: and acknowledged: entries shape its plan as they shape this one's.
    const baseLife = lifecycleOf(base.result.state, live, shaping.instant ?? new Date());
    const whole = planChanges(baseLife.desired, baseLife.live, {
      ...planOptionsOf(shaping, session),
      unreadableSecrets: 'report',
    });
    basePlan = shaping.target?.length ? targetPlan(whole, shaping.target) : whole;
  } catch (error) {
    if (error instanceof PlanError || error instanceof TargetError)
      return alone({
        code: 'base_unplannable',
        ref: base.ref,
        ...(error instanceof PlanError ? { problems: error.problems } : { target: error.problem }),
      });
    throw error;
  }
  const compared = compareWithBase(plan, basePlan, info);
  const already = compared.changes.filter((c) => c.origin === 'base');
  const own = compared.changes.filter((c) => c.origin === 'pr');
  compared.base!.access_pr = accessChangesAfter(live, desired, already, own);
  compared.base!.access_base = accessChangesAfter(live, desired, [], already);
  return compared;
}

/** The planner's options for a plan made now against the session's server. */
function planOptionsOf(shaping: PlanShaping, session: Session): PlanOptions {
  return {
    server: session.url,
    createdAt: new Date().toISOString(),
    tokenUser: session.tokenUser,
    replace: shaping.replace ?? false,
    rotatePasswords: shaping.rotatePasswords ?? false,
    allowDeletes: shaping.allowDeletes,
    allowUpdates: shaping.allowUpdates,
    ...(shaping.unreadableSecrets ? { unreadableSecrets: shaping.unreadableSecrets } : {}),
  };
}

/**
 * The plan with a warning for each acknowledgement in force that keeps nothing: found by planning
 * again without the acknowledgements (only when some are in force).
 */
function withUnused(plan: Plan, desired: DesiredState, live: LiveState, life: Lifecycle, options: PlanOptions): Plan {
  const bare = lifecycleOf({ ...desired, acknowledged: undefined }, live, new Date(0));
  let without: Plan;
  try {
    without = judgeWithLifecycle(planChanges(bare.desired, bare.live, options), live, bare);
  } catch (error) {
    if (error instanceof PlanError) return plan;
    throw error;
  }
  const unused = unusedAcknowledgements(life, without);
  return unused.length > 0 ? { ...plan, warnings: [...plan.warnings, ...unused] } : plan;
}

/** The plan judged on the state after apply with its forgotten and acknowledged objects (apply judges a reviewed intersection again). */
export function judgeWithLifecycle(
  plan: Plan,
  live: LiveState,
  life: Lifecycle,
  options: { tests?: boolean } = {},
): Plan {
  return judgeAfterApply(plan, live, life.desired, { ...options, policy: life.policy, left: life.left });
}
