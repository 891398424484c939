/** `renamed_from` entries that contradict the rest of the desired state. */
import { checkDeviceName } from '../../model/device.js';
import { deviceKey, userKey } from '../../model/keys.js';
import type { DesiredState } from '../../model/state.js';
import { checkEmail } from '../../model/user.js';
import type { Diagnostic } from '../types.js';
import type { DeviceEntry, UserEntry } from './fields.js';
import { describeList, firstByKey, report, reportDuplicates, whereIs, type Declared } from './report.js';
import { userScope } from './scope.js';

/** A `renamed_from` that names another object: where it is written, and the key of the object it names. */
interface Rename extends Declared {
  /** The key of the declaring object. */
  key: string;
  /** The key of the live object it is renamed from. */
  from: string;
  /** Of a device: its user's key, and the name it is renamed from. */
  owner?: string;
  fromName?: string;
}

/**
 * `renamed_from` entries that contradict the rest. The planner would refuse them, or do two things
 * to one live object (rename it twice, rename it and delete it, rename a user outside `manage`),
 * once the old object is live: they are refused here, so that what validate accepts, plan can plan.
 * A user or device cannot be renamed from one the files declare, list as absent, or another
 * declaration is renamed from already; a user not from outside settings.manage.users.
 */
export function checkRenames(
  state: DesiredState,
  users: UserEntry[],
  devices: DeviceEntry[],
  into: Diagnostic[],
): void {
  const userRenames = users.flatMap((u): Rename[] => {
    const email = u.user.renamed_from === undefined || u.key === null ? null : checkEmail(u.user.renamed_from);
    if (!email?.ok || userKey(email.email) === u.key) return [];
    return [{ source: u.source, fallbackPath: u.fallbackPath, key: u.key!, from: userKey(email.email) }];
  });
  const ownerFrom = new Map(userRenames.map((r) => [r.key, r.from]));
  const deviceRenames = devices.flatMap((d): Rename[] => {
    const from = d.device.renamed_from;
    if (typeof from !== 'string' || d.owner.key === null || typeof d.device.name !== 'string') return [];
    if (from.trim() === '' || from.trim() === d.device.name.trim()) return [];
    const key = deviceKey(d.owner.key, d.device.name);
    const fromName = from.trim();
    const rename = { source: d.source, fallbackPath: d.fallbackPath, key, from: deviceKey(d.owner.key, from) };
    return [{ ...rename, owner: d.owner.key, fromName }];
  });
  if (userRenames.length === 0 && deviceRenames.length === 0) return;

  const declaredUsers = firstByKey(users, (u) => u.key);
  const absentUsers = new Map<string, Declared>();
  state.absent.users.forEach((a, i) => {
    const email = checkEmail(a.email);
    const key = email.ok ? userKey(email.email) : null;
    if (key !== null && !absentUsers.has(key))
      absentUsers.set(key, { source: a.source, fallbackPath: `absent.users[${i}]` });
  });
  const { manage } = state.settings;
  const inScope = userScope(manage.users);
  for (const r of userRenames) {
    const declared = declaredUsers.get(r.from);
    if (declared)
      into.push(
        report(
          r,
          'renamed_from',
          `${r.from} is declared at ${whereIs(declared, 'email')}: a user the files keep cannot be renamed; remove renamed_from or that user`,
        ),
      );
    const absent = absentUsers.get(r.from);
    if (absent)
      into.push(
        report(
          r,
          'renamed_from',
          `${r.from} is listed as absent at ${whereIs(absent)}: the user would be renamed and deleted; keep one of the two`,
        ),
      );
    if (inScope && manage.users && !inScope(r.from))
      into.push(
        report(
          r,
          'renamed_from',
          `${r.from} is outside settings.manage.users (${describeList(manage.users)}): this repository cannot rename it; widen the scope to take the user over`,
        ),
      );
  }
  reportDuplicates(
    userRenames,
    (r) => r.from,
    (r, first) =>
      report(
        r,
        'renamed_from',
        `${r.from} is also the renamed_from of ${first.key} at ${whereIs(first, 'renamed_from')}: one user can be renamed into one user only`,
      ),
    into,
  );

  const declaredDevices = firstByKey(devices, (d) =>
    d.owner.key !== null && typeof d.device.name === 'string' ? deviceKey(d.owner.key, d.device.name) : null,
  );
  const absentDevices = new Map<string, Declared>();
  state.absent.devices.forEach((a, i) => {
    const email = checkEmail(a.user);
    const name = checkDeviceName(a.name);
    if (!email.ok || typeof name !== 'string') return;
    const key = deviceKey(email.email, name);
    if (!absentDevices.has(key)) absentDevices.set(key, { source: a.source, fallbackPath: `absent.devices[${i}]` });
  });
  for (const r of deviceRenames) {
    const declared = declaredDevices.get(r.from);
    const name = r.fromName!;
    if (declared)
      into.push(
        report(
          r,
          'renamed_from',
          `device "${name}" is declared at ${whereIs(declared, 'name')}: a device the files keep cannot be renamed; remove renamed_from or that device`,
        ),
      );
    // Listed as absent under its user's email, or under the email the user is renamed from.
    const previousOwner = ownerFrom.get(r.owner!);
    const absent =
      absentDevices.get(r.from) ?? (previousOwner ? absentDevices.get(deviceKey(previousOwner, name)) : undefined);
    if (absent)
      into.push(
        report(
          r,
          'renamed_from',
          `device "${name}" is listed as absent at ${whereIs(absent)}: the device would be renamed and deleted; keep one of the two`,
        ),
      );
  }
  reportDuplicates(
    deviceRenames,
    (r) => r.from,
    (r, first) =>
      report(
        r,
        'renamed_from',
        `device "${r.fromName!}" is also the renamed_from of ${first.key} at ${whereIs(first, 'renamed_from')}: one device can be renamed into one device only`,
      ),
    into,
  );
}
