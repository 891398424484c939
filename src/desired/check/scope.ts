/**
 * The `manage` scope and the `absent` entries: declarations outside `settings.manage`, and
 * `absent` entries that are malformed, repeated, declared as well, or protected.
 */
import { checkDeviceName } from '../../model/device.js';
import { emailGlobMatcher, emailGlobProblem } from '../../model/email-glob.js';
import { deviceKey, userKey } from '../../model/keys.js';
import { cidrContains, parseCidrOrAddress, type ParsedCidr } from '../../model/net.js';
import type { DesiredState } from '../../model/state.js';
import { checkEmail } from '../../model/user.js';
import type { Diagnostic } from '../types.js';
import type { DeviceEntry, RuleEntry, UserEntry } from './fields.js';
import { describeList, explainEmail, firstByKey, report, reportDuplicates, whereIs, type Declared } from './report.js';

/**
 * Matches emails against the `manage.users` globs with the planner's matcher (model/email-glob.ts);
 * null when every user is managed. Globs checkSettings refused are left out (they are reported).
 */
export function userScope(globs: string[] | null): ((email: string) => boolean) | null {
  if (globs === null) return null;
  return emailGlobMatcher(globs.filter((g) => typeof g === 'string' && emailGlobProblem(g) === null));
}

export function checkScope(state: DesiredState, users: UserEntry[], rules: RuleEntry[], into: Diagnostic[]): void {
  const { manage } = state.settings;
  const inScope = userScope(manage.users);
  if (inScope && manage.users) {
    const scope = describeList(manage.users);
    for (const u of users) {
      if (u.key !== null && !inScope(u.key)) {
        into.push(
          report(
            u,
            'email',
            `${u.key} is outside settings.manage.users (${scope}): this repository does not manage it; widen the scope or remove the user`,
          ),
        );
      }
    }
    state.absent.users.forEach((a, i) => {
      const email = checkEmail(a.email);
      if (email.ok && !inScope(email.email)) {
        into.push(
          report(
            { source: a.source, fallbackPath: `absent.users[${i}]` },
            undefined,
            `${userKey(email.email)} is outside settings.manage.users (${scope}): this repository cannot delete it`,
          ),
        );
      }
    });
    state.absent.devices.forEach((a, i) => {
      const email = checkEmail(a.user);
      if (email.ok && !inScope(email.email)) {
        into.push(
          report(
            { source: a.source, fallbackPath: `absent.devices[${i}]` },
            'user',
            `${userKey(email.email)} is outside settings.manage.users (${scope}): this repository cannot delete its devices`,
          ),
        );
      }
    });
  }
  if (manage.rules) {
    const blocks = manage.rules.map((b) => parseCidrOrAddress(b)).filter((b): b is ParsedCidr => b !== null);
    const scope = describeList(manage.rules);
    for (const r of rules) {
      if (r.owner !== null || !r.parsed) continue;
      if (!blocks.some((block) => cidrContains(block, r.parsed!.destination))) {
        into.push(
          report(
            r,
            'destination',
            `${r.rule.destination} is outside settings.manage.rules (${scope}): this repository does not manage global rules there; widen the scope or remove the rule`,
          ),
        );
      }
    }
  }
}

export function checkAbsent(state: DesiredState, users: UserEntry[], devices: DeviceEntry[], into: Diagnostic[]): void {
  // Most states list nothing as absent: the indexes of every declaration are not built for them.
  if (state.absent.users.length === 0 && state.absent.devices.length === 0) return;
  const declaredUsers = firstByKey(users, (u) => u.key);
  // protect.users are globs, as the planner reads them: the first entry that matches, by index.
  const protectedBy = state.settings.protect.users.flatMap((glob, i) =>
    checkEmail(glob).ok && emailGlobProblem(glob) === null ? [{ i, matches: emailGlobMatcher([glob]) }] : [],
  );
  const settings: Declared = { source: state.settings.source, fallbackPath: 'settings' };

  const absentUsers = state.absent.users.map((a, i) => ({
    ...a,
    source: a.source,
    fallbackPath: `absent.users[${i}]`,
    key: null as string | null,
  }));
  for (const a of absentUsers) {
    const email = checkEmail(a.email);
    if (!email.ok) {
      into.push(report(a, undefined, explainEmail(a.email, email.message)));
      continue;
    }
    a.key = userKey(email.email);
    const declared = declaredUsers.get(a.key);
    if (declared)
      into.push(
        report(
          a,
          undefined,
          `${a.key} is declared at ${whereIs(declared, 'email')} and listed as absent; keep one of the two`,
        ),
      );
    const protectedAt = protectedBy.find((p) => p.matches(a.key!))?.i;
    if (protectedAt !== undefined) {
      into.push(
        report(
          a,
          undefined,
          `${a.key} is protected (settings.protect.users at ${whereIs(settings, `protect.users[${protectedAt}]`)}) and cannot be deleted; remove it from one of the two`,
        ),
      );
    }
  }
  reportDuplicates(
    absentUsers,
    (a) => a.key,
    (a, first) => report(a, undefined, `${a.key} is already listed as absent at ${whereIs(first)}`),
    into,
  );

  const declaredDevices = firstByKey(devices, (d) =>
    d.owner.key !== null ? deviceKey(d.owner.key, d.device.name ?? '') : null,
  );
  const absentDevices = state.absent.devices.map((a, i) => ({
    ...a,
    source: a.source,
    fallbackPath: `absent.devices[${i}]`,
    key: null as string | null,
  }));
  for (const a of absentDevices) {
    const email = checkEmail(a.user);
    const name = checkDeviceName(a.name);
    if (!email.ok) into.push(report(a, 'user', explainEmail(a.user, email.message)));
    if (typeof name !== 'string') into.push(report(a, 'name', name.message));
    if (!email.ok || typeof name !== 'string') continue;
    a.key = deviceKey(email.email, name);
    const declared = declaredDevices.get(a.key);
    if (declared)
      into.push(
        report(
          a,
          undefined,
          `device "${name}" of ${userKey(email.email)} is declared at ${whereIs(declared, 'name')} and listed as absent; keep one of the two`,
        ),
      );
  }
  reportDuplicates(
    absentDevices,
    (a) => a.key,
    (a, first) => report(a, undefined, `this device is already listed as absent at ${whereIs(first)}`),
    into,
  );
}
