/**
 * Access tests and explanations as operations: against the declared rules of a desired state, or
 * against the rules and devices of a live server. Plan and apply run the tests first
 * (refuseFailingTests).
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
import type { DesiredState } from '../model/state.js';
import { OpError } from './errors.js';
import { loadDesired } from './desired.js';
import { readLiveState, type Connector } from './session.js';

/** What to evaluate against: the declared rules of `file`, or with `live` the server's (settings from `file`). */
export interface AccessSource {
  file?: string;
  live?: Connector;
}

/** Plan and apply refuse (nothing written) when an access test of the desired state fails. */
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

/** The access model to evaluate against: the declared one, or the server's. */
async function modelFor(live: Connector | undefined, desired: DesiredState | undefined): Promise<AccessModel> {
  if (!live) {
    if (!desired)
      throw new OpError('request', 'nothing to evaluate against: give the desired state (file) or a live server');
    return accessModelOfDesired(desired);
  }
  const session = await live.open();
  try {
    return accessModelOfLive(await readLiveState(session), desired ? accessSettingsOf(desired) : undefined);
  } finally {
    await session.close();
  }
}

/** The `tests:` of the desired state in `file`, run against its rules or the live server's. */
export async function runTests(request: AccessSource & { file: string }): Promise<TestResult[]> {
  const desired = await loadDesired(request.file);
  return runAccessTests(await modelFor(request.live, desired), desired.tests ?? []);
}

/** How one packet from every source `from` names is decided. */
export async function explainPacket(request: AccessSource & { from: FromSpec; to: Packet }): Promise<SourceDecision[]> {
  const desired = request.file ? await loadDesired(request.file) : undefined;
  const model = await modelFor(request.live, desired);
  const evaluated = evaluateFrom(model, new CompiledRules(model), request.from, request.to, true);
  if (!evaluated.ok) throw new OpError('request', evaluated.message);
  return evaluated.value;
}

/** The `from` and `to` notation of `tests:` and `netform explain`. */
export { parseFrom, parseTo } from '../access/notation.js';
