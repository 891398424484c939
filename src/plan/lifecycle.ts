/**
 * What `forget:` and `acknowledged:` (src/model/lifecycle.ts) do to a plan, judged at one instant.
 * Both work on the planner's inputs, so that every stage (and every path: plan, apply, drift,
 * `--base`) sees the same thing:
 * - a forgotten object leaves the live state the planner reads (a user with its devices and
 *   rules): nothing plans to change or delete it; it stays on the server, and the state after
 *   apply still evaluates it (`left`, LeftObjectPolicy.forgotten: never access drift);
 * - an acknowledgement in force whose live value (or, for `*`, the live object's fingerprint) is
 *   still the one acknowledged makes the planner see the live value as declared: a declared
 *   object's field takes the live value, an undeclared object leaves the live state as a forgotten
 *   one does (LeftObjectPolicy.acknowledged). It is listed as kept, never as drift. A live value
 *   that changed again, or an acknowledgement past its `until`, is ordinary drift, with a warning.
 * Pure.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { LeftObjectPolicy } from '../access/after-apply.js';
import { fieldOfFlag, isDefaultableField, useDefaultFlag } from '../model/device-fields.js';
import { deviceKeyOfOwnerKey, normalizeAllowedIps, normalizeDns, ruleKeyOfOwnerKey, userKey } from '../model/keys.js';
import type { DesiredAcknowledgement } from '../model/lifecycle.js';
import { describeRule } from '../views/model-rule.js';
import type { DesiredDevice, DesiredState, DesiredUser, LiveState } from '../model/state.js';
import type { ApiDevice, ApiRule, ApiUser } from '../model/types.js';
import { outcomeOf, planOutcome } from './outcome.js';
import type { UndeclaredReason } from './notes.js';
import type { ObjectKind, OutcomeItem, Plan, UndeclaredItem } from './types.js';
import type { EntrySource, PlanWarning } from './warnings.js';

/** A live object by its key. */
export interface LiveObject {
  kind: ObjectKind;
  /** `user:alice@example.com`, `device:alice@example.com/laptop`, `rule:*|accept|10.0.0.0/7|any`. */
  key: string;
  label: string;
  object: ApiUser | ApiDevice | ApiRule;
}

/** Fields of a live object that change by themselves (tunnel statistics, sign-ins, `updated_at`) or are secret. */
const NOT_FINGERPRINTED = new Set([
  'latest_handshake',
  'remote_ip',
  'rx_bytes',
  'tx_bytes',
  'updated_at',
  'last_signed_in_at',
  'last_signed_in_method',
  'preshared_key',
]);

/**
 * The fingerprint of a live object that an `acknowledged:` entry for `*` records: SHA-256 over the
 * canonical JSON of every field a person or netform can change (its keys sorted), secrets and
 * what changes by itself left out; `sha256:` and 32 hex digits. Stable across runs and servers.
 */
export function liveFingerprint(object: LiveObject['object']): string {
  const covered: Record<string, unknown> = {};
  for (const key of Object.keys(object).sort()) {
    if (NOT_FINGERPRINTED.has(key)) continue;
    covered[key] = (object as unknown as Record<string, unknown>)[key];
  }
  return `sha256:${createHash('sha256').update(JSON.stringify(covered)).digest('hex').slice(0, 32)}`;
}

/** Every live object by its key (rules of a user the server did not list are left out). */
export function liveObjects(live: LiveState): Map<string, LiveObject> {
  const objects = new Map<string, LiveObject>();
  const emailOf = new Map<string, string>();
  for (const user of live.users) {
    const key = userKey(user.email);
    emailOf.set(user.id, key);
    objects.set(`user:${key}`, { kind: 'user', key: `user:${key}`, label: `user ${user.email}`, object: user });
  }
  for (const device of live.devices) {
    const owner = emailOf.get(device.user_id);
    if (owner === undefined) continue;
    const key = `device:${deviceKeyOfOwnerKey(owner, device.name)}`;
    objects.set(key, { kind: 'device', key, label: `device ${owner}/${device.name}`, object: device });
  }
  for (const rule of live.rules) {
    const owner = rule.user_id === null ? null : emailOf.get(rule.user_id);
    if (owner === undefined) continue;
    const key = `rule:${ruleKeyOfOwnerKey(owner, rule)}`;
    objects.set(key, { kind: 'rule', key, label: `rule ${describeRule({ ...rule, owner })}`, object: rule });
  }
  return objects;
}

/** A live field's value as an entry records it. */
export function liveValue(object: LiveObject, field: string): unknown {
  const value = (object.object as unknown as Record<string, unknown>)[field];
  return value === undefined ? null : value;
}

