/**
 * The domain checks of a DesiredState, shared by every front end (YAML files, CDKTF stacks):
 * every value against the model's field rules (the server's own), and what only the whole state
 * shows: uniqueness, overlapping rules, the per-user device limit, the `manage` scope, and
 * `absent` and `renamed_from` entries that contradict the rest.
 *
 * Each problem is reported at the value at fault when the front end recorded where it stands
 * (SourceLocation.fields), else at its object, with the path people use to name it.
 */
import { checkConfigurationInput } from '../model/configuration.js';
import {
  allowedIpKey,
  checkDeviceInput,
  checkDeviceName,
  DEFAULT_MAX_DEVICES_PER_USER,
  dnsEntryKey,
} from '../model/device.js';
import { isDefaultableField, useDefaultFlag } from '../model/device-fields.js';
import type { FieldErrors } from '../model/errors.js';
import { emailGlobMatcher, emailGlobProblem } from '../model/email-glob.js';
import { isText } from '../model/fields.js';
import { deviceKey, deviceKeyOfOwnerKey, ruleKeyOfOwnerKey, userKey } from '../model/keys.js';
import { Messages } from '../model/messages.js';
import { cidrContains, parseCidrOrAddress, parseIpAddress, type ParsedCidr } from '../model/net.js';
import { checkRuleInput, checkRulePorts, parseRule, ruleText, type ParsedRule } from '../model/rule.js';
import { HIGHEST_RULE_PORT, parsePortRange, reachesPortLimit } from '../model/ports.js';
import type { DesiredDevice, DesiredRule, DesiredState, DesiredUser, SourceLocation } from '../model/state.js';
import { checkEmail, checkUserInput, emailCharacterProblem } from '../model/user.js';
import { findOverlaps, MAX_OVERLAP_REPORTS } from './overlaps.js';
import { checkAccessTests } from '../access/tests.js';
import type { Diagnostic } from './types.js';

/** `users[0]` + `mtu` -> `users[0].mtu`; `settings` + `manage.rules[1]` -> `settings.manage.rules[1]`. */
export function joinPath(base: string, relative: string): string {
  if (base === '') return relative;
  if (relative === '') return base;
  return relative.startsWith('[') ? `${base}${relative}` : `${base}.${relative}`;
}

/** Something the state declares, with where it stands and the path to name it by when the front end gave none. */
interface Declared {
  source?: SourceLocation;
  fallbackPath: string;
}

function pathOf(item: Declared): string {
  return item.source?.path ?? item.fallbackPath;
}

/** `file:line:column`, or the path when the front end recorded no file. */
function whereIs(item: Declared, field?: string): string {
  const at = (field ? item.source?.fields?.[field] : undefined) ?? item.source;
  return at ? `${at.file}:${at.line}:${at.column}` : field ? joinPath(pathOf(item), field) : pathOf(item);
}

/**
 * A diagnostic about `field` of `item` (or the item itself), placed at the field's value, else at
 * the first of `alternates` that was written (a missing endpoint is best shown at the default
 * flag set false that requires it), else at the item.
 */
function report(item: Declared, field: string | undefined, message: string, alternates: string[] = []): Diagnostic {
  const fields = item.source?.fields;
  const at =
    field === undefined
      ? item.source
      : (fields?.[field] ?? alternates.map((a) => fields?.[a]).find((l) => l !== undefined) ?? item.source);
  return {
    message,
    ...(at ? { file: at.file, line: at.line, column: at.column } : {}),
    path: field === undefined ? pathOf(item) : joinPath(pathOf(item), field),
  };
}

/** What a field looks like, added to the model's terse `is invalid` / `bad format` so that people know what to write. */
const EXPECTED_SHAPES: Record<string, string> = {
  email: 'expected local@domain with no white space, control or invisible characters, at most 255 characters',
  allowed_ips: 'expected an IP address or CIDR block such as 10.0.0.0/8',
  dns: 'expected an IP address or a host name, without a port',
  endpoint: 'expected host, host:port, IPv4:port, IPv6 or [IPv6]:port, with a port from 1 to 65535',
  ipv4: 'expected an IPv4 address such as 10.3.2.20',
  ipv6: 'expected an IPv6 address such as fd00::3:2:20',
  destination: 'expected an IP address or CIDR block such as 10.1.0.0/16',
  port_range: 'expected "443", "80-443" or "80 - 443"',
};

