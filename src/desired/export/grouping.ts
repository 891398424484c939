/**
 * `netform export`: the live server as desired-state YAML (docs/netform.md section 1.1), pure.
 *
 * The mapping is chosen so that loading the output and planning it against the same server
 * shows no change:
 * - a field at the server's default is left out (role unprivileged; a device field whose
 *   `use_default_<x>` flag is on: neither the flag nor the effective value the server shows);
 * - a field off its default is written; its `use_default_<x>: false` is written only when the
 *   value alone would not imply it (the value is null or an empty list);
 * - secrets are never written: passwords cannot be read, and preshared keys are left out
 *   (unmanaged) with a header comment saying how to manage them by reference;
 * - device tunnel addresses are pinned by default (see ExportOptions.addresses).
 */
import { createHash } from 'node:crypto';
import {
  initialConfigurationExtras,
  MANAGED_CONFIGURATION_FIELDS,
  type ApiConfiguration,
} from '../../model/configuration.js';
import { checkDeviceName } from '../../model/device.js';
import { isText } from '../../model/fields.js';
import { dottedCidr, parseCidrOrAddress } from '../../model/net.js';
import { ruleKey, userKey } from '../../model/keys.js';
import { parsePortRange } from '../../model/ports.js';
import { ruleText } from '../../model/rule.js';
import type { LiveState } from '../../model/state.js';
import { checkEmail, emailCharacterProblem } from '../../model/user.js';
import { USE_DEFAULT_FLAGS } from '../../model/device-fields.js';
import type { ApiDevice, ApiRule, ApiUser } from '../../model/types.js';
import { renderExportDocument } from './yaml.js';

export interface ExportOptions {
  /**
   * Write each device's `ipv4`/`ipv6` (default true). Pinned addresses survive a device being
   * recreated (replace) and a hand change of them shows as drift; left out, they are unmanaged
   * and the server keeps choosing them.
   */
  addresses?: boolean;
  /**
   * Also write what is at its default (`role: unprivileged`, `use_default_<x>: true`), so that it
   * is managed too: a hand promotion to admin or a device taken off a default then shows as
   * drift. Off by default: the files stay short and the defaults stay the server's business.
   */
  explicitDefaults?: boolean;
  /** One file per user plus one for the global rules, instead of one document. */
  split?: boolean;
  /**
   * Write `settings: { prune: true }` (default true): the export is the whole server, so the
   * repository owns it and whatever a later pull request removes is deleted.
   */
  prune?: boolean;
  /** What the `# yaml-language-server: $schema=` comment points at. */
  schemaRef: string;
  /** The server exported from, shown in the header comment (credentials are stripped). */
  server?: string;
}

export interface ExportedFile {
  /** A file name with no folder part, safe on every common file system. */
  name: string;
  content: string;
}

export interface ExportResult {
  files: ExportedFile[];
  /** What the files hold (the objects left out are not counted). */
  counts: { users: number; devices: number; rules: number };
  /**
   * Live objects the files leave out because no desired state can declare them as the server
   * holds them, one line each naming them by id and saying why (never quoting the value).
   */
  leftOut: string[];
}

