/**
 * The field checks: each declared object on its own against the model's field rules (the
 * server's own), and the values of `configuration:` and `settings:`.
 */
import { checkConfigurationInput } from '../../model/configuration.js';
import { allowedIpKey, checkDeviceInput, checkDeviceName, dnsEntryKey } from '../../model/device.js';
import { emailGlobProblem } from '../../model/email-glob.js';
import { emailGlobProblemText } from '../../views/model-email.js';
import { Messages } from '../../model/messages.js';
import { parseCidrOrAddress } from '../../model/net.js';
import { HIGHEST_RULE_PORT, parsePortRange, reachesPortLimit } from '../../model/ports.js';
import { checkRuleInput, checkRulePorts, type ParsedRule } from '../../model/rule.js';
import type { DesiredDevice, DesiredRule, DesiredState, DesiredUser } from '../../model/state.js';
import { checkEmail, checkUserInput } from '../../model/user.js';
import type { Diagnostic } from '../types.js';
import { explain, explainEmail, report, reportFieldErrors, type Declared } from './report.js';

export interface UserEntry extends Declared {
  user: DesiredUser;
  /** Lower-cased, trimmed email when it is valid, else null. */
  key: string | null;
  /** Index of the user's first device in the list of all devices (a user's devices are consecutive there). */
  firstDevice: number;
}

export interface DeviceEntry extends Declared {
  device: DesiredDevice;
  owner: UserEntry;
}

export interface RuleEntry extends Declared {
  rule: DesiredRule;
  owner: UserEntry | null;
  parsed: ParsedRule | null;
  /** Position in declaration order, to report a pair once, at the later of the two. */
  order: number;
}

export function checkUser(entry: UserEntry, into: Diagnostic[]): void {
  const { user } = entry;
  // The password is not read here: only where it is sent (desired/secrets.ts lazySecret checks it then).
  const result = checkUserInput(
    { email: user.email, ...(user.role !== undefined ? { role: user.role } : {}) },
    'create',
  );
  if (result.ok) return;
  for (const message of result.errors.email ?? []) into.push(report(entry, 'email', explainEmail(user.email, message)));
  reportFieldErrors(entry, result.errors, into, ['password_confirmation', 'email']);
}

/** How the model reads the entries of the list-valued device fields, to point at the entries a list message is about. */
const LIST_ENTRY_KEYS = { allowed_ips: allowedIpKey, dns: dnsEntryKey } as const;

/**
 * The model judges a list as a whole (`allowed_ips: is invalid`); people fix entries. The entries
 * its message is about: those the model cannot read, or those repeating an earlier entry.
 */
function listEntriesAt(list: unknown, keyOf: (text: string) => string | null, message: string): number[] {
  if (!Array.isArray(list)) return [];
  const keys = list.map((entry) => (typeof entry === 'string' ? keyOf(entry.trim()) : null));
  if (message === Messages.invalid) return keys.flatMap((key, i) => (key === null ? [i] : []));
  if (message === Messages.duplicates)
    return keys.flatMap((key, i) => (key !== null && keys.indexOf(key) < i ? [i] : []));
  return [];
}

export function checkDevice(entry: DeviceEntry, into: Diagnostic[]): void {
  const { device } = entry;
  const name = checkDeviceName(device.name);
  if (typeof name !== 'string') into.push(report(entry, 'name', explain('name', name.message, device.name)));
  // The owner's id is unknown offline; any non-blank value satisfies the create shape. The preshared
  // key is not read here: where it is sent or compared (lazySecret checks its shape then).
  const result = checkDeviceInput({ ...device.fields, user_id: 'declared-owner' }, 'create');
  if (result.ok) return;
  const { errors } = result;
  for (const field of Object.keys(LIST_ENTRY_KEYS) as (keyof typeof LIST_ENTRY_KEYS)[]) {
    errors[field] = (errors[field] ?? []).filter((message) => {
      const entries = listEntriesAt(device.fields[field], LIST_ENTRY_KEYS[field], message);
      const list = device.fields[field];
      for (const i of entries)
        into.push(
          report(entry, `${field}[${i}]`, explain(field, message, Array.isArray(list) ? list[i] : undefined), [field]),
        );
      return entries.length === 0;
    });
    if (errors[field].length === 0) delete errors[field];
  }
  reportFieldErrors(entry, errors, into, ['user_id', 'name'], device.fields);
}

