/**
 * The reverse questions as operations: who reaches a destination (`netform who-can-reach`) and what
 * a user's devices reach (`netform reach`), against the declared rules of a desired state or the
 * rules and devices of a live server. The evaluation itself is src/access/reach.ts (pure).
 */
import {
  reachOf,
  whoCanReach,
  type Reach,
  type ReachSource,
  type ReachTarget,
  type WhoCanReach,
} from '../access/index.js';
import type { DesiredState } from '../model/state.js';
import { modelFor, type AccessSource } from './access.js';
import { loadDesired, loaderFor } from './desired.js';
import { OpError } from './errors.js';
import { elapsedSince, type OpEvents } from './events.js';

/** The access model of the request, with the phases load and fetch reported. */
async function modelOf(request: AccessSource, events: OpEvents, signal?: AbortSignal) {
  const desired: DesiredState | undefined = request.file
    ? await loadDesired(request.file, events, loaderFor(request.input))
    : undefined;
  signal?.throwIfAborted();
  const model = await modelFor(request.live, desired, events, request.afterApply ? { repository: false } : undefined);
  signal?.throwIfAborted();
  return model;
}

/** Every source that reaches `to`, with the deciding rule and what it reaches (lists bounded unless `all`). */
export async function whoCanReachTarget(
  request: AccessSource & { to: ReachTarget; all?: boolean },
  events: OpEvents = {},
  signal?: AbortSignal,
): Promise<WhoCanReach> {
  const model = await modelOf(request, events, signal);
  const started = performance.now();
  const result = whoCanReach(model, request.to, { all: request.all === true });
  events.phase?.('evaluate', elapsedSince(started));
  return result;
}

/** Everything the devices `user` names reach, as address blocks, protocols and ports with the rule behind each. */
export async function reachOfUser(
  request: AccessSource & { user: ReachSource },
  events: OpEvents = {},
  signal?: AbortSignal,
): Promise<Reach> {
  const model = await modelOf(request, events, signal);
  const started = performance.now();
  const result = reachOf(model, request.user, request.live ? 'live' : 'declared');
  if (!result.ok) throw new OpError('request', result.message);
  events.phase?.('evaluate', elapsedSince(started));
  return result.value;
}
