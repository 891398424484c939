/**
 * Applying as an operation: a plan made now from the files (`apply -f`), or a saved plan applied
 * exactly, refused when anything it touches changed since (stale) or when it is over a safety
 * limit. With a reviewed plan (`apply -f --reviewed`), only the changes it shows identically are
 * written (src/plan/reviewed.ts); the rest are withheld. Writes are watched: a breaker stops new writes when the server goes away, and the
 * caller's AbortSignal stops new writes (the writes in flight get one request timeout to end).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApplyOptions, ApplySummary, ChangeResult, WriteStop } from '../apply/index.js';
import type { SecretRef } from '../model/secret.js';
import type { DesiredState } from '../model/state.js';
import type { ExpiredSincePlan } from '../plan/expiries.js';
import type { LimitOverrides } from '../plan/limits.js';
import type { ReviewedIntersection } from '../plan/reviewed.js';
import type { PlanKey } from '../plan/seal.js';
import type { LimitCheck, Plan, WordedPlan } from '../plan/types.js';
import { loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { OpError } from './errors.js';
import { elapsedSince, type OpEvents } from './events.js';
import { loadBase, makePlan, type PlanShaping } from './plan.js';
import type { Approval } from '../plan/approvals.js';
import { readLiveState, type Connector, type Session } from './session.js';

// The writer, the saved plan's checks, the reviewed intersection and the planner's judging are
// imported where they are used, once the server's state is read: an apply whose files or server
// fail loads none of them.

interface ApplyRequest {
  connect: Connector;
  /** Writes at once. Default 8. */
  parallelism?: number;
}

export interface PlannedApplyRequest extends ApplyRequest, PlanShaping {
  /** The desired state to plan and apply. */
  file: string;
  /** Where the file's secrets (and `-` for stdin) are read from. */
  input?: DesiredInput;
  /** The value of a secret reference, read when it is written (within its declaring file's repository). */
  resolveSecret: (ref: SecretRef) => string;
  /**
   * The plan that was reviewed (a saved plan): only the changes it shows identically are written,
   * unasked (the review was the approval); the rest are withheld.
   */
  reviewed?: WordedPlan;
  /**
   * With `reviewed`: a plan with its notes in words (src/views/notes.ts wordedPlan). The reviewed
   * plan holds words, so the plan made now is compared with it worded; without this, a change
   * with a note never compares equal and is withheld.
   */
  wordPlan?: (plan: Plan) => WordedPlan;
  /**
   * With `reviewed`: the key it was sealed with (PlanKey.from, as for a saved plan). The secrets of
   * the plan made now get their HMAC under it, so that they compare with the reviewed ones by
   * reference and HMAC; without it, every change that sends a secret is withheld.
   */
  key?: PlanKey;
  /**
   * Make the changes that exist only because the files leave a field out, which means its default
   * ("now managed", src/plan/defaults.ts). Without it (and without a reviewed plan) they refuse the
   * plan as a safety limit does.
   */
  allowNowManaged?: boolean;
  /**
   * With `reviewed`: where `settings.owners` is read from (at merge, the first parent of the merge
   * commit); without it, the merged files'. The reviewers the reviewed plan recorded are needed too.
   */
  ownersBase?: { ref: string };
  /** With `reviewed`: the approvals (`--approvals FILE`); without them, every change that needs a reviewer is withheld. */
  approvals?: Approval[];
  /**
   * Write only the deletions and demotions expiries cause (src/plan/expiries.ts); every other
   * change is left pending and named in the outcome (`otherPending`).
   */
  expiredOnly?: boolean;
}

export interface SavedApplyRequest extends ApplyRequest, LimitOverrides {
  /** A saved plan (readSavedPlan), applied exactly as it was made. */
  plan: Plan;
  /** The key the plan was sealed with: its secrets' HMACs are checked with it. */
  key: PlanKey;
  /**
   * Reads a secret where apply runs (never a folder the plan names), before anything is written;
   * the values read are the ones sent.
   */
  readSecret: (ref: SecretRef) => { value: string } | { problem: string };
  /** Apply's clock: a change granting something whose `expires:` has passed by then makes the plan stale. */
  clock?: () => Date;
}

