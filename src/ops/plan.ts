/**
 * Planning against a server: the desired state and the server's state read (at the same time
 * where that is safe), the plan made, `--target` applied and the plan's access changes attached.
 * The plan that leaves here is finished.
 */
import { planAccessChanges } from '../access/plan.js';
import { fetchConfiguration } from '../client/index.js';
import type { LoadResult } from '../desired/index.js';
import type { DesiredState, LiveState } from '../model/state.js';
import { planChanges, PlanError, type Plan } from '../plan/index.js';
import { normalizeTarget, targetPlan, TargetError } from '../plan/target.js';
import { refuseFailingTests } from './access.js';
import { loadDesired } from './desired.js';
import { OpError } from './errors.js';
import { elapsedSince, type OpEvents } from './events.js';
import { readLiveState, serverRefused, type Connector, type Session } from './session.js';

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
}

export interface PlanRequest extends PlanShaping {
  /** The desired state: a YAML file, a folder, a cdk.tf.json, or `-` (stdin). */
  file: string;
  connect: Connector;
  /** Run the desired state's access tests first and refuse when one fails (plan and apply do; drift does not). */
  refuseFailingTests?: boolean;
  /** How the files are read (a scheduled drift reuses an unchanged state). Default loadDesiredState. */
  load?: (path: string) => Promise<LoadResult>;
}

export interface PlanResult {
  plan: Plan;
}

/** `--target` values in the plan's key notation, checked before anything is read. */
export function checkTargets(targets: readonly string[] | undefined): void {
  try {
    targets?.forEach(normalizeTarget);
  } catch (error) {
    if (error instanceof TargetError) throw new OpError('request', error.message);
    throw error;
  }
}

/** A plan against the server the request connects to; the session is closed before it returns. */
export async function planAgainstServer(
  request: PlanRequest,
  events: OpEvents = {},
  signal?: AbortSignal,
): Promise<PlanResult> {
  checkTargets(request.target);
  const { desired, session, live } = await loadDesiredAndLive(request, events, signal);
  try {
    if (request.refuseFailingTests) refuseFailingTests(desired);
    return { plan: await makePlan(desired, request, session, events, live) };
  } finally {
    await session.close();
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
  const { file, connect, load } = request;
  if (connect.embedded) {
    const desired = await loadDesired(file, events, load);
    const session = await connect.open({ cancel });
    return { desired, session, live: readLiveState(session) };
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

async function withConfiguration(lists: Promise<LiveState>, session: Session): Promise<LiveState> {
  const [live, configuration] = await Promise.all([
    lists,
    fetchConfiguration(session.client, 'required').catch((error: unknown) => {
      throw serverRefused(error);
    }),
  ]);
  return configuration ? { ...live, configuration } : live;
}

/**
 * Reads the live state (one list call per collection; or waits for `reading`, started earlier),
 * plans against it, keeps the targets and attaches the access changes.
 */
export async function makePlan(
  desired: DesiredState,
  shaping: PlanShaping,
  session: Session,
  events: OpEvents = {},
  reading?: Promise<LiveState>,
): Promise<Plan> {
  let started = performance.now();
  checkTargets(shaping.target);
  const live = await (reading ?? readLiveState(session, { configuration: desired.configuration !== undefined }));
  events.phase?.('fetch', elapsedSince(started));
  started = performance.now();
  try {
    const whole = planChanges(desired, live, {
      server: session.url,
      createdAt: new Date().toISOString(),
      tokenUser: session.tokenUser,
      replace: shaping.replace ?? false,
      rotatePasswords: shaping.rotatePasswords ?? false,
      allowDeletes: shaping.allowDeletes,
      allowUpdates: shaping.allowUpdates,
    });
    const targeted = shaping.target?.length ? targetPlan(whole, shaping.target) : whole;
    events.phase?.('diff', elapsedSince(started));
    started = performance.now();
    const plan: Plan = { ...targeted, access: planAccessChanges(targeted, live, desired) };
    events.phase?.('access', elapsedSince(started));
    return plan;
  } catch (error) {
    if (error instanceof PlanError) throw new OpError('plan', `cannot plan: ${error.message}`);
    if (error instanceof TargetError) throw new OpError('request', error.message);
    throw error;
  }
}
