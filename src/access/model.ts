/**
 * The access model: users, their devices and the rules, as the evaluator reads them
 * (docs/rule-semantics.md). Built from a desired state or from a live state; pure data.
 */
import { userKey } from '../model/keys.js';
import { cidrRange, parseIpAddress, type IpFamily } from '../model/net.js';
import { parsePortRange } from '../model/ports.js';
import type { DesiredRule, DesiredState, LiveState, SourceLocation } from '../model/state.js';
import type { PortType, RuleAction } from '../model/types.js';

/** A rule as the evaluator sees it. `owner` is the owner's email in normal form, null for a global rule. */
export interface AccessRule {
  owner: string | null;
  action: RuleAction;
  destination: string;
  port_type: PortType | null;
  port_range: string | null;
  /** Where it is declared (desired state) or its id (live state). */
  source?: SourceLocation;
  id?: string;
  /**
   * The ports a declared rule has when `settings.port_rules` is false: 0.7.36 then stores it
   * without them (docs/rule-semantics.md §5.1.1), so `port_type` and `port_range` are null here, as the kernel filters it.
   */
  declaredPorts?: { port_type: PortType; port_range: string | null };
}

export interface AccessDevice {
  name: string;
  /** Tunnel addresses; `undefined` means "not known yet, assumed assigned" (a declared device without a pinned one). */
  ipv4?: string | null;
  ipv6?: string | null;
}

export interface AccessUser {
  /** Email in normal form. */
  key: string;
  email: string;
  /** Why the user's devices have no tunnel (disabled, VPN session expired), or undefined. */
  noTunnel?: string;
  devices: AccessDevice[];
}

export interface AccessSettings {
  /**
   * `settings.port_rules`: false for servers whose kernel cannot filter ports. Such a server leaves
   * the rules with ports it has out of its ruleset (docs/rule-semantics.md §5.1.2: the evaluator ignores them) and
   * stores new ones without their ports (§5.1.1: see asStored).
   */
  portRules: boolean;
  /** Addresses local to the server: never filtered (the input hook). */
  serverAddresses: string[];
}

/** The tunnel gateway addresses of a default install (docs/rule-semantics.md §5.4). */
export const DEFAULT_SERVER_ADDRESSES = ['10.3.2.1', 'fd00::3:2:1'];

export function defaultAccessSettings(): AccessSettings {
  return { portRules: true, serverAddresses: [...DEFAULT_SERVER_ADDRESSES] };
}

export interface AccessModel {
  users: Map<string, AccessUser>;
  rules: AccessRule[];
  settings: AccessSettings;
}

/** Stage order within one scope (docs/rule-semantics.md §2.1): port-accept, port-drop, portless-accept, portless-drop. */
export const STAGES = ['port-accept', 'port-drop', 'portless-accept', 'portless-drop'] as const;
export type StageName = (typeof STAGES)[number];

export function stageOf(rule: { action: RuleAction; port_type: PortType | null }): number {
  return (rule.port_type === null ? 2 : 0) + (rule.action === 'accept' ? 0 : 1);
}

/** A rule parsed for matching: its destination block as integers and its inclusive port range. */
export interface CompiledRule {
  rule: AccessRule;
  family: IpFamily;
  start: bigint;
  end: bigint;
  portType: PortType | null;
  low: number;
  high: number;
  /** 0..3, see STAGES. */
  stage: number;
}

/** Null when the destination or port range cannot be parsed (validation reports those). */
export function compileRule(rule: AccessRule): CompiledRule | null {
  const cidr = cidrRange(rule.destination);
  if (!cidr) return null;
  let low = 0;
  let high = 65535;
  if (rule.port_type !== null) {
    if (rule.port_range === null) return null;
    const parsed = parsePortRange(rule.port_range);
    if (!parsed.ok) return null;
    ({ low, high } = parsed.range);
  }
  return {
    rule,
    family: cidr.family,
    start: cidr.start,
    end: cidr.end,
    portType: rule.port_type,
    low,
    high,
    stage: stageOf(rule),
  };
}

