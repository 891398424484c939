/**
 * FirezoneStack: a whole netform desired state as one CDK for Terraform stack, built from a list of
 * users (with their devices and rules) and the rules bound to no user.
 *
 * What it guarantees about the synthesized cdk.tf.json, which `netform plan -f` reads:
 * - a device's or rule's `user_id` is the reference `${firezone_user.<name>.id}`, never a literal;
 * - passwords, preshared keys and the API token only ever come from sensitive Terraform variables
 *   without a default (`${var.<name>}`, supplied as `TF_VAR_<name>`), so no secret is written out;
 * - resource names derive from natural keys (email, device name, rule fields), not from list
 *   positions, so reordering a list renames nothing.
 */
import type { Construct } from 'constructs';
import { TerraformStack, TerraformVariable } from './peers.js';
import { Device } from './generated/providers/firezone/device/index.js';
import { FirezoneProvider } from './generated/providers/firezone/provider/index.js';
import { Rule } from './generated/providers/firezone/rule/index.js';
import { User } from './generated/providers/firezone/user/index.js';

/**
 * Where a secret comes from: a sensitive Terraform variable. Either its name (the stack declares
 * it, sensitive and without a default) or a TerraformVariable of your own, which must be
 * sensitive and have no default. Its value is read from `TF_VAR_<name>` when netform (or
 * Terraform) runs; it never appears in the stack.
 */
export type SecretVariable = { variable: string; description?: string } | TerraformVariable;

export type FirezoneRole = 'admin' | 'unprivileged';

export interface FirezoneRuleSpec {
  action: 'accept' | 'drop';
  /** An IP address or CIDR block. */
  destination: string;
  /** Together with portRange, or neither. */
  portType?: 'tcp' | 'udp';
  /** `"443"`, `"8000-8100"` or `"8000 - 8100"`. */
  portRange?: string;
  /**
   * From this instant (`2026-12-31`, 00:00 UTC, or a date-time with an offset) the rule is treated
   * as if listed under `absent` (deleted whether prune is on or off), as `expires:` in YAML.
   */
  expires?: string;
  /** The Terraform resource name; default: derived from the owner and the rule's fields. */
  resourceName?: string;
}

/** The device fields that have a server default, which `ignoreChanges` may leave unmanaged. */
export type FirezoneDeviceIgnorable = 'allowed_ips' | 'dns' | 'endpoint' | 'mtu' | 'persistent_keepalive';

export interface FirezoneDeviceSpec {
  /** Unique per user; with the owner's email, the device's natural key. */
  name: string;
  /** WireGuard public key, base64 of 32 bytes. */
  publicKey: string;
  /** Left out: the server generates one on create, and netform does not manage it. */
  presharedKey?: SecretVariable;
  description?: string;
  /** Giving a value implies useDefaultAllowedIps: false (as in the YAML format). */
  allowedIps?: string[];
  /** Giving a value implies useDefaultDns: false. */
  dns?: string[];
  /** Giving a value implies useDefaultEndpoint: false. */
  endpoint?: string;
  /** Giving a value implies useDefaultMtu: false. */
  mtu?: number;
  /** Giving a value implies useDefaultPersistentKeepalive: false. */
  persistentKeepalive?: number;
  ipv4?: string;
  ipv6?: string;
  useDefaultAllowedIps?: boolean;
  useDefaultDns?: boolean;
  useDefaultEndpoint?: boolean;
  useDefaultMtu?: boolean;
  useDefaultPersistentKeepalive?: boolean;
  /**
   * Fields not compared with the server (the resource's `lifecycle.ignore_changes`, as
   * `ignore_changes` in YAML). Left out, a field with a server default follows it (`useDefault<X>: true`), managed.
   */
  ignoreChanges?: FirezoneDeviceIgnorable[];
  /** The device's old name: a rename (one PATCH of the name), as `renamed_from` in YAML. */
  renamedFrom?: string;
  /**
   * From this instant (`2026-12-31`, 00:00 UTC, or a date-time with an offset) the device is treated
   * as if listed under `absent` (deleted whether prune is on or off), as `expires:` in YAML.
   */
  expires?: string;

  /** The Terraform resource name; default: `<user resource name>_<device name>`. */
  resourceName?: string;
}