/** The live state cannot be written as desired state without guessing (two objects, one key; an unknown owner). */
export class ExportError extends Error {
  constructor(readonly problems: string[]) {
    super(`the server's state cannot be exported as it is:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ExportError';
  }
}

export const SINGLE_FILE_NAME = 'netform.yaml';
export const GLOBAL_RULES_FILE_NAME = 'global-rules.yaml';
export const CONFIGURATION_FILE_NAME = 'configuration.yaml';

type Plain = Record<string, unknown>;

interface UserEntry {
  user: ApiUser;
  /** userKey(email), what users are ordered by. */
  key: string;
  devices: ApiDevice[];
  rules: ApiRule[];
}

/** The three lists of the live state, each awaited on its own (ExportLists of exportLiveState). */
export interface LiveLists {
  users: Promise<ApiUser[]>;
  devices: Promise<ApiDevice[]>;
  rules: Promise<ApiRule[]>;
  configuration: Promise<ApiConfiguration | undefined>;
}

export function exportDesiredState(live: LiveState, options: ExportOptions): ExportResult {
  const grouping = new Grouping();
  grouping.addUsers(live.users);
  grouping.addDevices(live.devices);
  grouping.addRules(live.rules);
  return render(grouping, live.configuration, options);
}

/** An object named by `netform show KEY`: its kind and its live id. */
export interface NamedObject {
  kind: 'user' | 'device' | 'rule';
  id: string;
}

/**
 * The YAML fragments of the named objects, in the order named, with no header: each a list item
 * indented as it stands in an exported file, to paste under `users:` (a user, with its devices and
 * rules), a user's `devices:` or `rules:` (six spaces), or the top-level `rules:` (a global rule).
 * The same mapping and writer as export, so a value reads as export writes it.
 */
export function exportFragments(live: LiveState, named: readonly NamedObject[], options: ExportOptions): string {
  const grouping = new Grouping();
  grouping.addUsers(live.users);
  grouping.addDevices(live.devices);
  grouping.addRules(live.rules);
  const { entries, globalRules } = grouping.result();
  const mapping: Mapping = {
    pinAddresses: options.addresses ?? true,
    explicitDefaults: options.explicitDefaults ?? false,
  };
  const out: string[] = [];
  const leftOut: string[] = [];
  for (const { kind, id } of named) {
    const before = out.length;
    if (kind === 'user') {
      const entry = entries.find((e) => e.user.id === id);
      if (entry) out.push(fragment('users', userToYaml(entry, mapping), ''));
    } else if (kind === 'device') {
      const device = entries.flatMap((e) => e.devices).find((d) => d.id === id);
      if (device) out.push(fragment('devices', deviceToYaml(device, mapping), '    '));
    } else {
      const global = globalRules.find((r) => r.id === id);
      const own = entries.flatMap((e) => e.rules).find((r) => r.id === id);
      if (global) out.push(fragment('rules', ruleToYaml(global), ''));
      else if (own) out.push(fragment('rules', ruleToYaml(own), '    '));
    }
    if (out.length === before) leftOut.push(`${kind} ${id}: no desired state can declare it as the server holds it`);
  }
  if (leftOut.length > 0) throw new ExportError(leftOut);
  return out.join('');
}

/** One list item under `key`, as export writes it, its lines indented further by `indent`. */
function fragment(key: string, item: Plain, indent: string): string {
  const text = renderExportDocument('', { [key]: [item] }).slice(key.length + 2);
  return indent === '' ? text : text.replace(/^(?=.)/gm, indent);
}

/**
 * exportDesiredState, on the lists as they arrive: the users are indexed while the devices and
 * rules are still on their way, and each of those is grouped by owner and sorted as soon as it
 * is there (a server sends its lists one after the other). The same result.
 */
export async function exportLiveState(lists: LiveLists, options: ExportOptions): Promise<ExportResult> {
  const grouping = new Grouping();
  const users = lists.users.then((list) => grouping.addUsers(list));
  const devices = Promise.all([users, lists.devices]).then(([, list]) => grouping.addDevices(list));
  const rules = Promise.all([users, lists.rules]).then(([, list]) => grouping.addRules(list));
  const [, , , configuration] = await Promise.all([users, devices, rules, lists.configuration]);
  return render(grouping, configuration, options);
}

function render(grouping: Grouping, liveConfiguration: ApiConfiguration | undefined, options: ExportOptions) {
  const { entries, globalRules, leftOut } = grouping.result();
  const counts = grouping.counts;
  const mapping: Mapping = {
    pinAddresses: options.addresses ?? true,
    explicitDefaults: options.explicitDefaults ?? false,
  };
  const header = headerComment(options, counts, mapping, leftOut);
  const settings = exportedSettings(options);

  const configuration = liveConfiguration ? configurationToYaml(liveConfiguration, mapping) : undefined;
  if (!options.split) {
    const body: Plain = {
      version: 1,
      ...settings,
      ...(configuration ? { configuration } : {}),
      users: entries.map((e) => userToYaml(e, mapping)),
      rules: globalRules.map(ruleToYaml),
    };
    return { files: [{ name: SINGLE_FILE_NAME, content: renderExportDocument(header, body) }], counts, leftOut };
  }

  const files: ExportedFile[] = [];
  const taken = new Set<string>([GLOBAL_RULES_FILE_NAME, CONFIGURATION_FILE_NAME]);
  for (const entry of entries) {
    const name = uniqueName(userFileName(entry.user.email), taken);
    files.push({
      name,
      content: renderExportDocument(header, { version: 1, users: [userToYaml(entry, mapping)] }),
    });
  }
  // The settings go once, with the global rules (settings of several files are merged).
  files.push({
    name: GLOBAL_RULES_FILE_NAME,
    content: renderExportDocument(header, { version: 1, ...settings, rules: globalRules.map(ruleToYaml) }),
  });
  if (configuration) {
    files.push({
      name: CONFIGURATION_FILE_NAME,
      content: renderExportDocument(header, { version: 1, configuration }),
    });
  }
  return { files, counts, leftOut };
}

/** `settings: { prune: true }` unless the export was asked not to own the server. */
function exportedSettings(options: ExportOptions): Plain {
  return options.prune === false ? {} : { settings: { prune: true } };
}

/**
 * The live objects by owner, in the order they are written: users by email, each user's devices
 * by name, rules in reading order (sortRules). Users first, then devices and rules in either
 * order; what cannot be exported without guessing is collected and thrown by result().
 *
 * Rows that no desired state can declare as the server holds them (an email or a device name
 * today's field rules refuse, stored before those rules; two users whose emails are one key, two
 * devices of a user whose names are one) are left out, with what belongs to them, and named by id
 * in `leftOut` rather than refusing the whole server: each line says why, never the value itself.
 */
class Grouping {
  readonly counts = { users: 0, devices: 0, rules: 0 };
  readonly #problems = { users: [] as string[], devices: [] as string[], rules: [] as string[] };
  readonly #byId = new Map<string, UserEntry>();
  /** Users left out, by id: why, and the ids of their devices and rules (left out with them). */
  readonly #leftOutUsers = new Map<string, { reason: string; devices: string[]; rules: string[] }>();
  readonly #leftOutDevices: string[] = [];
  #entries: UserEntry[] = [];
  #globalRules: ApiRule[] = [];

  addUsers(users: ApiUser[]): void {
    const byKey = new Map<string, ApiUser[]>();
    for (const user of users) {
      const key = userKey(user.email);
      const same = byKey.get(key);
      if (same) same.push(user);
      else byKey.set(key, [user]);
    }
    for (const [key, same] of byKey) {
      for (const user of same) {
        const refused = emailRefusal(user.email);
        if (same.length > 1) {
          const others = same.filter((u) => u !== user).map((u) => u.id);
          this.#leaveOutUser(
            user,
            `its email is the same as that of user ${others.join(', ')} (emails compare by lower case)`,
          );
        } else if (refused !== null) {
          this.#leaveOutUser(user, `its email is refused by validate: ${refused}`);
        } else {
          this.#byId.set(user.id, { user, key, devices: [], rules: [] });
        }
      }
    }
    this.counts.users = this.#byId.size;
    this.#entries = [...this.#byId.values()].sort(
      (a, b) => compareText(a.key, b.key) || compareText(a.user.email, b.user.email),
    );
  }

  #leaveOutUser(user: ApiUser, reason: string): void {
    this.#leftOutUsers.set(user.id, { reason, devices: [], rules: [] });
  }

  addDevices(devices: ApiDevice[]): void {
    const problems = this.#problems.devices;
    const devicesByKey = new Map<string, ApiDevice[]>();
    const owners = new Map<ApiDevice, UserEntry>();
    for (const device of devices) {
      const leftOutOwner = this.#leftOutUsers.get(device.user_id);
      if (leftOutOwner) {
        leftOutOwner.devices.push(device.id);
        continue;
      }
      const owner = this.#byId.get(device.user_id);
      if (!owner) {
        problems.push(
          `device ${device.id} (${JSON.stringify(device.name)}) belongs to user ${device.user_id}, which the server did not list`,
        );
        continue;
      }
      const refused = deviceRefusal(device);
      if (refused !== null) {
        this.#leftOutDevices.push(`device ${device.id} of user ${owner.user.id}: ${refused}`);
        continue;
      }
      const key = `${owner.key}/${device.name.trim()}`;
      const same = devicesByKey.get(key);
      if (same) same.push(device);
      else devicesByKey.set(key, [device]);
      owners.set(device, owner);
    }
    for (const same of devicesByKey.values()) {
      for (const device of same) {
        const owner = owners.get(device)!;
        if (same.length > 1) {
          const others = same.filter((d) => d !== device).map((d) => d.id);
          this.#leftOutDevices.push(
            `device ${device.id} of user ${owner.user.id}: its name is the same as that of device ${others.join(', ')}`,
          );
        } else {
          owner.devices.push(device);
          this.counts.devices++;
        }
      }
    }
    for (const entry of this.#entries)
      if (entry.devices.length > 1) entry.devices.sort((a, b) => compareText(a.name.trim(), b.name.trim()));
  }

  addRules(rules: ApiRule[]): void {
    const problems = this.#problems.rules;
    const rulesByKey = new Map<string, ApiRule>();
    const keys = new Map<ApiRule, string>();
    const globalRules: ApiRule[] = [];
    for (const rule of rules) {
      const leftOutOwner = rule.user_id === null ? undefined : this.#leftOutUsers.get(rule.user_id);
      if (leftOutOwner) {
        leftOutOwner.rules.push(rule.id);
        continue;
      }
      const owner = rule.user_id === null ? null : this.#byId.get(rule.user_id);
      if (owner === undefined) {
        problems.push(
          `rule ${rule.id} (${rule.action} ${rule.destination}) is bound to user ${rule.user_id}, which the server did not list`,
        );
        continue;
      }
      const key = ruleKey({
        ownerEmail: owner?.user.email ?? null,
        action: rule.action,
        destination: rule.destination,
        port_type: rule.port_type,
        port_range: rule.port_range,
      });
      const other = rulesByKey.get(key);
      if (other)
        problems.push(
          `rules ${other.id} and ${rule.id} are the same rule (${ruleText(rule)}${owner ? ` of ${owner.user.email}` : ''})`,
        );
      rulesByKey.set(key, rule);
      keys.set(rule, key);
      this.counts.rules++;
      if (owner) owner.rules.push(rule);
      else globalRules.push(rule);
    }
    for (const entry of this.#entries) if (entry.rules.length > 0) entry.rules = sortRules(entry.rules, keys);
    this.#globalRules = sortRules(globalRules, keys);
  }

  result(): { entries: UserEntry[]; globalRules: ApiRule[]; leftOut: string[] } {
    const problems = [...this.#problems.users, ...this.#problems.devices, ...this.#problems.rules];
    if (problems.length > 0) throw new ExportError(problems);
    const leftOut: string[] = [];
    for (const [id, { reason, devices, rules }] of this.#leftOutUsers) {
      const with_ = [
        devices.length > 0 ? `device${devices.length === 1 ? '' : 's'} ${devices.join(', ')}` : '',
        rules.length > 0 ? `rule${rules.length === 1 ? '' : 's'} ${rules.join(', ')}` : '',
      ].filter((part) => part !== '');
      leftOut.push(`user ${id}: ${reason}${with_.length > 0 ? `; with its ${with_.join(' and ')}` : ''}`);
    }
    for (const line of this.#leftOutDevices) leftOut.push(line);
    return { entries: this.#entries, globalRules: this.#globalRules, leftOut };
  }
}

/** Why validate would refuse a live user's email, named without repeating it; null when it would not. */
function emailRefusal(email: string): string | null {
  if (checkEmail(email).ok) return null;
  return emailCharacterProblem(email.trim()) ?? 'it is not local@domain without white space, at most 255 characters';
}

/** Why validate would refuse a live device's name or description, named without repeating it; null when it would not. */
function deviceRefusal(device: ApiDevice): string | null {
  const name = checkDeviceName(device.name);
  if (typeof name !== 'string')
    return `its name is refused by validate: ${isText(device.name) ? name.message : 'it holds a NUL or a lone UTF-16 surrogate'}`;
  if (typeof device.description === 'string' && !isText(device.description))
    return 'its description is refused by validate: it holds a NUL or a lone UTF-16 surrogate';
  return null;
}

interface Mapping {
  pinAddresses: boolean;
  explicitDefaults: boolean;
}

function userToYaml(entry: UserEntry, mapping: Mapping): Plain {
  const out: Plain = { email: entry.user.email };
  if (entry.user.role !== 'unprivileged' || mapping.explicitDefaults) out.role = entry.user.role;
  if (entry.devices.length > 0) out.devices = entry.devices.map((d) => deviceToYaml(d, mapping));
  if (entry.rules.length > 0) out.rules = entry.rules.map(ruleToYaml);
  return out;
}

function deviceToYaml(device: ApiDevice, mapping: Mapping): Plain {
  const out: Plain = { name: device.name };
  if (device.description !== null && device.description !== '') out.description = device.description;
  out.public_key = device.public_key;
  if (mapping.pinAddresses) {
    if (device.ipv4 !== null && device.ipv4 !== '') out.ipv4 = device.ipv4;
    if (device.ipv6 !== null && device.ipv6 !== '') out.ipv6 = device.ipv6;
  }
  for (const [field, flag] of USE_DEFAULT_FLAGS) {
    if (device[flag]) {
      if (mapping.explicitDefaults) out[flag] = true;
      continue;
    }
    const value = device[field];
    const empty = value === null || value === '' || (Array.isArray(value) && value.length === 0);
    // A value given implies its flag false (the table's withImpliedFlags); with no value the flag must say so itself.
    if (empty) out[flag] = false;
    else out[field] = Array.isArray(value) ? [...value] : value;
  }
  return out;
}

function ruleToYaml(rule: ApiRule): Plain {
  const out: Plain = { action: rule.action, destination: rule.destination };
  if (rule.port_type !== null) out.port_type = rule.port_type;
  if (rule.port_range !== null && rule.port_range !== '') out.port_range = shortPortRange(rule.port_range);
  return out;
}

/** `"443 - 443"` → `"443"`, `"80 - 443"` → `"80-443"`; the planner compares them normalised. */
function shortPortRange(text: string): string {
  const parsed = parsePortRange(text);
  if (!parsed.ok) return text;
  const { low, high } = parsed.range;
  return low === high ? String(low) : `${low}-${high}`;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What rules are ordered by, computed once per rule (large servers sort tens of thousands). */
interface RuleOrder {
  rule: ApiRule;
  action: string;
  family: number;
  /** Numbers for the dotted quads read directly, bigints otherwise (`<` compares the two exactly). */
  start: bigint | number;
  prefix: number;
  address: bigint | number;
  destination: string;
  portType: string;
  low: number;
  high: number;
  key: string;
}

function ruleOrder(rule: ApiRule, key: string): RuleOrder {
  const dotted = dottedCidr(rule.destination);
  const destination = dotted ? null : parseCidrOrAddress(rule.destination);
  const ports = rule.port_range ? parsePortRange(rule.port_range) : null;
  return {
    rule,
    action: rule.action,
    family: dotted ? 4 : (destination?.family ?? 99),
    start: dotted ? dotted.start : (destination?.start ?? 0n),
    prefix: dotted ? dotted.prefix : (destination?.prefix ?? 0),
    address: dotted ? dotted.address : (destination?.address ?? 0n),
    destination: rule.destination,
    portType: rule.port_type ?? '',
    low: ports?.ok ? ports.range.low : 0,
    high: ports?.ok ? ports.range.high : 0,
    key,
  };
}

/**
 * Rules in reading order: action, then destination by address (IPv4 first) and prefix, then
 * ports, then their natural key (`keys`: the rules of one list share their owner, so the owner
 * part of the key does not change the order).
 */
function sortRules(rules: ApiRule[], keys: Map<ApiRule, string>): ApiRule[] {
  if (rules.length < 2) return rules;
  return rules
    .map((rule) => ruleOrder(rule, keys.get(rule)!))
    .sort(
      (a, b) =>
        compareText(a.action, b.action) ||
        a.family - b.family ||
        compareBigint(a.start, b.start) ||
        a.prefix - b.prefix ||
        compareBigint(a.address, b.address) ||
        compareText(a.destination, b.destination) ||
        compareText(a.portType, b.portType) ||
        a.low - b.low ||
        a.high - b.high ||
        compareText(a.key, b.key),
    )
    .map((order) => order.rule);
}

function compareBigint(a: bigint | number, b: bigint | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function headerComment(
  options: ExportOptions,
  counts: ExportResult['counts'],
  mapping: Mapping,
  leftOut: string[],
): string {
  const server = options.server ? ` from ${withoutCredentials(options.server)}` : '';
  const lines = [
    `yaml-language-server: $schema=${options.schemaRef}`,
    `Exported by \`netform export\`${server}: ${describeCounts(counts)}.`,
    'Review it, commit it, then `netform plan` shows no changes until the files or the server change.',
    options.prune === false
      ? 'Prune is off (exported with --no-prune): a live object that no file declares is listed by plan and left alone.'
      : '`settings: { prune: true }`: this repository owns the server, so apply deletes what no file declares (export with --no-prune to leave such objects alone).',
    'What is managed:',
    '- Passwords cannot be read from the server and are not managed. To set one from now on, give',
    '  the user `password: { env: NAME }` (sent on create, and on `apply --rotate-passwords`).',
    '- Preshared keys are left out on purpose, so each stays as it is on the server. To manage one,',
    '  give its device `preshared_key: { env: NAME }` or `preshared_key: { file: secrets/NAME.psk }`',
    '  (a file holding the base64 key, relative to this file; keep such files out of git).',
    "- Fields left out are managed at their default: a user's role is `unprivileged`, and a device's",
    '  allowed_ips, dns, endpoint, mtu and persistent_keepalive follow the server (`use_default_<x>: true`),',
    '  so a hand promotion or a hand-set value shows as drift. To leave one unmanaged, name it in',
    '  `ignore_changes: [role]` on the object, or in `settings.ignore_changes`. A value written here is pinned.',
    mapping.pinAddresses
      ? '- Device tunnel addresses (ipv4, ipv6) are pinned to what the server assigned, so a recreated device keeps them and a hand change shows as drift. Delete those lines to let the server choose.'
      : '- Device tunnel addresses (ipv4, ipv6) are left out (exported with --no-addresses): the server keeps choosing them.',
    '- `configuration:` (when the server has /v0/configuration) holds the device defaults and the',
    '  unprivileged-user flags, managed: a hand change of them shows as drift. Delete a line to stop managing it.',
    ...(leftOut.length > 0
      ? [
          'Left out, because no desired state can declare them as the server holds them: fix or delete them',
          'on the server (by id), then export again. Until then `netform plan` shows them (with prune on, as deletions):',
          ...leftOut.map((line) => `- ${line}`),
        ]
      : []),
  ];
  return lines.map((line) => `# ${line}`).join('\n') + '\n';
}

/**
 * The server's configuration as `configuration:`: the device defaults and the two unprivileged-user
 * flags always (what a repository exists to own); the sign-in fields only when off upstream's
 * default or with --explicit-defaults. Sign-in providers and the logo are never exported.
 */
function configurationToYaml(live: ApiConfiguration, mapping: Mapping): Plain {
  const initial = initialConfigurationExtras() as unknown as Plain;
  const out: Plain = {};
  for (const field of MANAGED_CONFIGURATION_FIELDS) {
    const value = live[field];
    if (value === null || value === undefined) continue;
    const core = field.startsWith('default_client_') || field.startsWith('allow_unprivileged_');
    if (core || mapping.explicitDefaults || JSON.stringify(value) !== JSON.stringify(initial[field]))
      out[field] = value;
  }
  return out;
}

/** `3 users, 1 device, 0 rules`. */
export function describeCounts(counts: ExportResult['counts']): string {
  const n = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return `${n(counts.users, 'user')}, ${n(counts.devices, 'device')}, ${n(counts.rules, 'rule')}`;
}

function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(server)';
  }
}

const FILE_NAME_SAFE = /[a-z0-9@._+-]/;
const MAX_FILE_NAME_BYTES = 200;

/**
 * A file name for a user's file that is safe for any email on every common file system: lower
 * case (emails are unique case-insensitively, and so are some file systems), anything but
 * letters, digits and `@._+-` percent-encoded, no leading dot, and a bounded length (a hash of
 * the email keeps long names apart).
 */
export function userFileName(email: string): string {
  let stem = '';
  for (const char of email.trim().toLowerCase()) {
    stem +=
      FILE_NAME_SAFE.test(char) && char.length === 1
        ? char
        : [...Buffer.from(char, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  if (stem.startsWith('.')) stem = `%2E${stem.slice(1)}`;
  if (Buffer.byteLength(stem) > MAX_FILE_NAME_BYTES) {
    const hash = createHash('sha256').update(userKey(email)).digest('hex').slice(0, 12);
    stem = `${stem.slice(0, MAX_FILE_NAME_BYTES - 13)}~${hash}`;
  }
  return `${stem}.yaml`;
}

function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) candidate = name.replace(/\.yaml$/, `~${n}.yaml`);
  taken.add(candidate);
  return candidate;
}