export interface ApplyEvents extends OpEvents, Pick<ApplyOptions, 'onStart' | 'onSettled' | 'onProgress'> {
  /**
   * The plan that is about to be applied (before its limits are checked): what people are shown.
   * With a reviewed plan, also what of the plan made now it withholds. A promise it returns is
   * awaited before apply goes on (the command loads its views there).
   */
  planned?(plan: Plan, reviewed?: ReviewedIntersection): unknown;
  /** Asked before a plan made now is written (never for a saved plan, whose writing was the approval); false cancels. */
  confirm?(plan: Plan, server: string): Promise<boolean>;
  /** The plan's writes start; once the signal aborts, those in flight get `graceMs` to end. */
  writing?(plan: Plan, graceMs: number): void;
  /** The writes are over: all settled, or the wait for those in flight ended. */
  written?(): void;
  /** The server went away (the breaker tripped): no new write starts. */
  halted?(reason: string): void;
  /** Secrets the reviewed or saved plan did not pin (`pinned: false`), read now: said before the writes. */
  unpinned?(count: number): void;
}

/** What made a saved plan stale: the server, a secret it sends (read again, its HMAC differs), or both. */
export type StaleCause = 'server' | 'secret' | 'both' | 'expired';

export type ApplyOutcome =
  | { status: 'no-changes'; plan: Plan }
  | {
      status: 'refused';
      plan: Plan;
      overLimit: LimitCheck[];
      /** Now-managed changes that refused the plan (apply -f without --allow-now-managed); 0 when none did. */
      nowManaged: number;
    }
  | {
      status: 'stale';
      plan: Plan;
      /** What changed since the plan (its words), and what it grants that has expired since (a code). */
      stale: Array<string | ExpiredSincePlan>;
      cause: StaleCause;
    }
  | { status: 'cancelled'; plan: Plan }
  | {
      status: 'applied';
      plan: Plan;
      summary: ApplySummary;
      /** The signal's reason when it stopped the writes, else null. */
      stoppedBy: unknown;
      /** Writes still in flight when the wait for them ended: their outcome is unknown. */
      abandoned: boolean;
    };

/**
 * An outcome, and with a reviewed plan how many changes were withheld (not written, whatever the
 * outcome); with `expiredOnly`, the labels of the changes left pending.
 */
export type ReviewedOutcome = ApplyOutcome & {
  withheld?: number;
  otherPending?: string[];
  /** The reviewers whose approval is missing (changes withheld for them), when any, and the pull request approvals count for. */
  missingApprovals?: { owners: string[]; pullRequest?: { head: string; author: string }; given: boolean };
};

/**
 * Plans the files against the server and applies the plan (after `events.confirm`, when given).
 * With `request.reviewed`, only the changes the reviewed plan shows identically, unasked.
 */
export async function applyPlanned(
  request: PlannedApplyRequest,
  events: ApplyEvents = {},
  signal?: AbortSignal,
): Promise<ReviewedOutcome> {
  const desired = await loadDesired(request.file, events, loaderFor(request.input));
  const session = await request.connect.open({ signal });
  const run = { resolveSecret: request.resolveSecret, request, session, events, signal };
  return withSession(session, async () => {
    if (request.expiredOnly) return applyExpiredOnly(desired, run);
    if (!request.reviewed) {
      // The tests run on the state after apply (src/access/after-apply.ts): a failure writes nothing.
      const plan = await makePlan(desired, { ...request, runTests: true }, session, events);
      const { nowManagedChanges } = await import('../plan/defaults.js');
      refuseFailingTests(plan);
      await events.planned?.(plan);
      const overLimit = plan.limits.filter((l) => l.exceeded);
      // Changes that exist only because a left-out field now means its default: a safety limit.
      const nowManaged = request.allowNowManaged ? 0 : nowManagedChanges(plan.changes).length;
      return writeUnlessRefused(plan, overLimit, run, events.confirm, nowManaged);
    }
    const reading = readLiveState(session, { configuration: desired.configuration !== undefined });
    const ownersBase = request.ownersBase ? await loadBase({ ...request, base: request.ownersBase }) : undefined;
    const made = await makePlan(desired, request, session, events, reading);
    const { withOwners } = await import('./owners.js');
    const { withSecretHmacs } = await import('../plan/seal.js');
    const { intersectReviewed, ReviewedPlanError } = await import('../plan/reviewed.js');
    const { approvedHandles, withholdUnapproved } = await import('../plan/approvals.js');
    const { lifecycleOf } = await import('../plan/lifecycle.js');
    const { judgeWithLifecycle } = await import('./planning.js');
    const planned = withOwners(made, ownersBase, desired, await reading);
    const hashed = request.key ? withSecretHmacs(planned, request.key) : planned;
    const fresh = request.wordPlan ? request.wordPlan(hashed) : hashed;
    let result: ReviewedIntersection & { missing?: string[] };
    try {
      result = intersectReviewed(fresh, request.reviewed, request.input?.clock?.() ?? new Date());
    } catch (error) {
      if (error instanceof ReviewedPlanError)
        throw new OpError('saved-plan', {
          code: 'reviewed_plan_elsewhere',
          reviewed: error.reviewedServer,
          server: error.server,
        });
      throw error;
    }
    // A change needs the reviewers the plan made now names and those the reviewed plan recorded.
    result = withholdUnapproved(
      result,
      reviewersNeeded(fresh, request.reviewed),
      approvedHandles(request.approvals ?? [], request.reviewed.owners?.pull_request),
    );
    // Only what is written counts: the tests run on the state this intersection leaves.
    const live = await reading;
    const plan = judgeWithLifecycle(result.plan, live, lifecycleOf(desired, live, request.instant ?? new Date()), {
      tests: true,
    });
    refuseFailingTests(plan);
    await events.planned?.(plan, result);
    const unpinned = unpinnedOf(request.reviewed, plan);
    if (unpinned > 0 && plan.limits.every((l) => !l.exceeded)) events.unpinned?.(unpinned);
    // The secrets sent are the values whose HMAC matched the reviewed plan's, not values read again.
    const outcome = await writeUnlessRefused(
      plan,
      plan.limits.filter((l) => l.exceeded),
      {
        ...run,
        resolveSecret: plannedValues(
          planned,
          request.resolveSecret,
          (await import('../plan/secrets.js')).planSecretValue,
        ),
      },
    );
    const pullRequest = request.reviewed.owners?.pull_request;
    const missing = result.missing?.length
      ? {
          missingApprovals: {
            owners: result.missing,
            given: request.approvals !== undefined,
            ...(pullRequest ? { pullRequest } : {}),
          },
        }
      : {};
    return { ...outcome, withheld: result.withheld.length, ...missing };
  });
}