export interface FirezoneUserSpec {
  email: string;
  /** Left out: `unprivileged`, managed (a live admin is demoted), unless ignoreChanges names `role`. */
  role?: FirezoneRole;
  /** Fields not compared with the server (the resource's `lifecycle.ignore_changes`, as `ignore_changes` in YAML). */
  ignoreChanges?: 'role'[];
  /** Write-only: sent when the user is created (and on `apply --rotate-passwords`). */
  password?: SecretVariable;
  devices?: FirezoneDeviceSpec[];
  /** Rules that apply to this user only. */
  rules?: FirezoneRuleSpec[];
  /** The user's old email: a rename (one PATCH of the email), as `renamed_from` in YAML. */
  renamedFrom?: string;
  /**
   * From this instant (`2026-12-31`, 00:00 UTC, or a date-time with an offset) the user, with its devices and rules, is treated
   * as if listed under `absent` (deleted whether prune is on or off), as `expires:` in YAML.
   */
  expires?: string;
  /** Beside `role: 'admin'`: from this instant the user is held to `unprivileged`, as `role_expires:` in YAML. */
  roleExpires?: string;
  /** The Terraform resource name; default: derived from the email (`alice@example.com` -> `alice_example_com`). */
  resourceName?: string;
}

/** A safety limit: a count (`10`) or a percentage of the live objects (`"10%"`). */
export type NetformLimit = number | `${number}%`;

/** The `settings` section of the YAML format, with the same meaning. */
export interface NetformSettingsSpec {
  prune?: boolean;
  /** `replace`: device changes a 0.7.26+ server ignores are planned as replacements (see the YAML schema). */
  device_updates?: 'update' | 'replace';
  manage?: { users?: string[]; rules?: string[] };
  protect?: { users?: string[] };
  limits?: { delete?: NetformLimit; update?: NetformLimit };
  /** false for servers whose kernel cannot filter ports (they store rules created with ports without them). */
  port_rules?: boolean;
  /** Addresses local to the server, never filtered; default 10.3.2.1 and fd00::3:2:1. */
  server_addresses?: string[];
  /** The server's tunnel networks (WIREGUARD_IPV4_NETWORK/IPV6_NETWORK): plan then counts free addresses. */
  tunnel_networks?: { ipv4?: string; ipv6?: string };
  /** What leaves a plan or drift check pending besides its changes: undeclared objects kept (default `access`). */
  drift?: { undeclared?: 'access' | 'all' | 'none' };
  /** Fields of every user or device not compared with the server (added to each object's own ignoreChanges). */
  ignore_changes?: { users?: 'role'[]; devices?: FirezoneDeviceIgnorable[] };
}

/** One entry of the YAML format's `tests:` list: an access test checked before plan and apply. */
export interface NetformTestSpec {
  name: string;
  /** `*`, an email, or `EMAIL/DEVICE_NAME`. */
  from: string;
  /**
   * `ADDRESS:PORT/tcp`, `ADDRESS:PORT/udp`, `ADDRESS/icmp`, `ADDRESS/other` (one packet), or `ADDRESS` or
   * `ADDRESS/PREFIX` (every protocol and port); IPv6 as `[ADDRESS]:PORT/tcp`.
   */
  to: string;
  expect: 'accept' | 'drop' | 'partial';
}

/** The `absent` section of the YAML format: objects to delete even when prune is off. */
export interface NetformAbsentSpec {
  users?: string[];
  devices?: { user: string; name: string }[];
}

/**
 * The `configuration` section of the YAML format (the server's `/v0/configuration`), with the
 * same meaning: only the fields given are managed. Written in the YAML format's snake_case names.
 */
export interface NetformConfigurationSpec {
  defaultClientAllowedIps?: string[];
  defaultClientDns?: string[];
  defaultClientEndpoint?: string;
  defaultClientMtu?: number;
  defaultClientPersistentKeepalive?: number;
  allowUnprivilegedDeviceManagement?: boolean;
  allowUnprivilegedDeviceConfiguration?: boolean;
  localAuthEnabled?: boolean;
  disableVpnOnOidcError?: boolean;
  vpnSessionDuration?: number;
}

export interface FirezoneStackConfig {
  users: FirezoneUserSpec[];
  /** Rules bound to no user. */
  rules?: FirezoneRuleSpec[];
  /**
   * Configuration of the firezone provider, for running the stack under Terraform; netform takes
   * the server and token from --url/--token instead. Left out, the provider reads
   * FIREZONE_ENDPOINT and FIREZONE_API_KEY from the environment.
   */
  provider?: { endpoint?: string; apiKey?: SecretVariable };
  settings?: NetformSettingsSpec;
  configuration?: NetformConfigurationSpec;
  absent?: NetformAbsentSpec;
  /** Access tests (the YAML format's `tests:`). */
  tests?: NetformTestSpec[];
}

