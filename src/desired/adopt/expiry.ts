/**
 * The one seam between adopt and expiring grants: a difference that exists because a grant's
 * `expires` (or a role's `role_expires`) has passed is not adopted (writing the live value would
 * renew the grant behind the reviewer's back); it is listed, and renewing it is an edit of the date.
 * Adopt never writes or removes an `expires` key.
 */
import { isScalar, type YAMLMap } from 'yaml';

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