/** The reviewers each change needs: those of the plan made now and those the reviewed plan recorded, by change id. */
function reviewersNeeded(fresh: Plan, reviewed: Plan): Map<string, string[]> {
  const needed = new Map<string, string[]>();
  for (const change of [...fresh.changes, ...reviewed.changes])
    if (change.required_owners?.length)
      needed.set(change.id, [...new Set([...(needed.get(change.id) ?? []), ...change.required_owners])]);
  return needed;
}

/** How many secrets of the changes `plan` writes the reviewed plan did not pin: read now, where it is applied. */
function unpinnedOf(reviewed: Plan, plan: Plan): number {
  const written = new Set(plan.changes.map((c) => c.id));
  return reviewed.changes
    .filter((c) => written.has(c.id))
    .reduce((n, c) => n + (c.secrets ?? []).filter((s) => s.pinned === false).length, 0);
}

/**
 * `apply --expired-only`: of the plan made now, only what expiries delete or demote is written
 * (limits and confirmation as for any apply); the rest stays pending and is named. Access tests are
 * not a reason to keep access that has expired: they run on what is written, and are reported.
 */
async function applyExpiredOnly(desired: DesiredState, run: ApplyRun): Promise<ReviewedOutcome> {
  const { session, events, request } = run;
  const reading = readLiveState(session, { configuration: desired.configuration !== undefined });
  const whole = await makePlan(desired, request as PlannedApplyRequest, session, events, reading);
  const { expiredOnly } = await import('../plan/expiries.js');
  const { lifecycleOf } = await import('../plan/lifecycle.js');
  const { judgeWithLifecycle } = await import('./planning.js');
  const narrowed = expiredOnly(whole);
  const live = await reading;
  const plan = judgeWithLifecycle(
    narrowed.plan,
    live,
    lifecycleOf(desired, live, (request as PlannedApplyRequest).instant ?? new Date()),
    {
      tests: true,
    },
  );
  await events.planned?.(plan);
  const outcome = await writeUnlessRefused(
    plan,
    plan.limits.filter((l) => l.exceeded),
    run,
    events.confirm,
  );
  return { ...outcome, otherPending: narrowed.others };
}

/** Apply refuses (nothing written) when an access test fails on the state after apply (every form of apply). */
function refuseFailingTests(plan: Plan): void {
  const failed = plan.tests?.failures ?? [];
  if (failed.length === 0) return;
  throw new OpError('desired-state', { code: 'tests_fail_after_apply', count: failed.length }, failed);
}