/** The resources declared for one user. */
export interface FirezoneUserResources {
  user: User;
  devices: Device[];
  rules: Rule[];
}

/** A Terraform resource or variable name from any text: lower case, `[a-z0-9_]`, not starting with a digit. */
export function terraformName(text: string): string {
  const name = text
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (name === '') return '_';
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function ruleResourceName(owner: string, rule: FirezoneRuleSpec): string {
  const ports =
    rule.portType !== undefined || rule.portRange !== undefined
      ? `_${rule.portType ?? ''}_${rule.portRange ?? ''}`
      : '';
  return terraformName(`${owner}_${rule.action}_${rule.destination}${ports}`);
}

export class FirezoneStack extends TerraformStack {
  readonly provider: FirezoneProvider;
  /** By email as written. */
  readonly users = new Map<string, FirezoneUserResources>();
  /** Rules bound to no user. */
  readonly globalRules: Rule[] = [];
  readonly #variables = new Map<string, TerraformVariable>();
  readonly #resourceNames = new Map<string, string>();

  constructor(scope: Construct, id: string, config: FirezoneStackConfig) {
    super(scope, id);
    this.provider = new FirezoneProvider(this, 'firezone', {
      endpoint: config.provider?.endpoint,
      apiKey:
        config.provider?.apiKey === undefined
          ? undefined
          : this.#secret(config.provider.apiKey, 'the API token', 'provider.api_key'),
    });

    for (const spec of config.users) this.#declareUser(spec);
    for (const rule of config.rules ?? []) this.globalRules.push(this.#declareRule(rule, 'global', undefined));

    const netform: Record<string, unknown> = {};
    if (config.settings !== undefined) netform.settings = settingsDocument(config.settings);
    if (config.configuration !== undefined) netform.configuration = configurationDocument(config.configuration);
    if (config.absent !== undefined) netform.absent = config.absent;
    if (config.tests !== undefined) netform.tests = testsDocument(config.tests);
    // A top-level "//" entry is a comment to Terraform; netform reads its settings from there.
    if (Object.keys(netform).length > 0) this.addOverride('//.netform', netform);
  }

  #declareUser(spec: FirezoneUserSpec): void {
    const key = spec.email.trim().toLowerCase();
    for (const existing of this.users.keys()) {
      if (existing.trim().toLowerCase() === key) throw new Error(`FirezoneStack: user ${spec.email} is declared twice`);
    }
    const name = this.#claimName('firezone_user', spec.resourceName ?? terraformName(spec.email), `user ${spec.email}`);
    const user = new User(this, name, {
      ...lifecycleOf(spec.ignoreChanges),
      email: spec.email,
      role: spec.role,
      password:
        spec.password === undefined
          ? undefined
          : this.#secret(spec.password, `the password of ${spec.email}`, `${name}.password`),
    });
    // netform's own keys of a resource go in its "//" entry, which Terraform ignores.
    netformKeys(user, { renamed_from: spec.renamedFrom, expires: spec.expires, role_expires: spec.roleExpires });
    const resources: FirezoneUserResources = { user, devices: [], rules: [] };
    const deviceNames = new Set<string>();
    for (const device of spec.devices ?? []) {
      if (deviceNames.has(device.name.trim()))
        throw new Error(`FirezoneStack: device ${device.name} of ${spec.email} is declared twice`);
      deviceNames.add(device.name.trim());
      resources.devices.push(this.#declareDevice(device, name, user, spec.email));
    }
    for (const rule of spec.rules ?? []) resources.rules.push(this.#declareRule(rule, name, user));
    this.users.set(spec.email, resources);
  }

  #declareDevice(spec: FirezoneDeviceSpec, ownerName: string, owner: User, ownerEmail: string): Device {
    const name = this.#claimName(
      'firezone_device',
      spec.resourceName ?? terraformName(`${ownerName}_${spec.name}`),
      `device ${spec.name} of ${ownerEmail}`,
    );
    const device = new Device(this, name, {
      ...lifecycleOf(spec.ignoreChanges),
      userId: owner.id,
      name: spec.name,
      publicKey: spec.publicKey,
      presharedKey:
        spec.presharedKey === undefined
          ? undefined
          : this.#secret(
              spec.presharedKey,
              `the preshared key of device ${spec.name} of ${ownerEmail}`,
              `${name}.preshared_key`,
            ),
      description: spec.description,
      allowedIps: spec.allowedIps,
      dns: spec.dns,
      endpoint: spec.endpoint,
      mtu: spec.mtu,
      persistentKeepalive: spec.persistentKeepalive,
      ipv4: spec.ipv4,
      ipv6: spec.ipv6,
      useDefaultAllowedIps: spec.useDefaultAllowedIps,
      useDefaultDns: spec.useDefaultDns,
      useDefaultEndpoint: spec.useDefaultEndpoint,
      useDefaultMtu: spec.useDefaultMtu,
      useDefaultPersistentKeepalive: spec.useDefaultPersistentKeepalive,
    });
    netformKeys(device, { renamed_from: spec.renamedFrom, expires: spec.expires });
    return device;
  }

  #declareRule(spec: FirezoneRuleSpec, ownerName: string, owner: User | undefined): Rule {
    const name = this.#claimName(
      'firezone_rule',
      spec.resourceName ?? ruleResourceName(ownerName, spec),
      `rule ${spec.action} ${spec.destination}`,
    );
    const rule = new Rule(this, name, {
      userId: owner?.id,
      action: spec.action,
      destination: spec.destination,
      portType: spec.portType,
      portRange: spec.portRange,
    });
    netformKeys(rule, { expires: spec.expires });
    return rule;
  }

  /** Reserves a resource name; two declarations deriving the same name must be told apart by hand. */
  #claimName(type: string, name: string, what: string): string {
    if (!VALID_NAME.test(name))
      throw new Error(`FirezoneStack: ${what}: "${name}" is not a valid Terraform resource name`);
    const taken = this.#resourceNames.get(name);
    if (taken !== undefined) {
      throw new Error(
        `FirezoneStack: ${what} and ${taken} would both be named ${name}; give one of them a resourceName`,
      );
    }
    this.#resourceNames.set(name, `${what} (${type})`);
    return name;
  }

  /** The `${var.NAME}` expression of a secret; refuses anything that would put a value in the stack. */
  #secret(source: SecretVariable, what: string, attribute: string): string {
    if (source instanceof TerraformVariable) {
      if (source.sensitive !== true)
        throw new Error(`FirezoneStack: ${attribute}: the variable for ${what} must be declared sensitive: true`);
      if (source.default !== undefined)
        throw new Error(
          `FirezoneStack: ${attribute}: the variable for ${what} must have no default (a default is a secret written into the stack)`,
        );
      return source.stringValue;
    }
    if (typeof source !== 'object' || source === null || typeof source.variable !== 'string') {
      throw new Error(
        `FirezoneStack: ${attribute}: ${what} must be { variable: 'NAME' } (read from TF_VAR_NAME), never a literal value`,
      );
    }
    if (!VALID_NAME.test(source.variable))
      throw new Error(`FirezoneStack: ${attribute}: "${source.variable}" is not a valid Terraform variable name`);
    let variable = this.#variables.get(source.variable);
    if (variable === undefined) {
      variable = new TerraformVariable(this, source.variable, {
        type: 'string',
        sensitive: true,
        description:
          source.description ?? `${what[0]?.toUpperCase() ?? ''}${what.slice(1)} (set TF_VAR_${source.variable})`,
      });
      this.#variables.set(source.variable, variable);
    }
    return variable.stringValue;
  }
}

