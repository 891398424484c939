/**
 * The domain checks of a DesiredState, shared by every front end (YAML files, CDKTF stacks):
 * every value against the model's field rules (the server's own), and what only the whole state
 * shows: uniqueness, overlapping rules, the per-user device limit, the `manage` scope, and
 * `absent` and `renamed_from` entries that contradict the rest.
 *
 * Each problem is reported at the value at fault when the front end recorded where it stands
 * (SourceLocation.fields), else at its object, with the path people use to name it (report.ts).
 * This file gathers the declarations and runs the checks in order: each object's fields
 * (fields.ts), uniqueness and the device limit (here), overlapping rules (overlaps.ts), the scope
 * and `absent` (scope.ts), and `renamed_from` (renames.ts).
 */
import { DEFAULT_MAX_DEVICES_PER_USER } from '../../model/device.js';
import { deviceKeyOfOwnerKey, userKey } from '../../model/keys.js';
import { Messages } from '../../model/messages.js';
import { parseIpAddress } from '../../model/net.js';
import { parseRule, ruleText, storedForm } from '../../model/rule.js';
import type { DesiredRule, DesiredState } from '../../model/state.js';
import { checkEmail } from '../../model/user.js';
import { checkAccessTests } from '../../access/test-checks.js';
import type { Diagnostic } from '../types.js';
import {
  checkConfiguration,
  checkDevice,
  checkRule,
  checkSettings,
  checkUser,
  type DeviceEntry,
  type RuleEntry,
  type UserEntry,
} from './fields.js';
import { checkRuleOverlaps, ruleKeyOf } from './overlaps.js';
import { report, reportDuplicates, whereIs } from './report.js';
import { checkRenames } from './renames.js';
import { checkAbsent, checkScope } from './scope.js';
import { checkOwners } from './owners.js';
import { checkTunnelNetworks } from './tunnel.js';
import { checkForgotten } from '../acknowledged.js';

/** The domain checks of a whole DesiredState. Diagnostics come in declaration order. */
export function checkDesiredState(state: DesiredState, options: { acrossFiles?: boolean } = {}): Diagnostic[] {
  const into: Diagnostic[] = [];
  checkSettings(state, into);
  checkTunnelNetworks(state, into);
  checkOwners(state, into);
  checkConfiguration(state, into);
  const acrossFiles = options.acrossFiles ?? true;
  if (acrossFiles) for (const item of checkAccessTests(state)) into.push(item);

  const users: UserEntry[] = state.users.map((user, i) => {
    const email = checkEmail(user.email);
    return {
      user,
      source: user.source,
      fallbackPath: `users[${i}]`,
      key: email.ok ? userKey(email.email) : null,
      firstDevice: 0,
    };
  });
  const devices: DeviceEntry[] = [];
  const rules: RuleEntry[] = [];
  // Overlaps are decided on the rule as the server stores it (without ports when port_rules is false).
  const portRules = state.settings.port_rules !== false;
  const addRule = (rule: DesiredRule, owner: UserEntry | null, fallbackPath: string): void => {
    const stored = storedForm({ port_type: rule.port_type, port_range: rule.port_range }, portRules);
    const parsed = parseRule({
      action: rule.action,
      destination: rule.destination,
      ...stored,
      owner: owner ? owner.key : null,
    });
    rules.push({
      rule,
      owner,
      parsed: owner && owner.key === null ? null : parsed,
      source: rule.source,
      fallbackPath,
      order: rules.length,
    });
  };
  for (const owner of users) {
    owner.firstDevice = devices.length;
    owner.user.devices.forEach((device, j) =>
      devices.push({ device, owner, source: device.source, fallbackPath: `${owner.fallbackPath}.devices[${j}]` }),
    );
    owner.user.rules.forEach((rule, j) => addRule(rule, owner, `${owner.fallbackPath}.rules[${j}]`));
  }
  state.rules.forEach((rule, i) => addRule(rule, null, `rules[${i}]`));

  for (const entry of users) checkUser(entry, into);
  for (const entry of devices) checkDevice(entry, into);
  for (const entry of rules) checkRule(entry, into);
  // What follows compares declarations with each other, or with what other files declare.
  if (!acrossFiles) return into;

  reportDuplicates(
    users,
    (u) => u.key,
    (u, first) =>
      report(
        u,
        'email',
        `${Messages.taken}: ${u.key} is also declared at ${whereIs(first, 'email')} (emails are compared case-insensitively)`,
      ),
    into,
  );

  reportDuplicates(
    devices,
    (d) =>
      d.owner.key !== null && typeof d.device.name === 'string' && d.device.name.trim() !== ''
        ? deviceKeyOfOwnerKey(d.owner.key, d.device.name)
        : null,
    (d, first) =>
      report(
        d,
        'name',
        `${Messages.taken}: ${d.owner.key} already has a device named "${d.device.name.trim()}" at ${whereIs(first, 'name')}`,
      ),
    into,
  );

  for (const owner of users) {
    if (owner.user.devices.length <= DEFAULT_MAX_DEVICES_PER_USER) continue;
    const firstOver = devices[owner.firstDevice + DEFAULT_MAX_DEVICES_PER_USER]!;
    into.push(
      report(
        firstOver,
        undefined,
        `${Messages.deviceLimit} (${owner.key ?? owner.user.email} declares ${owner.user.devices.length} devices; the server allows ${DEFAULT_MAX_DEVICES_PER_USER} per user unless its limit was raised)`,
      ),
    );
  }

  reportDuplicates(
    devices,
    (d) => (typeof d.device.fields.public_key === 'string' ? d.device.fields.public_key.trim() : null),
    (d, first) =>
      report(
        d,
        'public_key',
        `${Messages.taken}: the same public key is declared for ${first.owner.key ?? first.owner.user.email}/${first.device.name} at ${whereIs(first, 'public_key')}; each device needs its own key`,
      ),
    into,
  );
  for (const family of ['ipv4', 'ipv6'] as const) {
    reportDuplicates(
      devices,
      (d) => parseIpAddress(d.device.fields[family])?.text ?? null,
      (d, first) =>
        report(
          d,
          family,
          `${Messages.taken}: ${first.owner.key ?? first.owner.user.email}/${first.device.name} pins the same address at ${whereIs(first, family)}`,
        ),
      into,
    );
  }

  reportDuplicates(
    rules,
    (r) => (r.parsed ? ruleKeyOf(r) : null),
    (r, first) =>
      report(
        r,
        'destination',
        `${Messages.overlaps}: the same rule (${ruleText(r.rule)}${r.owner ? ` of ${r.owner.key}` : ''}) is also declared at ${whereIs(first)}`,
      ),
    into,
  );
  checkRuleOverlaps(rules, into, portRules);

  checkScope(state, users, rules, into);
  checkAbsent(state, users, devices, into);
  checkRenames(state, users, devices, into);
  checkForgotten(state, into);
  return into;
}
