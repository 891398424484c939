/**
 * Adopt for a CDKTF stack: the synthesized `cdk.tf.json` is the output of a program, not a file
 * to edit, so adopt prints the construct calls (`new User(...)`, `new Device(...)`, `new Rule(...)`,
 * the classes of `netform/cdktf`) that declare the live values, for a person to put into the program.
 */
import type { LiveState } from '../../model/state.js';
import type { ApiDevice, ApiRule, ApiUser } from '../../model/types.js';
import { indexLiveState } from '../../plan/live-index.js';
import type { Plan } from '../../plan/types.js';
import { deviceToYaml, ruleToYaml, type Mapping } from '../export/mapping.js';

/** `use_default_mtu` -> `useDefaultMtu`. */
function camel(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** A construct id from an object's key: letters, digits and `_` only. */
function constructId(text: string): string {
  return text.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
}

function properties(values: Record<string, unknown>): string {
  const lines = Object.entries(values).map(([key, value]) =>
    key.endsWith('.id') ? `  ${key.slice(0, -3)}: ${String(value)}.id,` : `  ${camel(key)}: ${JSON.stringify(value)},`,
  );
  return `{\n${lines.join('\n')}\n}`;
}

function userCall(user: ApiUser): string {
  const values: Record<string, unknown> = { email: user.email };
  if (user.role !== 'unprivileged') values.role = user.role;
  return `const ${constructId(user.email)} = new User(this, ${JSON.stringify(constructId(user.email))}, ${properties(values)});`;
}

function deviceCall(device: ApiDevice, owner: string, mapping: Mapping): string {
  const values: Record<string, unknown> = { 'userId.id': constructId(owner), ...deviceToYaml(device, mapping) };
  const id = constructId(`${owner}_${device.name}`);
  return `new Device(this, ${JSON.stringify(id)}, ${properties(values)});`;
}

function ruleCall(rule: ApiRule, owner: string | null): string {
  const values: Record<string, unknown> = { ...ruleToYaml(rule) };
  if (owner !== null) Object.assign(values, { 'userId.id': constructId(owner) });
  const id = constructId(
    `${owner ?? 'global'}_${rule.action}_${rule.destination}_${rule.port_type ?? ''}_${rule.port_range ?? ''}`,
  );
  return `new Rule(this, ${JSON.stringify(id)}, ${properties(values)});`;
}

/**
 * The construct calls declaring the live side of each selected difference: a changed user or
 * device, and every live object no construct declares. One block per object, each preceded by a
 * comment naming it.
 */
export function constructCalls(
  plan: Plan,
  live: LiveState,
  selected: (id: string) => boolean,
  mapping: Mapping,
): string {
  const index = indexLiveState(live);
  const out: string[] = [];
  const add = (id: string, call: string) => out.push(`// ${id}\n${call}\n`);
  for (const change of plan.changes) {
    if (!selected(change.id) || (change.action !== 'update' && change.action !== 'replace')) continue;
    if (change.kind === 'user' && change.liveId) {
      const user = index.usersById.get(change.liveId);
      if (user) add(change.id, userCall(user));
    } else if (change.kind === 'device' && change.liveId) {
      const device = index.devicesById.get(change.liveId);
      if (device) add(change.id, deviceCall(device, index.deviceOwnerOf(device), mapping));
    }
  }
  for (const item of plan.undeclared ?? []) {
    const id = `${item.kind}:${item.key}`;
    if (!selected(id)) continue;
    if (item.kind === 'user') {
      const user = index.usersById.get(item.liveId);
      if (!user) continue;
      const calls = [userCall(user)];
      for (const device of index.devicesByUserId.get(user.id) ?? [])
        calls.push(deviceCall(device, user.email, mapping));
      for (const rule of index.rulesByUserId.get(user.id) ?? []) calls.push(ruleCall(rule, user.email));
      add(id, calls.join('\n'));
    } else if (item.kind === 'device') {
      const device = index.devicesById.get(item.liveId);
      if (device) add(id, deviceCall(device, index.deviceOwnerOf(device), mapping));
    } else if (item.kind === 'rule') {
      const rule = index.rulesById.get(item.liveId);
      if (rule) add(id, ruleCall(rule, index.ruleOwnerOf(rule)));
    }
  }
  return out.join('\n');
}