/** `ignoreChanges` as the resource's `lifecycle.ignore_changes`, which netform reads as `ignore_changes`. */
function lifecycleOf(fields: readonly string[] | undefined): { lifecycle?: { ignoreChanges: string[] } } {
  return fields === undefined || fields.length === 0 ? {} : { lifecycle: { ignoreChanges: [...fields] } };
}

function settingsDocument(settings: NetformSettingsSpec): Record<string, unknown> {
  // Written in the YAML format's shape, so that both front ends read settings with one set of rules.
  return JSON.parse(JSON.stringify(settings)) as Record<string, unknown>;
}

/** `defaultClientMtu` -> `default_client_mtu`: the YAML format's names, values as given. */
function configurationDocument(configuration: NetformConfigurationSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(configuration)) {
    if (value !== undefined) out[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  }
  return JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
}

function testsDocument(tests: NetformTestSpec[]): Record<string, unknown>[] {
  // The YAML format's shape: { name, from, to, expect }.
  return tests.map(({ name, from, to, expect }) => ({ name, from, to, expect }));
}

/**
 * netform's own keys of a resource (a rename, an expiry), those given, in its "//" entry under
 * `netform`, which Terraform ignores and netform's translator reads as written.
 */
function netformKeys(
  resource: { addOverride(path: string, value: unknown): void },
  keys: Record<string, string | undefined>,
): void {
  const given = Object.fromEntries(Object.entries(keys).filter(([, value]) => value !== undefined));
  if (Object.keys(given).length > 0) resource.addOverride('//.netform', given);
}