/** The note for a value refused for holding text no server can store (a NUL, a lone surrogate). */
const MALFORMED_NOTE = 'it holds a NUL or a lone UTF-16 surrogate';

function holdsMalformedText(value: unknown): boolean {
  if (typeof value === 'string') return !isText(value);
  return Array.isArray(value) && value.some((entry) => typeof entry === 'string' && !isText(entry));
}

/** `value`, when given, is what the message is about: text no server can store is named as such. */
function explain(field: string, message: string, value?: unknown): string {
  if (message === Messages.invalid && holdsMalformedText(value)) return `${message}: ${MALFORMED_NOTE}`;
  const shape = EXPECTED_SHAPES[field.replace(/\[\d+\]$/, '')];
  return shape && (message === Messages.invalid || message === Messages.badFormat) ? `${message} (${shape})` : message;
}

/** explain for an email, saying which character is refused when it is a character (the model says only `is invalid`). */
function explainEmail(value: unknown, message: string): string {
  const problem = message === Messages.invalid && typeof value === 'string' ? emailCharacterProblem(value) : null;
  return problem === null ? explain('email', message) : `${message}: ${problem}`;
}

function reportFieldErrors(
  item: Declared,
  errors: FieldErrors,
  into: Diagnostic[],
  ignore: string[] = [],
  values: Record<string, unknown> = {},
): void {
  for (const [field, messages] of Object.entries(errors)) {
    if (ignore.includes(field)) continue;
    for (const message of messages) {
      into.push(
        field === 'base'
          ? report(item, undefined, message)
          : report(
              item,
              field,
              explain(field, message, values[field]),
              isDefaultableField(field) ? [useDefaultFlag(field)] : [],
            ),
      );
    }
  }
}

interface UserEntry extends Declared {
  user: DesiredUser;
  /** Lower-cased, trimmed email when it is valid, else null. */
  key: string | null;
  /** Index of the user's first device in the list of all devices (a user's devices are consecutive there). */
  firstDevice: number;
}

interface DeviceEntry extends Declared {
  device: DesiredDevice;
  owner: UserEntry;
}

interface RuleEntry extends Declared {
  rule: DesiredRule;
  owner: UserEntry | null;
  parsed: ParsedRule | null;
  /** Position in declaration order, to report a pair once, at the later of the two. */
  order: number;
}