/** Whether an entry's value is the live one (lists of addresses as sets, as the planner compares them). */
function sameValue(field: string, entry: unknown, live: unknown): boolean {
  if (Array.isArray(entry) && Array.isArray(live)) {
    const norm = field === 'dns' ? normalizeDns : normalizeAllowedIps;
    return isDeepStrictEqual(norm(entry.map(String)), norm(live.map(String)));
  }
  return isDeepStrictEqual(entry, live);
}

export interface Lifecycle {
  /** The desired state the planner reads: acknowledged fields at their live values. */
  desired: DesiredState;
  /** The live state the planner reads: without forgotten objects, nor undeclared ones acknowledged as a whole. */
  live: LiveState;
  /** Those live objects, for the state after apply: left in place, with why. */
  left: UndeclaredItem[];
  policy: LeftObjectPolicy;
  /** Acknowledged differences in force, for the plan's outcome (kept, never drift). */
  kept: OutcomeItem[];
  /** Forgotten objects (once each), and entries that match nothing, changed again or expired. */
  warnings: PlanWarning[];
  /** The acknowledgements in force (their live value or fingerprint still the one recorded). */
  inForce: DesiredAcknowledgement[];
}

/** Where an entry is declared, when known: `{ source }` to spread into a warning. */
function at(entry: { source?: { file: string; line: number } }): { source?: EntrySource } {
  return entry.source ? { source: { file: entry.source.file, line: entry.source.line } } : {};
}

/** `forget:` and `acknowledged:` judged at `now` over the live state. */
export function lifecycleOf(desired: DesiredState, live: LiveState, now: Date): Lifecycle {
  const policyIds = { acknowledged: new Set<string>(), forgotten: new Set<string>() };
  const result: Lifecycle = {
    desired,
    live,
    left: [],
    policy: {
      acknowledged: (rule) => rule.id !== undefined && policyIds.acknowledged.has(rule.id),
      forgotten: (rule) => rule.id !== undefined && policyIds.forgotten.has(rule.id),
    },
    kept: [],
    warnings: [],
    inForce: [],
  };
  if (!desired.forget?.length && !desired.acknowledged?.length) return result;
  const objects = liveObjects(live);
  const removed = new Set<string>();
  const leave = (object: LiveObject, reason: UndeclaredReason, ids: Set<string>): void => {
    const { id } = object.object;
    removed.add(id);
    ids.add(id);
    result.left.push({
      kind: object.kind,
      key: object.key.slice(object.kind.length + 1),
      liveId: id,
      label: object.label,
      fate: 'keep',
      reason,
    });
    if (object.kind !== 'user') return;
    // A user goes with its devices and rules.
    for (const device of live.devices) if (device.user_id === id) removed.add(device.id);
    for (const rule of live.rules) {
      if (rule.user_id !== id) continue;
      removed.add(rule.id);
      ids.add(rule.id);
    }
  };

  for (const entry of desired.forget ?? []) {
    const object = objects.get(entry.key);
    if (!object) {
      result.warnings.push({ code: 'forget_unmatched', key: entry.key, ...at(entry) });
      continue;
    }
    leave(object, { code: 'forgotten' }, policyIds.forgotten);
    result.warnings.push({ code: 'forgotten', label: object.label });
  }

  const declared = declaredObjects(desired);
  const copies = new Map<DesiredUser | DesiredDevice, DesiredUser | DesiredDevice>();
  const copyOf = <T extends DesiredUser | DesiredDevice>(original: T): T => {
    let copy = copies.get(original) as T | undefined;
    if (!copy) {
      copy = ('fields' in original ? { ...original, fields: { ...original.fields } } : { ...original }) as T;
      copies.set(original, copy);
    }
    return copy;
  };
  for (const entry of desired.acknowledged ?? []) {
    const object = objects.get(entry.key);
    const what = entry.field === '*' ? entry.key : `${entry.key} ${entry.field}`;
    if (!object || removed.has(object.object.id)) {
      result.warnings.push({ code: 'acknowledged_unmatched', what, ...at(entry) });
      continue;
    }
    const name = entry.field === '*' ? object.label : `${object.label}: ${entry.field}`;
    if (now.getTime() >= entry.untilInstant.getTime()) {
      result.warnings.push({ code: 'acknowledgement_expired', name, until: entry.until, reason: entry.reason });
      continue;
    }
    const still =
      entry.field === '*'
        ? liveFingerprint(object.object) === entry.fingerprint
        : sameValue(entry.field, entry.value, liveValue(object, entry.field));
    if (!still) {
      result.warnings.push({ code: 'acknowledged_changed', name, until: entry.until, reason: entry.reason });
      continue;
    }
    const declaration = declared.get(entry.key);
    if (declaration === true) {
      result.warnings.push({ code: 'acknowledged_declared', what, ...at(entry) });
      continue;
    }
    if (!declaration && object.kind !== 'rule' && entry.field !== '*') {
      result.warnings.push({ code: 'acknowledged_field_undeclared', what, key: entry.key, ...at(entry) });
      continue;
    }
    if (!declaration)
      leave(object, { code: 'acknowledged', until: entry.until, reason: entry.reason }, policyIds.acknowledged);
    else if (object.kind === 'user') copyOf(declaration as DesiredUser).role = (object.object as ApiUser).role;
    else if (object.kind === 'device') {
      const device = copyOf(declaration as DesiredDevice);
      const fields = entry.field === '*' ? WHOLE_DEVICE : [entry.field];
      for (const field of fields) takeLiveField(device, object.object as ApiDevice, field);
    }
    result.inForce.push(entry);
    const whole = entry.field === '*';
    result.kept.push({
      reason: 'acknowledged',
      id: entry.key,
      text: {
        code: 'acknowledged',
        name,
        whole,
        ...(whole ? {} : { value: liveValue(object, entry.field) }),
        until: entry.until,
        reason: entry.reason,
      },
    });
  }

  if (copies.size > 0) {
    const users = desired.users.map((user) => {
      const copy = (copies.get(user) as DesiredUser | undefined) ?? user;
      const devices = user.devices.map((d) => (copies.get(d) as DesiredDevice | undefined) ?? d);
      return devices.some((d, i) => d !== user.devices[i]) ? { ...copy, devices } : copy;
    });
    result.desired = { ...desired, users };
  }
  if (removed.size > 0) {
    result.live = {
      ...live,
      users: live.users.filter((u) => !removed.has(u.id)),
      devices: live.devices.filter((d) => !removed.has(d.id)),
      rules: live.rules.filter((r) => !removed.has(r.id)),
    };
  }
  return result;
}