/** Applies a saved plan, if it was made against this server and nothing it touches changed since. */
export async function applySaved(
  request: SavedApplyRequest,
  events: ApplyEvents = {},
  signal?: AbortSignal,
): Promise<ApplyOutcome> {
  const { plan } = request;
  const session = await request.connect.open({ signal });
  return withSession(session, async () => {
    if (plan.server !== session.url) {
      throw new OpError('saved-plan', { code: 'saved_plan_elsewhere', planned: plan.server, server: session.url });
    }
    await events.planned?.(plan);
    if (plan.changes.length === 0) return { status: 'no-changes', plan };
    const { readSavedPlanSecrets, findStaleChanges } = await import('../apply/index.js');
    const secrets = readSecretsAgain(
      request,
      readSavedPlanSecrets,
      (await import('../desired/secrets.js')).secretValueProblem,
    );
    const live = await readLiveState(session, { configuration: plan.changes.some((c) => c.kind === 'configuration') });
    const { expiredSincePlan, grantsExpiredAt } = await import('../plan/expiries.js');
    const { judgeSavedPlanTests } = await import('../access/saved-tests.js');
    const { evaluateLimits } = await import('../plan/limits.js');
    // A secret that changed since the plan makes its change stale, as a changed object does.
    const changedOnServer = findStaleChanges(plan, live);
    // What it grants that has expired since the plan was made (at apply's own clock) makes it stale too.
    const expired = grantsExpiredAt(plan, request.clock?.() ?? new Date()).map(expiredSincePlan);
    const stale = [...changedOnServer, ...secrets.changed, ...expired];
    if (stale.length > 0) {
      const cause =
        changedOnServer.length + secrets.changed.length === 0
          ? 'expired'
          : secrets.changed.length === 0
            ? 'server'
            : changedOnServer.length === 0
              ? 'secret'
              : 'both';
      return { status: 'stale', plan, stale, cause };
    }
    // The plan's tests, judged again on the server as it is now, after apply: a failure writes nothing.
    const tests = judgeSavedPlanTests(plan, live);
    if (tests) refuseFailingTests({ ...plan, tests });
    // The limits as the plan recorded them, unless lifted again for this run.
    const overLimit = evaluateLimits(plan.summary, plan.limits, request).filter((l) => l.exceeded);
    if (overLimit.length === 0) {
      if (secrets.unpinned > 0) events.unpinned?.(secrets.unpinned);
      await claimSavedPlan(session, plan);
    }
    const resolveSecret = (ref: SecretRef): string => {
      const value = secrets.values.get(ref);
      // Never: readSavedPlanSecrets read every secret the plan sends before the first write.
      if (value === undefined) throw new Error('saved_plan_secret_unread');
      return value;
    };
    return writeUnlessRefused(plan, overLimit, { resolveSecret, request, session, events, signal });
  });
}

/**
 * Records the plan's seal on netform's own server before the first write, so that the same saved
 * plan is never applied twice there: one applied before is refused (nothing written). Recorded
 * whatever the writes then do: a plan whose apply failed part-way is not applied again (plan again).
 * A plain /v0 server (Firezone) keeps no record: the plan is applied as before, within its age.
 */
async function claimSavedPlan(session: Session, plan: Plan): Promise<void> {
  if (typeof plan.seal !== 'string') return;
  const claim = await session.client.claimAppliedPlan(plan.seal, randomUUID());
  if (claim.status !== 'already') return;
  const at = claim.appliedAt ? claim.appliedAt.replace(/\.\d+(?=Z$)/, '') : null;
  throw new OpError('saved-plan', { code: 'saved_plan_applied', server: session.url, at });
}

/**
 * The value each secret of `plan` was planned (and compared) with, by reference; `fallback` for a
 * reference the plan did not read.
 */
function plannedValues(
  plan: Plan,
  fallback: (ref: SecretRef) => string,
  planSecretValue: typeof import('../plan/secrets.js').planSecretValue,
): (ref: SecretRef) => string {
  const secrets = new Map(
    plan.changes.flatMap((change) =>
      (change.secrets ?? []).map((secret) => [secret.ref, planSecretValue(secret)] as const),
    ),
  );
  return (ref) => {
    const secret = secrets.get(ref);
    return secret?.wasRead ? secret.reveal() : fallback(ref);
  };
}

/**
 * Every secret a saved plan will send, read before anything is written and compared with the
 * plan's HMAC of it: one that cannot be read refuses the plan (nothing is written).
 */