function checkUser(entry: UserEntry, into: Diagnostic[]): void {
  const { user } = entry;
  // The password is not read here: only where it is sent (W3.6; desired/secrets.ts lazySecret checks it then).
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

function checkDevice(entry: DeviceEntry, into: Diagnostic[]): void {
  const { device } = entry;
  const name = checkDeviceName(device.name);
  if (typeof name !== 'string') into.push(report(entry, 'name', explain('name', name.message, device.name)));
  // The owner's id is unknown offline; any non-blank value satisfies the create shape. The preshared
  // key is not read here: where it is sent or compared (W3.6; lazySecret checks its shape then).
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

function checkRule(entry: RuleEntry, into: Diagnostic[]): void {
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

/** The first declaration of each key. */
function firstByKey<T>(items: T[], keyOf: (item: T) => string | null): Map<string, T> {
  const first = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    if (key !== null && !first.has(key)) first.set(key, item);
  }
  return first;
}

/** Reports each later declaration whose key an earlier one already holds. */
function reportDuplicates<T extends Declared>(
  items: T[],
  keyOf: (item: T) => string | null,
  describe: (item: T, first: T) => Diagnostic,
  into: Diagnostic[],
): void {
  const first = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    if (key === null) continue;
    const earlier = first.get(key);
    if (earlier) into.push(describe(item, earlier));
    else first.set(key, item);
  }
}

/**
 * Overlapping rules under the server's rule: same owner and action, intersecting destinations,
 * and ports that collide (desired/overlaps.ts: each rule reported once, at the later of the pair,
 * at most MAX_OVERLAP_REPORTS named, then how many more).
 */
function checkRuleOverlaps(rules: RuleEntry[], into: Diagnostic[]): void {
  const parsed = rules.filter((entry): entry is RuleEntry & { parsed: ParsedRule } => entry.parsed !== null);
  const { found, more, firstUnnamed } = findOverlaps(parsed, (a, b) => ruleKeyOf(a) === ruleKeyOf(b));
  found.sort((a, b) => a.later.order - b.later.order);
  for (const { later, earlier } of found)
    into.push(
      report(
        later,
        'destination',
        `${Messages.overlaps}: ${ruleText(earlier.rule)} at ${whereIs(earlier)} (rules with the same action and the same user, or both global, must not overlap)`,
      ),
    );
  if (more > 0 && firstUnnamed)
    into.push(
      report(
        firstUnnamed,
        'destination',
        `${Messages.overlaps}, and so do ${(more - 1).toLocaleString('en')} more rules after the first ${MAX_OVERLAP_REPORTS.toLocaleString('en')} named (validate names at most ${MAX_OVERLAP_REPORTS.toLocaleString('en')} overlapping rules)`,
      ),
    );
}

function ruleKeyOf(entry: RuleEntry): string {
  // owner.key is userKey of the email already.
  return ruleKeyOfOwnerKey(entry.owner?.key ?? null, entry.rule);
}

/** `configuration:`: each value given, with the server's own rules for `/v0/configuration`. */
function checkConfiguration(state: DesiredState, into: Diagnostic[]): void {
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

function checkSettings(state: DesiredState, into: Diagnostic[]): void {
  const settings: Declared = { source: state.settings.source, fallbackPath: 'settings' };
  (state.settings.manage.users ?? []).forEach((glob, i) => {
    if (typeof glob !== 'string' || glob.trim() === '')
      into.push(report(settings, `manage.users[${i}]`, 'must be an email glob such as *@example.com'));
    else {
      const problem = emailGlobProblem(glob);
      if (problem) into.push(report(settings, `manage.users[${i}]`, `${problem} (an email glob)`));
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
      if (problem) into.push(report(settings, `protect.users[${i}]`, `${problem} (an email or email glob)`));
    }
  });
}

/**
 * Matches emails against the `manage.users` globs with the planner's matcher (model/email-glob.ts);
 * null when every user is managed. Globs checkSettings refused are left out (they are reported).
 */
function userScope(globs: string[] | null): ((email: string) => boolean) | null {
  if (globs === null) return null;
  return emailGlobMatcher(globs.filter((g) => typeof g === 'string' && emailGlobProblem(g) === null));
}

function describeList(list: string[]): string {
  return list.length === 0 ? 'an empty list' : list.join(', ');
}

/** The domain checks of a whole DesiredState. Diagnostics come in declaration order. */
export function checkDesiredState(state: DesiredState): Diagnostic[] {
  const into: Diagnostic[] = [];
  checkSettings(state, into);
  checkConfiguration(state, into);
  for (const item of checkAccessTests(state)) into.push(item);

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
  const addRule = (rule: DesiredRule, owner: UserEntry | null, fallbackPath: string): void => {
    const parsed = parseRule({
      action: rule.action,
      destination: rule.destination,
      port_type: rule.port_type,
      port_range: rule.port_range,
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
  checkRuleOverlaps(rules, into);

  checkScope(state, users, rules, into);
  checkAbsent(state, users, devices, into);
  checkRenames(state, users, devices, into);
  return into;
}

function checkScope(state: DesiredState, users: UserEntry[], rules: RuleEntry[], into: Diagnostic[]): void {
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

function checkAbsent(state: DesiredState, users: UserEntry[], devices: DeviceEntry[], into: Diagnostic[]): void {
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
function checkRenames(state: DesiredState, users: UserEntry[], devices: DeviceEntry[], into: Diagnostic[]): void {
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