/** The device fields a `*` acknowledgement of a declared device takes from the live device. */
const WHOLE_DEVICE = [
  'description',
  'public_key',
  'ipv4',
  'ipv6',
  'allowed_ips',
  'dns',
  'endpoint',
  'mtu',
  'persistent_keepalive',
];

/** The declaration holds the live value of `field` (with its use_default flag, for a defaultable field). */
function takeLiveField(device: DesiredDevice, live: ApiDevice, field: string): void {
  const fields = device.fields as Record<string, unknown>;
  const source = live as unknown as Record<string, unknown>;
  const value = fieldOfFlag(field) ?? field;
  if (isDefaultableField(value)) {
    const flag = useDefaultFlag(value);
    fields[flag] = source[flag];
    if (source[flag] === true) delete fields[value];
    else fields[value] = source[value];
    return;
  }
  fields[field] = source[field];
}

/** The declarations by key: users and devices (rules need none: declared means identical). */
function declaredObjects(desired: DesiredState): Map<string, DesiredUser | DesiredDevice | true> {
  const map = new Map<string, DesiredUser | DesiredDevice | true>();
  for (const user of desired.users) {
    const owner = userKey(user.email);
    map.set(`user:${owner}`, user);
    for (const device of user.devices) map.set(`device:${deviceKeyOfOwnerKey(owner, device.name)}`, device);
    for (const rule of user.rules) map.set(`rule:${ruleKeyOfOwnerKey(owner, rule)}`, true);
  }
  for (const rule of desired.rules) map.set(`rule:${ruleKeyOfOwnerKey(null, rule)}`, true);
  return map;
}

/** The plan with the lifecycle's warnings and its acknowledged differences kept (never drift). */
export function withLifecycle(plan: Plan, life: Lifecycle): Plan {
  if (life.kept.length === 0 && life.warnings.length === 0) return plan;
  const outcome = planOutcome(plan);
  return {
    ...plan,
    warnings: [...plan.warnings, ...life.warnings],
    outcome: outcomeOf(plan.changes, { ...outcome, kept: [...outcome.kept, ...life.kept] }),
  };
}

/** Whether a plan shows a difference for an object's field (or for the object, `*`): a change, an undeclared object, a live rule deciding packets. */
export function showsDifference(plan: Plan, key: string, field: string): boolean {
  const change = plan.changes.find((c) => c.id === key);
  if (change && (field === '*' || change.fields.some((f) => f.field === field || f.field === `use_default_${field}`)))
    return true;
  if (field !== '*') return false;
  if (plan.undeclared?.some((item) => `${item.kind}:${item.key}` === key)) return true;
  return plan.deciding?.some((item) => item.id === key && item.status === 'counts') ?? false;
}

/**
 * The acknowledgements in force that keep nothing: `plan` is the plan made without any
 * acknowledgement (forget: still applied) and judged; an entry it shows no difference for matches
 * nothing, and says so.
 */
export function unusedAcknowledgements(life: Lifecycle, plan: Plan): PlanWarning[] {
  return life.inForce
    .filter((entry) => !showsDifference(plan, entry.key, entry.field))
    .map((entry) => ({
      code: 'acknowledged_unused',
      what: entry.field === '*' ? entry.key : `${entry.key} ${entry.field}`,
      ...at(entry),
    }));
}
