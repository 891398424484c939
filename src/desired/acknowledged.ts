/**
 * Reading `acknowledged:` and `forget:` (src/model/lifecycle.ts) from a schema-checked document,
 * and the one check across files they need: a forgotten object that a file still declares. Keys
 * are those `show` and `--target` take (`user:EMAIL`, `device:EMAIL/NAME`, `rule:KEY`), kept in
 * the plan's normal form.
 */
import { deviceKeyOfOwnerKey, ruleKeyOfOwnerKey, userKey } from '../model/keys.js';
import { parseInstant } from '../model/instant.js';
import { instantProblemText } from '../views/model-instant.js';
import { isWritableDeviceField } from '../model/device-fields.js';
import type { DesiredAcknowledgement, DesiredForget } from '../model/lifecycle.js';
import type { DesiredState, SourceLocation } from '../model/state.js';
import { normalizeTarget, TargetError } from '../plan/target.js';
import { targetProblemText } from '../views/model-target.js';
import type { Diagnostic } from './types.js';

type Mapping = Record<string, unknown>;

/** Where `root[list][index]` stands. */
export type Locate = (list: string, index: number) => SourceLocation;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function diagnostic(at: SourceLocation, message: string): Diagnostic {
  return { file: at.file, line: at.line, column: at.column, ...(at.path ? { path: at.path } : {}), message };
}

/** A key in the plan's notation, or why it is not one. `configuration` is not an object either list may name. */
export function objectKey(text: string): { key: string } | { problem: string } {
  try {
    const key = normalizeTarget(text);
    if (key === 'configuration')
      return { problem: 'expected user:EMAIL, device:EMAIL/NAME or rule:KEY, not configuration' };
    return { key };
  } catch (error) {
    if (error instanceof TargetError) return { problem: targetProblemText(error.problem, false) };
    throw error;
  }
}

/** The fields an entry may name for an object of this key: `*`, a user's `role`, a device's writable fields. */
export function acknowledgeableField(key: string, field: string): boolean {
  if (field === '*') return true;
  if (key.startsWith('user:')) return field === 'role';
  if (key.startsWith('device:')) return isWritableDeviceField(field);
  return false;
}

export interface LifecycleDeclarations {
  acknowledged: DesiredAcknowledgement[];
  forget: DesiredForget[];
}

/** The document's `acknowledged:` and `forget:` entries; problems go to `into`. What the schema refused (its error reported) is skipped. */
export function readLifecycle(
  root: Mapping,
  refused: (path: string) => boolean,
  locate: Locate,
  into: Diagnostic[],
): LifecycleDeclarations {
  const result: LifecycleDeclarations = { acknowledged: [], forget: [] };
  const acknowledged = root.acknowledged;
  if (Array.isArray(acknowledged) && !refused('acknowledged')) {
    acknowledged.forEach((entry, i) => {
      if (!isMapping(entry) || refused(`acknowledged[${i}]`)) return;
      const read = acknowledgement(entry, locate('acknowledged', i));
      if ('problem' in read) into.push(diagnostic(locate('acknowledged', i), read.problem));
      else result.acknowledged.push(read);
    });
  }
  const forget = root.forget;
  if (Array.isArray(forget) && !refused('forget')) {
    forget.forEach((entry, i) => {
      if (typeof entry !== 'string') return;
      const at = locate('forget', i);
      const key = objectKey(entry);
      if ('problem' in key) into.push(diagnostic(at, `forget: ${key.problem}`));
      else result.forget.push({ key: key.key, source: at });
    });
  }
  return result;
}

function acknowledgement(entry: Mapping, source: SourceLocation): DesiredAcknowledgement | { problem: string } {
  const { field, reason, until } = entry;
  if (typeof entry.key !== 'string' || typeof field !== 'string' || typeof reason !== 'string')
    return { problem: 'acknowledged: key, field and reason are strings' };
  const key = objectKey(entry.key);
  if ('problem' in key) return { problem: `acknowledged: key: ${key.problem}` };
  if (!acknowledgeableField(key.key, field)) {
    const which = key.key.startsWith('rule:')
      ? 'a rule is acknowledged as a whole: field "*"'
      : key.key.startsWith('user:')
        ? 'a user\'s field is role, or "*"'
        : 'a device\'s field is one of its writable fields (endpoint, mtu, allowed_ips, ...), or "*"';
    return { problem: `acknowledged: field ${JSON.stringify(field)} cannot be acknowledged for ${key.key}: ${which}` };
  }
  if (reason.trim() === '') return { problem: 'acknowledged: reason must say why the difference is kept' };
  const instant = parseInstant(until);
  if (!instant.ok) return { problem: `acknowledged: until: ${instantProblemText(instant.problem)}` };
  const read: DesiredAcknowledgement = {
    key: key.key,
    field,
    reason,
    until: until as string,
    untilInstant: instant.instant,
    source,
  };
  if (field === '*') {
    if (typeof entry.fingerprint !== 'string' || entry.value !== undefined)
      return { problem: 'acknowledged: an entry for "*" gives the live object\'s fingerprint (and no value)' };
    read.fingerprint = entry.fingerprint;
  } else {
    if (!('value' in entry) || entry.fingerprint !== undefined)
      return {
        problem: `acknowledged: an entry for field ${field} gives its live value as value (and no fingerprint)`,
      };
    read.value = entry.value;
  }
  return read;
}

/** The keys a desired state declares (users, their devices and rules, global rules), with where. */
function declaredKeys(state: DesiredState): Map<string, SourceLocation | undefined> {
  const keys = new Map<string, SourceLocation | undefined>();
  for (const user of state.users) {
    const owner = userKey(user.email);
    keys.set(`user:${owner}`, user.source);
    for (const device of user.devices) keys.set(`device:${deviceKeyOfOwnerKey(owner, device.name)}`, device.source);
    for (const rule of user.rules) keys.set(`rule:${ruleKeyOfOwnerKey(owner, rule)}`, rule.source);
  }
  for (const rule of state.rules) keys.set(`rule:${ruleKeyOfOwnerKey(null, rule)}`, rule.source);
  return keys;
}

/** A forgotten object that a file still declares: an error at the declaration, naming the `forget:` entry. */
export function checkForgotten(state: DesiredState, into: Diagnostic[]): void {
  if (!state.forget?.length) return;
  const declared = declaredKeys(state);
  for (const entry of state.forget) {
    if (!declared.has(entry.key)) continue;
    const at = declared.get(entry.key);
    const where = entry.source ? ` (forget: at ${entry.source.file}:${entry.source.line})` : '';
    const message = `${entry.key} is forgotten${where} but still declared here: remove the declaration or the forget: entry`;
    into.push(at ? diagnostic(at, message) : { message });
  }
}
