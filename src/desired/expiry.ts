/**
 * Access over time: the files' `expires:` (a user, a device, a user's rule, a global rule) and
 * `role_expires:` judged at one instant. The effective desired state is what every path plans and
 * evaluates (plan, apply, drift, tests, explain, reach, review, nft, access changes, `--base`):
 * from its instant an object is treated as if listed under `absent:` (deleted whether `prune` is on
 * or off; a user with its devices and rules), an expired `role_expires` as `role: unprivileged`.
 * Pure: the instant is a parameter; the loaded state is never changed.
 */
import { deviceKey, ruleKey, userKey } from '../model/keys.js';
import { parseInstant } from '../model/instant.js';
import type { Diagnostic } from '../model/diagnostic.js';
import type { DesiredRule, DesiredState, DesiredUser, Expiry, ExpiryKind, SourceLocation } from '../model/state.js';

/** A rule's plan key (src/model/keys.ts) for its owner's email (null: a global rule). */
function keyOfRule(owner: string | null, rule: DesiredRule): string {
  return ruleKey({
    ownerEmail: owner,
    action: rule.action,
    destination: rule.destination,
    port_type: rule.port_type,
    port_range: rule.port_range,
  });
}

/** `accept 10.1.0.0/16 tcp 443`: a rule as people read it. */
function ruleWords(rule: DesiredRule): string {
  const ports = rule.port_type ? ` ${rule.port_type}${rule.port_range ? ` ${rule.port_range}` : ''}` : '';
  return `${rule.action} ${rule.destination}${ports}`;
}

/** Where an expiry is written: the `expires` (or `role_expires`) value when known, else its object. */
function placeOf(source: SourceLocation | undefined, field: string): SourceLocation | undefined {
  if (!source) return undefined;
  const at = source.fields?.[field];
  return at ? { file: at.file, line: at.line, column: at.column, ...(at.path ? { path: at.path } : {}) } : source;
}

function judged(
  kind: ExpiryKind,
  key: string,
  label: string,
  written: string,
  at: Date,
  source: SourceLocation | undefined,
  field = 'expires',
): Expiry | undefined {
  const parsed = parseInstant(written);
  // An expiry that cannot be read is refused when the files are read (src/desired/document.ts).
  if (!parsed.ok) return undefined;
  const where = placeOf(source, field);
  return {
    kind,
    key,
    label,
    expires: written,
    instant: parsed.instant.toISOString(),
    expired: parsed.instant.getTime() <= at.getTime(),
    ...(where ? { source: where } : {}),
  };
}

/**
 * Every `expires:` and `role_expires:` of the files, judged at `at`, in file order. A device or rule
 * of a user that expires is listed too (with its own expiry), whether or not it has passed.
 */
export function expiriesOf(state: DesiredState, at: Date): Expiry[] {
  const list: Expiry[] = [];
  const push = (item: Expiry | undefined) => {
    if (item) list.push(item);
  };
  for (const user of state.users) {
    const key = userKey(user.email);
    if (user.expires !== undefined) push(judged('user', key, `user ${user.email}`, user.expires, at, user.source));
    if (user.role_expires !== undefined)
      push(judged('role', key, `role admin of ${user.email}`, user.role_expires, at, user.source, 'role_expires'));
    for (const device of user.devices) {
      if (device.expires === undefined) continue;
      const dkey = deviceKey(user.email, device.name);
      push(judged('device', dkey, `device ${dkey}`, device.expires, at, device.source));
    }
    for (const rule of user.rules) {
      if (rule.expires === undefined) continue;
      push(
        judged(
          'rule',
          keyOfRule(user.email, rule),
          `rule ${ruleWords(rule)} (${user.email})`,
          rule.expires,
          at,
          rule.source,
        ),
      );
    }
  }
  for (const rule of state.rules) {
    if (rule.expires === undefined) continue;
    push(judged('rule', keyOfRule(null, rule), `rule ${ruleWords(rule)}`, rule.expires, at, rule.source));
  }
  return list;
}

/** The objects whose expiry has passed at `at`, with when (for adoption and the views). */
export function expiredAt(state: DesiredState, at: Date): Expiry[] {
  return expiriesOf(state, at).filter((item) => item.expired);
}

/**
 * The desired state in effect at `at`: expired users and devices moved under `absent:` (marked
 * `expired`), expired rules moved to `expiredRules`, an expired admin role held to `unprivileged`
 * (`role_expired`); `expiries` lists every expiry judged at `at`. The state given is not changed.
 */
export function effectiveAt(state: DesiredState, at: Date): DesiredState {
  const expiries = expiriesOf(state, at);
  if (expiries.length === 0) return state;
  const passed = new Map<string, Expiry>();
  for (const item of expiries) if (item.expired) passed.set(`${item.kind}:${item.key}`, item);
  const absentUsers = [...state.absent.users];
  const absentDevices = [...state.absent.devices];
  const expiredRules: { user: string | null; rule: DesiredRule }[] = [...(state.expiredRules ?? [])];
  const users: DesiredUser[] = [];
  for (const user of state.users) {
    const key = userKey(user.email);
    const gone = passed.get(`user:${key}`);
    if (gone) {
      absentUsers.push({ email: user.email, expired: gone.expires, ...(gone.source ? { source: gone.source } : {}) });
      continue;
    }
    const role = passed.get(`role:${key}`);
    const devices = user.devices.filter((device) => {
      const item = passed.get(`device:${deviceKey(user.email, device.name)}`);
      if (!item) return true;
      absentDevices.push({
        user: user.email,
        name: device.name,
        expired: item.expires,
        ...(item.source ? { source: item.source } : {}),
      });
      return false;
    });
    const rules = user.rules.filter((rule) => {
      if (!passed.has(`rule:${keyOfRule(user.email, rule)}`)) return true;
      expiredRules.push({ user: user.email, rule });
      return false;
    });
    if (!role && devices.length === user.devices.length && rules.length === user.rules.length) {
      users.push(user);
      continue;
    }
    const effective: DesiredUser = { ...user, devices, rules };
    if (role && user.role === 'admin') {
      effective.role = 'unprivileged';
      effective.role_expired = role.expires;
      if (effective.ignore_changes) effective.ignore_changes = effective.ignore_changes.filter((f) => f !== 'role');
    }
    users.push(effective);
  }
  const rules = state.rules.filter((rule) => {
    if (!passed.has(`rule:${keyOfRule(null, rule)}`)) return true;
    expiredRules.push({ user: null, rule });
    return false;
  });
  return {
    ...state,
    users,
    rules,
    absent: { users: absentUsers, devices: absentDevices },
    expiries,
    ...(expiredRules.length ? { expiredRules } : {}),
  };
}

/**
 * `validate`'s warnings: each expiry that has passed at the state's instant (an effective state's
 * `expiries`), at the value's line.
 */
export function pastExpiryWarnings(state: DesiredState): Diagnostic[] {
  return (state.expiries ?? [])
    .filter((item) => item.expired)
    .map((item) => {
      const field = item.kind === 'role' ? 'role_expires' : 'expires';
      const effect = item.kind === 'role' ? 'the role is unprivileged' : 'it is treated as listed under absent';
      const message = `${field} ${item.expires} has passed: ${effect} (${item.label}); remove it from the files, or move the date`;
      const at = item.source;
      return at
        ? { file: at.file, line: at.line, column: at.column, ...(at.path ? { path: at.path } : {}), message }
        : { message };
    });
}
