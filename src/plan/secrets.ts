/**
 * A plan's secrets carry, in memory only, the value they were planned with: the value the plan
 * compared with the server is the one a saved plan's HMAC is taken of (seal.ts). It is kept beside
 * the plan, never in it, so no rendering or serialisation of a plan can reach it.
 */
import type { Secret } from '../model/secret.js';
import type { PlanSecret } from './types.js';

const values = new WeakMap<PlanSecret, Secret>();

/**
 * A secret field of a change: its reference (and where it is declared), with the value it was
 * planned with kept aside. A secret read and found unreadable (a plan that unpins: a variable unset here) is not
 * pinned: it is read where the plan is applied.
 */
export function planSecret(field: PlanSecret['field'], secret: Secret): PlanSecret {
  const unread = secret.wasRead && 'unreadable' in secret.read();
  const planned: PlanSecret = {
    field,
    ref: secret.ref,
    ...(secret.at ? { at: secret.at } : {}),
    ...(unread ? { pinned: false } : {}),
  };
  values.set(planned, secret);
  return planned;
}

/** The value a secret was planned with, when it was planned in this process. */
export function planSecretValue(secret: PlanSecret): Secret | undefined {
  return values.get(secret);
}
