/**
 * Planning against a server: the desired state and the server's state read (at the same time
 * where that is safe), the plan made, `--target` applied and the plan's access changes attached.
 * The plan that leaves here is finished.
 */
import { portRuleWarnings } from '../access/test-checks.js';
import { loadDesiredState, NO_SUCH_PATH, type Diagnostic, type LoadResult } from '../desired/index.js';
import { GitRefError, loadDesiredStateAtRef } from '../desired/git-ref.js';
import type { DesiredState, LiveState } from '../model/state.js';
import type { Plan } from '../plan/types.js';
import { normalizeTarget, TargetError } from '../plan/target.js';
import { effectiveAt } from '../desired/expiry.js';
import { inEffect, loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { OpError } from './errors.js';
import { elapsedSince, type OpEvents } from './events.js';
import type { PullRequest } from './owners.js';
import { readLiveState, withConfiguration, type Connector, type Session } from './session.js';

/** How a plan is shaped: what `netform plan` and `apply -f` take besides the files and the server. */
export interface PlanShaping {
  allowDeletes?: number;
  allowUpdates?: number;
  /** Device changes a 0.7.26+ server ignores on update become delete-then-create. */
  replace?: boolean;
  /** Declared passwords are sent to existing users too. */
  rotatePasswords?: boolean;
  /** Keys in the plan's notation: the plan keeps these changes and what they need. */
  target?: string[];
  /**
   * A secret that cannot be read here (secrets are read where used): `refuse` (plan, apply: a change that would send it
   * stops the plan; default), or `report` (drift, which never sends: it reads no password, and a
   * preshared key it cannot read is listed in Plan.not_checked), or `unpin` (plan: a variable it
   * cannot read is read at apply instead, and the saved plan records it as not pinned; a file it
   * cannot read stops the plan).
   */
  unreadableSecrets?: 'refuse' | 'report' | 'unpin';
  /**
   * Run the desired state's access tests on the state after apply (plan and apply do, drift does
   * not): their outcome is Plan.tests, placed first in the document when one fails. The plan is
   * still made: the caller decides what a failure means (plan writes no saved plan and exits 1,
   * apply writes nothing).
   */
  runTests?: boolean;
  /**
   * The instant `acknowledged:` entries are judged at (their `until`): the run's clock, or `--now`
   * for a plan that writes nothing. Default: the system clock.
   */
  instant?: Date;
}

export interface PlanRequest extends PlanShaping {
  /** The desired state: a YAML file, a folder, a cdk.tf.json, or `-` (stdin). */
  file: string;
  /**
   * What to compare with (a pull request's base): the same path at a git ref (`ref`), or the base's
   * desired state at a path (`file`). Each change is then marked as the request's own or already
   * the base's, and the base's changes the request undoes are listed.
   */
  base?: { ref: string } | { file: string };
  connect: Connector;
  /** How the files are read (a scheduled drift reuses an unchanged state). Default loadDesiredState with `input`. */
  load?: (path: string) => Promise<LoadResult>;
  /** Where the files' secrets (and `-` for stdin) are read from. */
  input?: DesiredInput;
  /** Attach the plan's access delta (Plan.access_delta: `plan --format json` and `-o`). */
  accessDelta?: boolean;
  /**
   * Name the reviewers each change needs (`settings.owners` of the base: ops/owners.ts), as a plan
   * for review does; drift does not.
   */
  routeOwners?: boolean;
  /** The pull request reviewed (its head commit and author), recorded for `apply --reviewed --approvals`. */
  pullRequest?: PullRequest;
}

export interface PlanResult {
  plan: Plan;
  /**
   * The server does not match the files: changes are planned, or none are but the plan is pending
   * (a guard cancelled one, `--target` left some out, an undeclared admin or rule is kept:
   * src/plan/outcome.ts). `netform plan` exits 2, drift reports `drift`.
   */
  differs: boolean;
}

export interface PlanEvents extends OpEvents {
  /** A warning about the desired state that does not stop the plan (rules a kernel ignores). */
  warning?(diagnostic: Diagnostic): void;
}

/** `--target` values in the plan's key notation, checked before anything is read. */
export function checkTargets(targets: readonly string[] | undefined): void {
  try {
    targets?.forEach(normalizeTarget);
  } catch (error) {
    if (error instanceof TargetError)
      throw new OpError('request', { code: 'target_refused', problem: error.problem, flag: true });
    throw error;
  }
}

/** A plan against the server the request connects to; the session is closed before it returns. */
export async function planAgainstServer(
  request: PlanRequest,
  events: PlanEvents = {},
  signal?: AbortSignal,
): Promise<PlanResult> {
  checkTargets(request.target);
  const base = await loadBase(request);
  const { desired, session, live } = await loadDesiredAndLive(request, events, signal);
  try {
    for (const warning of portRuleWarnings(desired)) events.warning?.(warning);
    const made = await makePlan(desired, request, session, events, live);
    const { finishPlan } = await import('./planning.js');
    return await finishPlan(made, request, { desired, session, live, base });
  } finally {
    await session.close();
  }
}

/** The base's desired state, read before anything else. */
export type LoadedBase = { ref: string; commit?: string; where: string } & (
  { result: LoadResult } | { missing: string }
);

export async function loadBase(request: Pick<PlanRequest, 'base' | 'file' | 'input'>): Promise<LoadedBase | undefined> {
  const { base } = request;
  if (base === undefined) return undefined;
  if ('file' in base) {
    const result = await inEffect(
      (path) => loadDesiredState(path, { env: request.input?.env }),
      request.input?.clock,
    )(base.file);
    if (!result.ok && result.diagnostics.some((d) => d.message === NO_SUCH_PATH))
      throw new OpError('request', { code: 'base_file_missing', file: base.file });
    return { ref: base.file, where: base.file, result };
  }
  try {
    const { repoPath, ref, commit, ...loaded } = await loadDesiredStateAtRef(request.file, base.ref, {
      env: request.input?.env,
    });
    // The base's files as in effect now, as the request's are: an expiry is neither side's change.
    if ('result' in loaded && loaded.result.ok) {
      const at = request.input?.clock?.() ?? new Date();
      loaded.result = { ...loaded.result, state: effectiveAt(loaded.result.state, at) };
    }
    return { ref, commit, where: repoPath, ...loaded };
  } catch (error) {
    if (error instanceof GitRefError) throw new OpError('request', error.message);
    throw error;
  }
}

/**
 * The desired state, a session, and the server's state being read: at the same time against a
 * remote server (it prepares its lists while the files are parsed), so a plan costs little more
 * than the slower of the two. Bad files still stop the operation with their own errors before
 * anything is written; for an embedded server (or no usable connection) the files are read first,
 * so that bad files touch no database.
 */
async function loadDesiredAndLive(
  request: PlanRequest,
  events: OpEvents,
  cancel?: AbortSignal,
): Promise<{ desired: DesiredState; session: Session; live: Promise<LiveState> }> {
  const { file, connect } = request;
  const load = request.load ?? loaderFor(request.input);
  if (connect.embedded) {
    const desired = await loadDesired(file, events, load);
    const session = await connect.open({ cancel });
    // As for a URL: `configuration:` is read when the files declare it (an export writes it).
    return { desired, session, live: readLiveState(session, { configuration: desired.configuration !== undefined }) };
  }
  let session: Session;
  // Bad files make the reads pointless: they are abandoned (no retries of a server that is down).
  // Abandoning is safe in any state of a read (not started, in flight, ended): see the client's
  // linkedAbort, which keeps an abort from reaching a request whose exchange is over.
  const unwanted = new AbortController();
  const abandon = cancel ? AbortSignal.any([unwanted.signal, cancel]) : unwanted.signal;
  try {
    session = await connect.open({ cancel: abandon });
  } catch (error) {
    await loadDesired(file, events, load); // the files' errors come first
    throw error;
  }
  const lists = readLiveState(session);
  lists.catch(() => {}); // awaited by makePlan; when the files fail, their errors are the answer
  try {
    const desired = await loadDesired(file, events, load);
    // `configuration:` is read only when declared, which is known now.
    const live = desired.configuration === undefined ? lists : withConfiguration(lists, session);
    return { desired, session, live };
  } catch (error) {
    unwanted.abort();
    await session.close();
    throw error;
  }
}

/**
 * Reads the live state (one list call per collection; or waits for `reading`, started earlier),
 * then plans against it (ops/planning.ts, loaded only now: a server that cannot be read needs no
 * planner).
 */
export async function makePlan(
  desired: DesiredState,
  shaping: PlanShaping,
  session: Session,
  events: OpEvents = {},
  reading?: Promise<LiveState>,
): Promise<Plan> {
  const started = performance.now();
  checkTargets(shaping.target);
  const live = await (reading ?? readLiveState(session, { configuration: desired.configuration !== undefined }));
  events.phase?.('fetch', elapsedSince(started));
  const planning = performance.now();
  const { planOnLive } = await import('./planning.js');
  return planOnLive(desired, live, shaping, session, events, planning);
}
