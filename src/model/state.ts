/**
 * DesiredState is what the front ends (YAML, CDKTF) produce and the planner consumes;
 * LiveState is what the /v0 client reads. Both are plain data.
 */
import type { ApiConfiguration, ManagedConfiguration } from './configuration.js';
import type { DeviceInput } from './device.js';
import type { WritableDeviceField } from './device-fields.js';
import type { Secret } from './secret.js';
import type { OwnerEntry } from './owners.js';
import type { ApiDevice, ApiRule, ApiUser, PortType, Role, RuleAction, TestExpectation } from './types.js';
import type { DesiredAcknowledgement, DesiredForget } from './lifecycle.js';

/** Where a declaration stands, for error messages: 1-based line and column. */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
  /** Where in the document: `users[0].devices[1]`, or a CDKTF resource address `firezone_device.laptop`. */
  path?: string;
  /**
   * Where individual values stand, keyed by their path relative to `path` (`mtu`, `manage.rules[1]`),
   * so that a check can point at the value at fault rather than at its object.
   */
  fields?: Record<string, SourceLocation>;
}

/**
 * The device fields a declaration may manage (the table's writable fields, device-fields.ts).
 * Loaders apply the table's withImpliedFlags: giving a defaultable field turns its default flag
 * off unless stated. A defaultable field left out together with its flag is managed at its
 * default (the flag on: the value follows the server), unless `ignore_changes` names it
 * (src/plan/defaults.ts); `description`, `ipv4` and `ipv6` left out are not managed.
 */
export type DesiredDeviceFields = Pick<DeviceInput, WritableDeviceField>;

/** Device fields `ignore_changes` may name: each stands for the field and its `use_default_<x>` flag. */
export const IGNORABLE_DEVICE_FIELDS = ['allowed_ips', 'dns', 'endpoint', 'mtu', 'persistent_keepalive'] as const;
export type IgnorableDeviceField = (typeof IGNORABLE_DEVICE_FIELDS)[number];
/** User fields `ignore_changes` may name. */
export const IGNORABLE_USER_FIELDS = ['role'] as const;
export type IgnorableUserField = (typeof IGNORABLE_USER_FIELDS)[number];

export interface DesiredDevice {
  name: string;
  /** Fields not compared with the live device (sent on create when given), as Terraform's lifecycle.ignore_changes. */
  ignore_changes?: IgnorableDeviceField[];
  /** The device's previous name within its user (a declared rename). */
  renamed_from?: string;
  fields: DesiredDeviceFields;
  preshared_key?: Secret;
  /** `expires:` as written: from that instant the device is treated as if listed under `absent:`. */
  expires?: string;
  source?: SourceLocation;
}

export interface DesiredRule {
  action: RuleAction;
  destination: string;
  port_type: PortType | null;
  /** As written; compare through normalizePortRange. */
  port_range: string | null;
  /** `expires:` as written: from that instant the rule is deleted whether `prune` is on or off. */
  expires?: string;
  source?: SourceLocation;
}

export interface DesiredUser {
  email: string;
  /** The user's previous email (a declared rename). */
  renamed_from?: string;
  /**
   * Left out: the role is managed at its default, `unprivileged` (a live admin is demoted), unless
   * `ignore_changes` (here or in settings) names `role`.
   */
  role?: Role;
  /** Fields not compared with the live user (sent on create when given). */
  ignore_changes?: IgnorableUserField[];
  password?: Secret;
  devices: DesiredDevice[];
  rules: DesiredRule[];
  /** `expires:` as written: from that instant the user (devices and rules too) is treated as if listed under `absent:`. */
  expires?: string;
  /** `role_expires:` as written (beside `role: admin`): from that instant the role is `unprivileged`. */
  role_expires?: string;
  /**
   * Set on the effective state (src/desired/expiry.ts) when `role_expires` has passed: the role is
   * held to `unprivileged` whatever `ignore_changes` says; the value is the instant as written.
   */
  role_expired?: string;
  source?: SourceLocation;
}

/** A safety limit on one apply: an absolute count, or a percentage of the live objects. */
export type Limit = { kind: 'count'; value: number } | { kind: 'percent'; value: number };

