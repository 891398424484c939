/**
 * Access tests and explanations as operations: against the declared rules of a desired state, or
 * against the rules and devices of a live server. Plan and apply run the tests on the state after
 * apply (src/access/plan.ts) and carry their failures (Plan.tests): a failing test blocks apply.
 */
import {
  accessModelOfDesired,
  accessModelOfLive,
  accessSettingsOf,
  CompiledRules,
  evaluateFrom,
  runAccessTests,
  type AccessModel,
  type FromSpec,
  type Destination,
  type SourceDecisions,
  type TestResult,
} from '../access/index.js';
import { stateAfterApply, type EvaluatedState, type StateAfterApply } from '../access/after-apply.js';
import type { Diagnostic } from '../model/diagnostic.js';
import type { DesiredState, LiveState } from '../model/state.js';
import { OpError } from './errors.js';
import { loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { elapsedSince, type OpEvents } from './events.js';
import { makePlan } from './plan.js';
import { readLiveState, type Connector, type Session } from './session.js';

/**
 * What to evaluate against (docs/rule-semantics.md §9): the declared rules of `file` (files only),
 * with `live` the server's as it is (live now; settings from `file`), or with `live` and
 * `afterApply` the server as apply would leave it (after apply: `file` planned against it).
 */
export interface AccessSource {
  file?: string;
  live?: Connector;
  afterApply?: boolean;
  /** Where the file's secrets (and `-` for stdin) are read from. */
  input?: DesiredInput;
}

/** The state an access answer was evaluated on, for its header. */
export function evaluatedState(source: AccessSource): EvaluatedState {
  return source.live ? (source.afterApply ? 'after-apply' : 'live') : 'files';
}

/**
 * The access model to evaluate against: the declared one, the server's (its reading reported as
 * 'fetch'), or with `afterApply` the state after apply (src/access/after-apply.ts): every user, or
 * with `repository` only those inside `manage.users` (what `tests:` evaluate, as plan does).
 */
export async function modelFor(
  live: Connector | undefined,
  desired: DesiredState | undefined,
  events: OpEvents = {},
  afterApply?: { repository: boolean },
): Promise<AccessModel> {
  if (afterApply) {
    if (!live || !desired) throw new OpError('request', { code: 'after_apply_needs_files_and_server' });
    const after = await stateAfterApplyOf(live, desired, events);
    return afterApply.repository ? after.repositoryModel() : after.model;
  }
  if (!live) {
    if (!desired) throw new OpError('request', { code: 'nothing_to_evaluate' });
    return accessModelOfDesired(desired);
  }
  const session = await live.open();
  try {
    const started = performance.now();
    const state = await readLiveState(session);
    events.phase?.('fetch', elapsedSince(started));
    return accessModelOfLive(state, desired ? accessSettingsOf(desired) : undefined);
  } finally {
    await session.close();
  }
}

/** The files planned against the server, and the state that plan leaves (nothing is written). */
async function stateAfterApplyOf(live: Connector, desired: DesiredState, events: OpEvents): Promise<StateAfterApply> {
  const session = await live.open();
  try {
    return await afterApplyOnSession(session, desired, events);
  } finally {
    await session.close();
  }
}

/** The state after apply of the files on an open session; `read`: the live state already read (with the configuration the files need). */
export async function afterApplyOnSession(
  session: Session,
  desired: DesiredState,
  events: OpEvents,
  read?: LiveState,
): Promise<StateAfterApply> {
  const reading = read
    ? Promise.resolve(read)
    : readLiveState(session, { configuration: desired.configuration !== undefined });
  // Never applied: a secret it cannot read stops nothing (as drift).
  const plan = await makePlan(desired, { unreadableSecrets: 'report' }, session, events, reading);
  return stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live: await reading, desired });
}

export interface AccessEvents {
  /** Something to look at that does not stop the evaluation: a secret that cannot be read now (rules need none). */
  warning?(diagnostic: Diagnostic): void;
}

/** The desired state; rules need no secret, so one that cannot be read is only a warning here. */
function loadForAccess(file: string, events: AccessEvents, input?: DesiredInput): Promise<DesiredState> {
  const load = loaderFor(input);
  return loadDesired(file, {}, async (path) => {
    const loaded = await load(path);
    for (const warning of loaded.warnings ?? []) events.warning?.(warning);
    return loaded;
  });
}

/** The `tests:` of the desired state in `file`, run against its rules or the live server's. */
export async function runTests(
  request: AccessSource & { file: string },
  events: AccessEvents = {},
): Promise<TestResult[]> {
  const desired = await loadForAccess(request.file, events, request.input);
  const afterApply = request.afterApply ? { repository: true } : undefined;
  return runAccessTests(await modelFor(request.live, desired, {}, afterApply), desired.tests ?? []);
}

/** How one packet, or every packet to an address or a block, from every source `from` names is decided. */
export async function explainPacket(
  request: AccessSource & { from: FromSpec; to: Destination },
  events: AccessEvents = {},
): Promise<SourceDecisions> {
  const desired = request.file ? await loadForAccess(request.file, events, request.input) : undefined;
  const model = await modelFor(request.live, desired, {}, request.afterApply ? { repository: false } : undefined);
  const evaluated = evaluateFrom(model, new CompiledRules(model), request.from, request.to, true);
  if (!evaluated.ok) throw new OpError('request', evaluated.message);
  return evaluated.value;
}
