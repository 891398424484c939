/**
 * Fields a file leaves out are managed at their default: a user's `role` is `unprivileged`;
 * a device's `use_default_<x>` (allowed_ips, dns, endpoint, mtu, persistent_keepalive) is true
 * when neither `<x>` nor its flag is written, so its value follows the server. `description`,
 * `ipv4`, `ipv6`, `preshared_key` and `password` left out stay unmanaged. Opting out is explicit:
 * `ignore_changes` on the object or in `settings.ignore_changes` (the field is then not compared).
 *
 * "Now managed": a change to a field the file leaves out (and does not ignore) exists only because
 * of this meaning, whether it undoes a hand change or a value set before the upgrade: nothing in
 * the files asks for it in so many words. Such a change carries the note made here, is listed
 * first, and `apply -f` without a reviewed plan refuses it unless `--allow-now-managed`
 * (docs/managed-fields.md). Writing the field (its value or its default) makes it an ordinary change.
 */
import { USE_DEFAULT_FLAGS, type DefaultableDeviceField } from '../model/device-fields.js';
import type {
  DesiredDevice,
  DesiredDeviceFields,
  DesiredSettings,
  DesiredUser,
  IgnorableDeviceField,
} from '../model/state.js';
import type { Role } from '../model/types.js';
import type { NotePart } from './notes.js';

/** What a user's left-out role means. */
export const DEFAULT_ROLE: Role = 'unprivileged';

/** Whether the user's role is compared: not when `ignore_changes` (its own or the settings') names it. */
export function roleIgnored(user: DesiredUser, settings: DesiredSettings): boolean {
  // An expired admin role is held to `unprivileged` whatever ignore_changes says.
  if (user.role_expired !== undefined) return false;
  return (user.ignore_changes?.includes('role') ?? false) || (settings.ignore_changes?.users.includes('role') ?? false);
}

/** The role the plan holds the live user to: the written one, else the default; undefined when ignored. */
export function managedRole(user: DesiredUser, settings: DesiredSettings): Role | undefined {
  if (roleIgnored(user, settings)) return undefined;
  return user.role ?? DEFAULT_ROLE;
}

/** The device fields `ignore_changes` names, its own and the settings'. */
export function ignoredDeviceFields(device: DesiredDevice, settings: DesiredSettings): Set<IgnorableDeviceField> {
  return new Set([...(device.ignore_changes ?? []), ...(settings.ignore_changes?.devices ?? [])]);
}

/**
 * The declaration as the planner compares it with a live device: ignored fields and their flags
 * taken out; each defaultable field left out with its flag given its default (the flag on), and
 * named in `defaulted`.
 */
export function comparedDeviceFields(
  device: DesiredDevice,
  settings: DesiredSettings,
): { fields: DesiredDeviceFields; defaulted: DefaultableDeviceField[]; ignored: Set<IgnorableDeviceField> } {
  const ignored = ignoredDeviceFields(device, settings);
  const fields: DesiredDeviceFields = { ...device.fields };
  const defaulted: DefaultableDeviceField[] = [];
  for (const [field, flag] of USE_DEFAULT_FLAGS) {
    if (ignored.has(field)) {
      delete fields[field];
      delete fields[flag];
    } else if (fields[field] === undefined && fields[flag] === undefined) {
      fields[flag] = true;
      defaulted.push(field);
    }
  }
  return { fields, defaulted, ignored };
}

/** The note parts of fields now managed (src/views/notes.ts: `now managed: the file leaves role out, …`). */
export function nowManagedNote(fields: readonly string[]): NotePart[] {
  return fields.map((field) => ({ code: 'now_managed', field }));
}

/** The changes of a plan that are "now managed", and how many. */
export function nowManagedChanges<T extends { now_managed?: string[] }>(changes: readonly T[]): T[] {
  return changes.filter((change) => (change.now_managed?.length ?? 0) > 0);
}