/** The rule fields a file writes as free text (the others are one of a few words): each is refused with white space around it. */
const RULE_TEXT_FIELDS = ['destination', 'port_range'] as const;

export function checkRule(entry: RuleEntry, into: Diagnostic[]): void {
  const { rule } = entry;
  // A value with white space around it would otherwise reach messages and keys as it was written
  // (`"10.0.0.0/8\n"`); the server trims it, a file states the value exactly.
  const padded = RULE_TEXT_FIELDS.filter((field) => {
    const value: unknown = rule[field];
    return typeof value === 'string' && value.trim() !== '' && value.trim() !== value;
  });
  for (const field of padded)
    into.push(report(entry, field, 'has white space before or after its value: write the value alone'));
  if (padded.length > 0) return;
  const result = checkRuleInput(
    { action: rule.action, destination: rule.destination, port_type: rule.port_type, port_range: rule.port_range },
    'create',
  );
  if (!result.ok) {
    const limit = portLimitMessage(rule.port_range);
    if (limit && result.errors.port_range) result.errors.port_range = [limit];
    reportFieldErrors(entry, result.errors, into, [], { ...rule });
  }
  reportFieldErrors(
    entry,
    checkRulePorts({ port_type: rule.port_type ?? null, port_range: rule.port_range ?? null }),
    into,
  );
}

/**
 * For a range the model refuses only because it reaches 65535: the server's message (upstream's
 * words, `port is not within valid range`), then why, and what to write instead.
 */
function portLimitMessage(text: string | null): string | null {
  const parsed = text === null ? null : parsePortRange(text);
  if (!parsed?.ok || !reachesPortLimit(parsed.range)) return null;
  const { low } = parsed.range;
  const written = text!.trim();
  const limit = `${Messages.portRange}: ${written} reaches 65535, which Firezone 0.7.36 refuses (its ranges end at ${HIGHEST_RULE_PORT})`;
  return low <= HIGHEST_RULE_PORT
    ? `${limit}; write ${low}-${HIGHEST_RULE_PORT}, or a portless rule`
    : `${limit}; a rule cannot name port 65535 alone: write a portless rule, which covers every port`;
}

/** `configuration:`: each value given, with the server's own rules for `/v0/configuration`. */
export function checkConfiguration(state: DesiredState, into: Diagnostic[]): void {
  if (!state.configuration) return;
  const item: Declared = { source: state.configuration.source, fallbackPath: 'configuration' };
  const checked = checkConfigurationInput(state.configuration.values);
  if (checked.ok) return;
  for (const [field, messages] of Object.entries(checked.errors)) {
    const value = (state.configuration.values as Record<string, unknown>)[field];
    for (const message of messages) {
      into.push(report(item, field, explain(field.replace(/^default_client_/, ''), message, value)));
    }
  }
}

export function checkSettings(state: DesiredState, into: Diagnostic[]): void {
  const settings: Declared = { source: state.settings.source, fallbackPath: 'settings' };
  (state.settings.manage.users ?? []).forEach((glob, i) => {
    if (typeof glob !== 'string' || glob.trim() === '')
      into.push(report(settings, `manage.users[${i}]`, 'must be an email glob such as *@example.com'));
    else {
      const problem = emailGlobProblem(glob);
      if (problem)
        into.push(report(settings, `manage.users[${i}]`, `${emailGlobProblemText(problem)} (an email glob)`));
    }
  });
  (state.settings.manage.rules ?? []).forEach((block, i) => {
    if (parseCidrOrAddress(block) === null)
      into.push(report(settings, `manage.rules[${i}]`, 'must be an IP address or CIDR block such as 10.0.0.0/8'));
  });
  state.settings.protect.users.forEach((email, i) => {
    const checked = checkEmail(email);
    if (!checked.ok) into.push(report(settings, `protect.users[${i}]`, explainEmail(email, checked.message)));
    else {
      const problem = emailGlobProblem(email);
      if (problem)
        into.push(report(settings, `protect.users[${i}]`, `${emailGlobProblemText(problem)} (an email or email glob)`));
    }
  });
}
