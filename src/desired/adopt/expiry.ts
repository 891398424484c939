/**
 * The one seam between adopt and expiring grants: a difference that exists because a grant's
 * `expires` (or a role's `role_expires`) has passed is not adopted (writing the live value would
 * renew the grant behind the reviewer's back); it is listed, and renewing it is an edit of the date.
 * Adopt never writes or removes an `expires` key.
 */
import { isScalar, type YAMLMap } from 'yaml';
import type { DesiredState } from '../../model/state.js';
import type { LiveIndex } from '../../plan/live-index.js';
import { expiredAt } from '../expiry.js';

/** The keys of a declaration that end a grant: of the whole object, and of a user's role. */
const EXPIRY_KEYS = { object: 'expires', role: 'role_expires' } as const;

function dateOf(map: YAMLMap, key: string): string | null {
  const node = map.get(key, true) as unknown;
  const value = isScalar(node) ? node.value : node;
  if (typeof value !== 'string' && !(value instanceof Date)) return null;
  const text = value instanceof Date ? value.toISOString().slice(0, 10) : value;
  const time = Date.parse(text);
  return Number.isNaN(time) ? null : text;
}

/**
 * The expiry that has passed for a declaration (a user, a device's user, a rule), or null: the
 * object's `expires`, or for a change of `role`, the user's `role_expires`. `now` is the run's
 * instant (CliIo.clock), never read here.
 */
export function expiredGrant(declaration: YAMLMap, fields: readonly string[], now: Date): string | null {
  const keys: string[] = [EXPIRY_KEYS.object];
  if (fields.includes('role')) keys.push(EXPIRY_KEYS.role);
  for (const key of keys) {
    const date = dateOf(declaration, key);
    if (date !== null && Date.parse(date) <= now.getTime()) return date;
  }
  return null;
}

/** A grant whose expiry has passed while the server still holds it: a difference only the date explains. */
export interface LiveExpiredGrant {
  /** The change id of the object (`user:…` for an expired role too). */
  id: string;
  /** The expiry as the files write it. */
  since: string;
  /** A whole user's expiry: its devices and rules go with it. */
  user: boolean;
}

/**
 * The grants of the files expired at `now` that the server still holds (an expired user, device or
 * rule still there; an expired `role_expires` while the server still says admin): what the state
 * in effect deletes or demotes, which adopt lists and leaves.
 */
export function expiredStillLive(desired: DesiredState, index: LiveIndex, now: Date): LiveExpiredGrant[] {
  const grants: LiveExpiredGrant[] = [];
  for (const item of expiredAt(desired, now)) {
    const live =
      item.kind === 'user'
        ? index.usersByKey.has(item.key)
        : item.kind === 'role'
          ? index.usersByKey.get(item.key)?.role === 'admin'
          : item.kind === 'device'
            ? index.devicesByKey.has(item.key)
            : index.rulesByKey.has(item.key);
    if (!live) continue;
    const kind = item.kind === 'role' ? 'user' : item.kind;
    grants.push({ id: `${kind}:${item.key}`, since: item.expires, user: item.kind === 'user' });
  }
  return grants;
}

/** Whether a user's `role_expires` has passed at `now` (its admin role is held to unprivileged). */
export function roleExpired(user: YAMLMap, now: Date): boolean {
  const date = dateOf(user, EXPIRY_KEYS.role);
  return date !== null && Date.parse(date) <= now.getTime();
}
