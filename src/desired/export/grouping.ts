/**
 * What export reads of the server: the live objects grouped by owner and put in the order they are
 * written, with what no desired state can declare left out (named by id) or refused.
 */
import { checkDeviceName } from '../../model/device.js';
import { isText } from '../../model/fields.js';
import { ruleKey, userKey } from '../../model/keys.js';
import { dottedCidr, parseCidrOrAddress } from '../../model/net.js';
import { parsePortRange } from '../../model/ports.js';
import { ruleText } from '../../model/rule.js';
import { checkEmail, emailCharacterProblem } from '../../model/user.js';
import { emailCharacterProblemText } from '../../views/model-email.js';
import type { ApiDevice, ApiRule, ApiUser } from '../../model/types.js';
import { ExportError } from './types.js';

export interface UserEntry {
  user: ApiUser;
  /** userKey(email), what users are ordered by. */
  key: string;
  devices: ApiDevice[];
  rules: ApiRule[];
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
export class Grouping {
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
  const problem = emailCharacterProblem(email.trim());
  return problem
    ? emailCharacterProblemText(problem)
    : 'it is not local@domain without white space, at most 255 characters';
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

export function compareText(a: string, b: string): number {
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