export interface DesiredSettings {
  prune: boolean;
  /** `replace`: plan device changes a 0.7.26+ server ignores on update as replacements. */
  device_updates?: 'update' | 'replace';
  /** What this repository owns; null means everything on the server. */
  manage: {
    /** Email globs; devices and user-bound rules follow their user. */
    users: string[] | null;
    /** CIDR blocks; global rules whose destination lies inside one of them. */
    rules: string[] | null;
  };
  protect: { users: string[] };
  limits: { delete?: Limit; update?: Limit };
  /**
   * false: the server's kernel cannot filter ports, so it stores rules created with ports without
   * them and leaves those it has out of its ruleset (access tests do the same).
   */
  port_rules?: boolean;
  /** Addresses local to the server, never filtered by rules; left out: the tunnel gateway addresses. */
  server_addresses?: string[];
  /**
   * The server's tunnel networks (WIREGUARD_IPV4_NETWORK, WIREGUARD_IPV6_NETWORK), which `/v0` does
   * not expose: with them the plan counts the free addresses of each declared family.
   */
  tunnel_networks?: { ipv4?: string; ipv6?: string };
  /** `settings.ignore_changes`: fields of every user or device not compared with the live objects. */
  ignore_changes?: { users: IgnorableUserField[]; devices: IgnorableDeviceField[] };
  /**
   * `settings.drift.undeclared`: which undeclared objects kept (prune off, or a guard) leave the
   * plan pending (exit 2, drift): `access` (default) admins and rules, `all` every one, `none` none.
   */
  drift?: { undeclared: UndeclaredPolicy };
  /** `settings.owners`: who must approve access changes to which blocks and users (model/owners.ts). */
  owners?: OwnerEntry[];
  /** Where the settings were declared (with `fields` for their values), when a front end knows it. */
  source?: SourceLocation;
}

export type UndeclaredPolicy = 'access' | 'all' | 'none';

export interface AbsentDevice {
  user: string;
  name: string;
  /** Listed by an expiry (src/desired/expiry.ts), not by the files: the instant as written. */
  expired?: string;
  source?: SourceLocation;
}

/** What an expiry applies to: a user, a device, a rule, or a user's admin role (`role_expires`). */
export type ExpiryKind = 'user' | 'device' | 'rule' | 'role';

/**
 * One `expires:` or `role_expires:` of the files, judged at an instant. `key` is the plan's key of
 * the object (`alice@example.com`, `alice@example.com/laptop`, a rule's key), `expires` the value as
 * written, `instant` its ISO form.
 */
export interface Expiry {
  kind: ExpiryKind;
  key: string;
  /** How people read the object: `device alice@example.com/laptop`, `role admin of alice@example.com`. */
  label: string;
  expires: string;
  instant: string;
  expired: boolean;
  source?: SourceLocation;
}

/** The server configuration a repository owns: only the fields given are managed. */
export interface DesiredConfiguration {
  values: ManagedConfiguration;
  /** Where `configuration:` was declared, with `fields` for its values. */
  source?: SourceLocation;
}

/** An access test (`tests:`): from whom, to what, and the verdict expected. */
export interface DesiredTest {
  name: string;
  /** `*`, an email, or `EMAIL/DEVICE`. */
  from: string;
  /**
   * `ADDRESS` or `ADDRESS/PREFIX` (every protocol and port), `ADDRESS:PORT/tcp|udp`, `ADDRESS/icmp`,
   * `ADDRESS/other` (one packet); IPv6 as `[ADDRESS]:PORT/tcp`.
   */
  to: string;
  /** `accept`: every packet gets through; `drop`: none does; `partial`: some do and some do not. */
  expect: TestExpectation;
  source?: SourceLocation;
}

export interface DesiredState {
  /**
   * The files' format version. 2: fields left out are managed at their defaults, as written. 1
   * (or left out, as front ends without versions give): the same, but such changes are marked
   * "now managed" for review (src/plan/defaults.ts).
   */
  version?: 1 | 2;
  settings: DesiredSettings;
  /** Left out: the server's configuration is not managed (and never read). */
  configuration?: DesiredConfiguration;
  users: DesiredUser[];
  /** Rules bound to no user. */
  rules: DesiredRule[];
  absent: { users: { email: string; expired?: string; source?: SourceLocation }[]; devices: AbsentDevice[] };
  /**
   * Set on the effective state (src/desired/expiry.ts): every expiry of the files, judged at the
   * run's instant. Expired users and devices are moved under `absent` (with `expired`), expired
   * rules are in `expiredRules`, an expired role is `role_expired`.
   */
  expiries?: Expiry[];
  /** Rules whose `expires:` has passed (removed from the files' rules): deleted whatever `prune` says. */
  expiredRules?: { user: string | null; rule: DesiredRule }[];
  /** Access tests, checked before plan and apply; left out by front ends that have none. */
  tests?: DesiredTest[];
  /** `acknowledged:`: live differences accepted until a date (src/plan/lifecycle.ts); left out when none. */
  acknowledged?: DesiredAcknowledgement[];
  /** `forget:`: objects no longer managed, never deleted (src/plan/lifecycle.ts); left out when none. */
  forget?: DesiredForget[];
  /** The files this state was read from. */
  sources: string[];
}

export function defaultSettings(): DesiredSettings {
  return { prune: false, manage: { users: null, rules: null }, protect: { users: [] }, limits: {} };
}

export interface LiveState {
  users: ApiUser[];
  devices: ApiDevice[];
  rules: ApiRule[];
  /** `/v0/configuration`, read only when the desired state declares `configuration:` (or export asks). */
  configuration?: ApiConfiguration;
}
