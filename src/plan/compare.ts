/**
 * One change of two plans, compared: the reviewed plan against a fresh one (reviewed.ts), a pull
 * request's plan against its base's (base.ts). Two changes are the same when they write the same
 * thing (same object, action, fields and body, the same secrets by reference and HMAC, the same cascade)
 * and were planned against the same live object (same fingerprints). Ids the server assigns are
 * left out: a body naming a user by its live id and one naming it by `{ "$ref": … }` (a user
 * created in the same apply) are the same body, as the change's key already names the user.
 */
import { canonicalJson } from './canonical.js';
import type { SecretRef } from '../model/secret.js';
import type { Change } from './types.js';

/** What a server-assigned id in a body is compared as. */
const SERVER_ID = '(server-assigned id)';

/** Body members that hold the id of another object: a live id or a `$ref` to a change of the plan. */
const ID_MEMBERS = new Set(['user_id']);

function bodyWithoutServerIds(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [member, value] of Object.entries(body)) {
    const isId = ID_MEMBERS.has(member) && value !== null && value !== undefined;
    out[member] = isId ? SERVER_ID : value;
  }
  return out;
}

/** A secret reference without the folder it was resolved from (plan and apply may run in other checkouts). */
export function refOf(ref: SecretRef): Omit<SecretRef, 'baseDir'> {
  const { baseDir: _where, ...rest } = ref as { baseDir?: string };
  return rest as Omit<SecretRef, 'baseDir'>;
}

/**
 * The secrets a change sends: each field, its reference, and its HMAC when it has one. A reviewed
 * (saved) plan's secrets always have one; a plan made now has them once withSecretHmacs (seal.ts)
 * took them under the same key, so equal values compare equal and a changed value does not.
 */
function secretsOf(change: Change): unknown[] {
  return (change.secrets ?? []).map((secret) => ({
    field: secret.field,
    ref: refOf(secret.ref),
    hmac: secret.hmac ?? null,
  }));
}

/**
 * `a` with no HMAC on a secret that `b` (a reviewed plan's change) did not pin (`pinned: false`):
 * its value was not read at review, so any value read now is the reviewed one.
 */
function withoutPinsOf(a: Change, b: Change): Change {
  const unpinned = new Set((b.secrets ?? []).filter((s) => s.pinned === false).map((s) => s.field));
  if (unpinned.size === 0 || !a.secrets) return a;
  return {
    ...a,
    secrets: a.secrets.map(({ hmac: _hmac, ...secret }) =>
      unpinned.has(secret.field) ? secret : { ...secret, ...(_hmac ? { hmac: _hmac } : {}) },
    ),
  };
}

/**
 * What the change writes, as one string: two changes with the same signature send the same
 * requests (server-assigned ids aside) and show the same lines to a reviewer.
 */
export function writeSignature(change: Change): string {
  return canonicalJson({
    id: change.id,
    kind: change.kind,
    action: change.action,
    key: change.key,
    fields: change.fields,
    body: change.body === undefined ? null : bodyWithoutServerIds(change.body),
    secrets: secretsOf(change),
    keepFromLive: change.keepFromLive ?? [],
    cascade: (change.cascade ?? []).map((item) => `${item.kind}:${item.key}`).sort(),
    note: change.note ?? null,
  });
}

/** What the change was planned against: the live object (and what goes with a user) by fingerprint. */
export function premiseSignature(change: Change): string {
  return canonicalJson({
    fingerprint: change.fingerprint ?? null,
    cascade: (change.cascade ?? []).map((item) => `${item.kind}:${item.key}:${item.fingerprint ?? ''}`).sort(),
  });
}

/**
 * `same`: writes the same, against the same live object. `different`: writes something else.
 * `premise`: writes the same, but the live object it acts on is no longer the one it was planned
 * against (changed by hand since, or another object under the same key).
 */
export type ChangeComparison = 'same' | 'different' | 'premise';

export function compareChanges(a: Change, b: Change): ChangeComparison {
  if (writeSignature(withoutPinsOf(a, b)) !== writeSignature(b)) return 'different';
  return premiseSignature(a) === premiseSignature(b) ? 'same' : 'premise';
}
