/**
 * Access gates as operations (`netform check`): whether a change grants new access (the files at a
 * git ref against the files now, or the server now against the state after apply of the files), and
 * whether anyone reaches a block a standing invariant keeps closed. Each returns data; the command
 * decides pass, fail or error.
 */
import { stateAfterApply } from '../access/after-apply.js';
import { computeAccessDelta, reachingInto, type AccessDelta, type DeviceDelta } from '../access/delta.js';
import { accessDeltaDocument, type AccessDeltaDocument } from '../access/delta-sets.js';
import { parseGateTarget, type GateTarget } from '../access/gate.js';
import { accessModelOfDesired, accessModelOfLive, accessSettingsOf, type AccessModel } from '../access/model.js';
import { effectiveAt } from '../desired/expiry.js';
import { GitRefError, loadDesiredStateAtRef } from '../desired/git-ref.js';
import { emailGlobMatcher, emailGlobProblem } from '../model/email-glob.js';
import { formatDiagnostic, type Diagnostic } from '../model/diagnostic.js';
import { userKey } from '../model/keys.js';
import type { DesiredState, LiveState } from '../model/state.js';
import { modelFor, type AccessSource } from './access.js';
import { adminsAfter } from './access-delta.js';
import { loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { OpError } from './errors.js';
import { makePlan } from './plan.js';
import { readLiveState, type Connector } from './session.js';

export interface CheckEvents {
  /** Something to look at that does not stop the check (a secret that cannot be read now). */
  warning?(diagnostic: Diagnostic): void;
}

export interface NoNewAccessRequest {
  file: string;
  /** Compare with the same path at this git ref (the files' declared access on both sides). */
  base?: string;
  /** Compare the server now with the state after apply of the files. */
  live?: Connector;
  input?: DesiredInput;
}

/** Rules need no secret: one that cannot be read is a warning here. */
function loadForCheck(file: string, events: CheckEvents, input?: DesiredInput): Promise<DesiredState> {
  const load = loaderFor(input);
  return loadDesired(file, {}, async (path) => {
    const loaded = await load(path);
    for (const warning of loaded.warnings ?? []) events.warning?.(warning);
    return loaded;
  });
}

const adminsOfDesired = (desired: DesiredState): Set<string> =>
  new Set(desired.users.filter((u) => u.role === 'admin').map((u) => userKey(u.email)));

const adminsOfLive = (live: LiveState): Set<string> => adminsAfter(live, []);

const EMPTY_MODEL = (settings: AccessModel['settings']): AccessModel => ({ users: new Map(), rules: [], settings });

/**
 * `check no-new-access`: the delta (each entry's regions listed, for the grants) and, made only
 * when asked for (`check --format json`), the same delta as documents carry it (each list of
 * regions once).
 */
export async function noNewAccess(
  request: NoNewAccessRequest,
  events: CheckEvents = {},
): Promise<{ delta: AccessDelta; document: () => AccessDeltaDocument }> {
  const delta = await noNewAccessDelta(request, events);
  let document: AccessDeltaDocument | undefined;
  return { delta, document: () => (document ??= accessDeltaDocument(delta)) };
}

/** The access delta the request asks about: the files at `base` to the files now, or the server now to after apply. */
export async function noNewAccessDelta(request: NoNewAccessRequest, events: CheckEvents = {}): Promise<AccessDelta> {
  if ((request.base === undefined) === (request.live === undefined))
    throw new OpError('request', { code: 'check_base_or_live' });
  const desired = await loadForCheck(request.file, events, request.input);
  if (request.base !== undefined) return baseDelta(request.file, request.base, desired, request.input);
  const session = await request.live!.open();
  try {
    const live = await readLiveState(session, { configuration: desired.configuration !== undefined });
    // Never applied: a secret it cannot read stops nothing (as drift).
    const plan = await makePlan(desired, { unreadableSecrets: 'report' }, session, {}, Promise.resolve(live));
    const now = stateAfterApply({ changes: [], live, desired });
    const after = stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired });
    return computeAccessDelta({
      before: now.model,
      after: after.model,
      admins: { before: adminsOfLive(live), after: adminsAfter(live, plan.changes) },
      compared: { before: { code: 'server_now' }, after: { code: 'after_apply_of_files' } },
    });
  } finally {
    await session.close();
  }
}

async function baseDelta(file: string, ref: string, desired: DesiredState, input?: DesiredInput): Promise<AccessDelta> {
  let base: Awaited<ReturnType<typeof loadDesiredStateAtRef>>;
  try {
    base = await loadDesiredStateAtRef(file, ref, { env: input?.env });
  } catch (error) {
    if (error instanceof GitRefError) throw new OpError('request', error.message);
    throw error;
  }
  let before: AccessModel;
  let admins = new Set<string>();
  if ('missing' in base) before = EMPTY_MODEL(accessSettingsOf(desired));
  else if (!base.result.ok) {
    const problems = base.result.diagnostics.map(formatDiagnostic);
    throw new OpError('desired-state', { code: 'desired_state_errors', problems, at: base.ref });
  } else {
    // The base as in effect now, as the head is: a grant expired at the base and renewed by the
    // pull request is new access, not access the base still gives.
    const inEffectAtBase = effectiveAt(base.result.state, input?.clock?.() ?? new Date());
    before = accessModelOfDesired(inEffectAtBase);
    admins = adminsOfDesired(inEffectAtBase);
  }
  return computeAccessDelta({
    before,
    after: accessModelOfDesired(desired),
    admins: { before: admins, after: adminsOfDesired(desired) },
    compared: { before: { code: 'files_at', ref: base.ref }, after: { code: 'files_now' } },
  });
}

export interface NoAccessToRequest extends AccessSource {
  file: string;
  target: string;
  /** Users (emails or globs, as `manage.users` takes them) allowed to reach the target. */
  except: string[];
}

export interface NoAccessToResult {
  target: GateTarget;
  /** Every (user, device) outside `except` that reaches some part of the target, with the deciding rules. */
  reaching: DeviceDelta[];
}

/** Who, outside `except`, reaches some packet of the target: against the files, the server now, or after apply. */
export async function noAccessTo(request: NoAccessToRequest, events: CheckEvents = {}): Promise<NoAccessToResult> {
  const parsed = parseGateTarget(request.target);
  if (!parsed.ok) throw new OpError('request', `no-access-to ${request.target}: ${parsed.message}`);
  for (const glob of request.except) {
    const problem = emailGlobProblem(glob);
    if (problem) throw new OpError('request', { code: 'except_glob_unusable', glob, problem });
  }
  const desired = await loadForCheck(request.file, events, request.input);
  let model: AccessModel;
  if (request.live && !request.afterApply) {
    const session = await request.live.open();
    try {
      model = accessModelOfLive(await readLiveState(session), accessSettingsOf(desired));
    } finally {
      await session.close();
    }
  } else model = await modelFor(request.live, desired, {}, request.afterApply ? { repository: false } : undefined);
  const allowed = emailGlobMatcher(request.except);
  return { target: parsed.value, reaching: reachingInto(model, parsed.value.region, allowed) };
}