function readSecretsAgain(
  request: SavedApplyRequest,
  readSavedPlanSecrets: typeof import('../apply/index.js').readSavedPlanSecrets,
  secretValueProblem: typeof import('../desired/secrets.js').secretValueProblem,
): ReturnType<typeof readSavedPlanSecrets> {
  const secrets = readSavedPlanSecrets(request.plan, request.key, request.readSecret, secretValueProblem);
  const problems = new Set(secrets.unreadable);
  if (problems.size > 0)
    throw new OpError('saved-plan', { code: 'saved_plan_secrets_unreadable', problems: [...problems] });
  return secrets;
}

/** Runs `work`, then closes the session; not awaited after abandoned writes (closing waits for them). */
async function withSession<T extends ApplyOutcome>(session: Session, work: () => Promise<T>): Promise<T> {
  let outcome: T | undefined;
  try {
    outcome = await work();
    return outcome;
  } finally {
    const closing = session.close();
    if (!(outcome?.status === 'applied' && outcome.abandoned)) await closing;
    else closing.catch(() => {});
  }
}

/** One apply's request, open session, events and stop signal, and where the secrets it sends come from. */
interface ApplyRun {
  resolveSecret: (ref: SecretRef) => string;
  request: ApplyRequest;
  session: Session;
  events: ApplyEvents;
  signal: AbortSignal | undefined;
}

async function writeUnlessRefused(
  plan: Plan,
  overLimit: LimitCheck[],
  run: ApplyRun,
  confirm?: ApplyEvents['confirm'],
  nowManaged = 0,
): Promise<ApplyOutcome> {
  if (overLimit.length > 0 || nowManaged > 0) return { status: 'refused', plan, overLimit, nowManaged };
  if (plan.changes.length === 0) return { status: 'no-changes', plan };
  if (confirm && !(await confirm(plan, run.session.url))) return { status: 'cancelled', plan };
  return writeChanges(plan, run);
}

/** The writes, watched: a breaker for a server that went away, and the signal stopping new writes. */
async function writeChanges(
  plan: Plan,
  { resolveSecret, request, session, events, signal }: ApplyRun,
): Promise<ApplyOutcome> {
  const { applyPlan, applySummary, ServerGoneBreaker } = await import('../apply/index.js');
  const graceMs = session.timeoutMs;
  events.writing?.(plan, graceMs);
  const started = performance.now();
  const breaker = new ServerGoneBreaker();
  const settled = new Map<string, ChangeResult>();
  const inFlight = new Set<string>();
  let announcedBreak = false;
  const stopReason = (): WriteStop | null => {
    if (signal?.aborted) return { code: 'interrupted', by: describeReason(signal.reason) };
    const reason = breaker.tripped;
    if (reason && !announcedBreak) {
      announcedBreak = true;
      events.halted?.(reason);
    }
    return reason ? { code: 'server_gone', reason } : null;
  };
  const applying = applyPlan(plan, {
    client: session.client,
    parallelism: request.parallelism,
    resolveSecret,
    onProgress: events.onProgress,
    onStart: (change) => {
      inFlight.add(change.id);
      events.onStart?.(change);
    },
    onSettled: (result, detail) => {
      inFlight.delete(result.id);
      settled.set(result.id, result);
      breaker.observe(result, detail.error);
      events.onSettled?.(result, detail);
    },
    shouldStart: stopReason,
  });
  // Once stopped, writes in flight get at most one request timeout to finish.
  const summary = await Promise.race([
    applying,
    abortOf(signal).then(() => sleep(graceMs + 1000, null, { ref: false })),
  ]);
  events.written?.();
  events.phase?.('writes', elapsedSince(started));
  return {
    status: 'applied',
    plan,
    summary: summary ?? applySummary(interruptedResults(plan, settled, inFlight)),
    stoppedBy: signal?.aborted ? signal.reason : null,
    abandoned: summary === null,
  };
}

/** Resolves when the signal aborts; never without one. */
function abortOf(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** A stop request's reason in words: a signal name as it is, an error by its message. */
function describeReason(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

/** The results when the writes in flight did not finish in time: those are reported as unknown. */
function interruptedResults(
  plan: Plan,
  settled: Map<string, ChangeResult>,
  inFlight: ReadonlySet<string>,
): ChangeResult[] {
  return plan.changes.map((change): ChangeResult => {
    const done = settled.get(change.id);
    if (done) return done;
    const { id, label, action } = change;
    if (inFlight.has(change.id)) return { id, label, action, status: 'failed', stop: { code: 'in_flight_unknown' } };
    return { id, label, action, status: 'not_attempted', stop: { code: 'interrupted' } };
  });
}
