/**
 * Applying as an operation: a plan made now from the files (`apply -f`), or a saved plan applied
 * exactly, refused when anything it touches changed since (stale) or when it is over a safety
 * limit. Writes are watched: a breaker stops new writes when the server goes away, and the
 * caller's AbortSignal stops new writes (the writes in flight get one request timeout to end).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  applyPlan,
  applySummary,
  findStaleChanges,
  readSavedPlan,
  SavedPlanError,
  ServerGoneBreaker,
  type ApplyOptions,
  type ApplySummary,
  type ChangeResult,
} from '../apply/index.js';
import type { SecretRef } from '../model/secret.js';
import { evaluateLimits, type LimitOverrides } from '../plan/limits.js';
import type { LimitCheck, Plan } from '../plan/types.js';
import { refuseFailingTests } from './access.js';
import { loadDesired } from './desired.js';
import { OpError } from './errors.js';
import { elapsedSince, type OpEvents } from './events.js';
import { makePlan, type PlanShaping } from './plan.js';
import { readLiveState, type Connector, type Session } from './session.js';

interface ApplyRequest {
  connect: Connector;
  /** Writes at once. Default 8. */
  parallelism?: number;
  /** The value of a secret reference, read when it is written. */
  resolveSecret: (ref: SecretRef) => string;
}

export interface PlannedApplyRequest extends ApplyRequest, PlanShaping {
  /** The desired state to plan and apply. */
  file: string;
}

export interface SavedApplyRequest extends ApplyRequest, LimitOverrides {
  /** A saved plan (readSavedPlan), applied exactly as it was made. */
  plan: Plan;
}

export interface ApplyEvents extends OpEvents, Pick<ApplyOptions, 'onStart' | 'onSettled' | 'onProgress'> {
  /** The plan that is about to be applied (before its limits are checked): what people are shown. */
  planned?(plan: Plan): void;
  /** Asked before a plan made now is written (never for a saved plan, whose writing was the approval); false cancels. */
  confirm?(plan: Plan, server: string): Promise<boolean>;
  /** The plan's writes start; once the signal aborts, those in flight get `graceMs` to end. */
  writing?(plan: Plan, graceMs: number): void;
  /** The writes are over: all settled, or the wait for those in flight ended. */
  written?(): void;
  /** The server went away (the breaker tripped): no new write starts. */
  halted?(reason: string): void;
}

export type ApplyOutcome =
  | { status: 'no-changes'; plan: Plan }
  | { status: 'refused'; plan: Plan; overLimit: LimitCheck[] }
  | { status: 'stale'; plan: Plan; stale: string[] }
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

/** A saved plan (`netform plan -o`), if this netform can apply it exactly. */
export function readSavedPlanFile(path: string): Plan {
  try {
    return readSavedPlan(path);
  } catch (error) {
    if (error instanceof SavedPlanError) throw new OpError('saved-plan', error.message);
    throw error;
  }
}

/** Plans the files against the server and applies the plan (after `events.confirm`, when given). */
export async function applyPlanned(
  request: PlannedApplyRequest,
  events: ApplyEvents = {},
  signal?: AbortSignal,
): Promise<ApplyOutcome> {
  const desired = await loadDesired(request.file, events);
  refuseFailingTests(desired);
  const session = await request.connect.open({ signal });
  return withSession(session, async () => {
    const plan = await makePlan(desired, request, session, events);
    events.planned?.(plan);
    const overLimit = plan.limits.filter((l) => l.exceeded);
    return writeUnlessRefused(plan, overLimit, { request, session, events, signal }, events.confirm);
  });
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
      throw new OpError(
        'saved-plan',
        `the saved plan was made against ${plan.server}, not ${session.url}; plan again against this server`,
      );
    }
    events.planned?.(plan);
    if (plan.changes.length === 0) return { status: 'no-changes', plan };
    const live = await readLiveState(session, { configuration: plan.changes.some((c) => c.kind === 'configuration') });
    const stale = findStaleChanges(plan, live);
    if (stale.length > 0) return { status: 'stale', plan, stale };
    // The limits as the plan recorded them, unless lifted again for this run.
    const overLimit = evaluateLimits(plan.summary, plan.limits, request).filter((l) => l.exceeded);
    return writeUnlessRefused(plan, overLimit, { request, session, events, signal });
  });
}

/** Runs `work`, then closes the session; not awaited after abandoned writes (closing waits for them). */
async function withSession(session: Session, work: () => Promise<ApplyOutcome>): Promise<ApplyOutcome> {
  let outcome: ApplyOutcome | undefined;
  try {
    outcome = await work();
    return outcome;
  } finally {
    const closing = session.close();
    if (!(outcome?.status === 'applied' && outcome.abandoned)) await closing;
    else closing.catch(() => {});
  }
}

/** One apply's request, open session, events and stop signal. */
interface ApplyRun {
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
): Promise<ApplyOutcome> {
  if (overLimit.length > 0) return { status: 'refused', plan, overLimit };
  if (plan.changes.length === 0) return { status: 'no-changes', plan };
  if (confirm && !(await confirm(plan, run.session.url))) return { status: 'cancelled', plan };
  return writeChanges(plan, run);
}

/** The writes, watched: a breaker for a server that went away, and the signal stopping new writes. */
async function writeChanges(plan: Plan, { request, session, events, signal }: ApplyRun): Promise<ApplyOutcome> {
  const graceMs = session.timeoutMs;
  events.writing?.(plan, graceMs);
  const started = performance.now();
  const breaker = new ServerGoneBreaker();
  const settled = new Map<string, ChangeResult>();
  const inFlight = new Set<string>();
  let announcedBreak = false;
  const stopReason = (): string | null => {
    if (signal?.aborted) return `not started: apply was interrupted (${describeReason(signal.reason)})`;
    const reason = breaker.tripped;
    if (reason && !announcedBreak) {
      announcedBreak = true;
      events.halted?.(reason);
    }
    return reason ? `not started: ${reason}` : null;
  };
  const applying = applyPlan(plan, {
    client: session.client,
    parallelism: request.parallelism,
    resolveSecret: request.resolveSecret,
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
    summary: summary ?? interruptedSummary(plan, settled, inFlight),
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

/** The summary when the writes in flight did not finish in time: those are reported as unknown. */
function interruptedSummary(
  plan: Plan,
  settled: Map<string, ChangeResult>,
  inFlight: ReadonlySet<string>,
): ApplySummary {
  const results = plan.changes.map((change): ChangeResult => {
    const done = settled.get(change.id);
    if (done) return done;
    const { id, label, action } = change;
    if (inFlight.has(change.id))
      return {
        id,
        label,
        action,
        status: 'failed',
        message: 'still in flight when apply stopped waiting: its outcome is unknown (netform plan shows it)',
      };
    return { id, label, action, status: 'not_attempted', message: 'not started: apply was interrupted' };
  });
  return applySummary(results);
}
