/**
 * Access tests and explanations as operations: against the declared rules of a desired state, or
 * against the rules and devices of a live server. Apply refuses a failing test (refuseFailingTests);
 * plan runs the tests with the plan and carries their failures (Plan.tests, W3.6).
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
  type Packet,
  type SourceDecision,
  type TestResult,
} from '../access/index.js';
import type { Diagnostic } from '../model/diagnostic.js';
import type { DesiredState } from '../model/state.js';
import { OpError } from './errors.js';
import { loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { elapsedSince, type OpEvents } from './events.js';
import { readLiveState, type Connector } from './session.js';

/** What to evaluate against: the declared rules of `file`, or with `live` the server's (settings from `file`). */
export interface AccessSource {
  file?: string;
  live?: Connector;
  /** Where the file's secrets (and `-` for stdin) are read from. */
  input?: DesiredInput;
}

/** Apply refuses (nothing written) when an access test of the desired state fails. */
export function refuseFailingTests(state: DesiredState): void {
  if (!state.tests || state.tests.length === 0) return;
  const failed = runAccessTests(accessModelOfDesired(state), state.tests).filter((r) => !r.pass);
  if (failed.length === 0) return;
  throw new OpError(
    'desired-state',
    `${failed.length} access test${failed.length === 1 ? '' : 's'} failed; nothing was planned or written:`,
    failed,
  );
}

/** The access model to evaluate against: the declared one, or the server's (its reading reported as 'fetch'). */
export async function modelFor(
  live: Connector | undefined,
  desired: DesiredState | undefined,
  events: OpEvents = {},
): Promise<AccessModel> {
  if (!live) {
    if (!desired)
      throw new OpError('request', 'nothing to evaluate against: give the desired state (file) or a live server');
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

export interface AccessEvents {
  /** Something to look at that does not stop the evaluation: a secret that cannot be read now (W3.6). */
  warning?(diagnostic: Diagnostic): void;
}

/** The desired state; rules need no secret, so one that cannot be read is only a warning here (W3.6). */
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
  return runAccessTests(await modelFor(request.live, desired), desired.tests ?? []);
}

/** How one packet from every source `from` names is decided. */
export async function explainPacket(
  request: AccessSource & { from: FromSpec; to: Packet },
  events: AccessEvents = {},
): Promise<SourceDecision[]> {
  const desired = request.file ? await loadForAccess(request.file, events, request.input) : undefined;
  const model = await modelFor(request.live, desired);
  const evaluated = evaluateFrom(model, new CompiledRules(model), request.from, request.to, true);
  if (!evaluated.ok) throw new OpError('request', evaluated.message);
  return evaluated.value;
}

/** The `from` and `to` notation of `tests:` and `netform explain`. */
export { parseFrom, parseTo } from '../access/notation.js';