function fromDesiredRule(rule: DesiredRule, owner: string | null, portRules: boolean): AccessRule {
  const access: AccessRule = {
    owner,
    action: rule.action,
    destination: rule.destination,
    port_type: rule.port_type,
    port_range: rule.port_range,
  };
  if (rule.source) access.source = rule.source;
  return asStored(access, portRules);
}

/**
 * A rule netform creates, as a 0.7.36 server stores it: with `port_rules` false (a kernel without
 * port-rule support) create drops its ports (docs/rule-semantics.md §5.1.1), so it is a portless rule.
 */
export function asStored(rule: AccessRule, portRules: boolean): AccessRule {
  if (portRules || rule.port_type === null) return rule;
  return {
    ...rule,
    port_type: null,
    port_range: null,
    declaredPorts: { port_type: rule.port_type, port_range: rule.port_range },
  };
}

/** The access model a desired state declares. Device addresses not pinned are assumed assigned in both families. */
export function accessModelOfDesired(desired: DesiredState): AccessModel {
  const users = new Map<string, AccessUser>();
  const rules: AccessRule[] = [];
  const settings = accessSettingsOf(desired);
  for (const user of desired.users) {
    const key = userKey(user.email);
    users.set(key, {
      key,
      email: user.email,
      devices: user.devices.map((d) => ({
        name: d.name,
        ...pinned('ipv4', d.fields.ipv4),
        ...pinned('ipv6', d.fields.ipv6),
      })),
    });
    for (const rule of user.rules) rules.push(fromDesiredRule(rule, key, settings.portRules));
  }
  for (const rule of desired.rules) rules.push(fromDesiredRule(rule, null, settings.portRules));
  return { users, rules, settings };
}

function pinned(field: 'ipv4' | 'ipv6', value: string | null | undefined): Partial<AccessDevice> {
  return typeof value === 'string' && value !== '' ? { [field]: value } : {};
}

/** The evaluator's settings from a desired state's `settings.port_rules` and `settings.server_addresses`. */
export function accessSettingsOf(desired: DesiredState): AccessSettings {
  const settings = defaultAccessSettings();
  const declared = desired.settings;
  if (declared.port_rules === false) settings.portRules = false;
  if (declared.server_addresses !== undefined) settings.serverAddresses = [...declared.server_addresses];
  return settings;
}

/**
 * The access model of a live server: every user (a disabled one has no tunnel), every device with
 * its real addresses, every rule. `now` decides nothing here: VPN session expiry needs the
 * server's session setting, which /v0 does not expose.
 */
export function accessModelOfLive(live: LiveState, settings: AccessSettings = defaultAccessSettings()): AccessModel {
  const users = new Map<string, AccessUser>();
  const byId = new Map<string, AccessUser>();
  for (const user of live.users) {
    const key = userKey(user.email);
    const access: AccessUser = { key, email: user.email, devices: [] };
    if (user.disabled_at) access.noTunnel = `user ${user.email} is disabled (its devices have no WireGuard peer)`;
    users.set(key, access);
    byId.set(user.id, access);
  }
  for (const device of live.devices) {
    byId.get(device.user_id)?.devices.push({ name: device.name, ipv4: device.ipv4, ipv6: device.ipv6 });
  }
  const rules: AccessRule[] = live.rules.map((rule) => ({
    owner: rule.user_id === null ? null : (byId.get(rule.user_id)?.key ?? `#${rule.user_id}`),
    action: rule.action,
    destination: rule.destination,
    port_type: rule.port_type,
    port_range: rule.port_range,
    id: rule.id,
  }));
  return { users, rules, settings };
}

/** Parsed server addresses, for the "never filtered" check. */
export function serverAddressSet(settings: AccessSettings): Set<string> {
  const set = new Set<string>();
  for (const text of settings.serverAddresses) {
    const parsed = parseIpAddress(text);
    if (parsed) set.add(`${parsed.family}:${parsed.value}`);
  }
  return set;
}
