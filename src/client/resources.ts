/**
 * Reading /v0 resources defensively. A real Firezone 0.7.x server may add keys, leave some out,
 * return `"80"` for a single-port range or a destination without a mask, and order lists as it
 * likes; the rest of netform sees one shape: the contract's keys, unknown ones dropped, missing
 * ones null. Values stay as the server sent them; the planner normalises when it compares.
 */
import type { ApiConfiguration } from '../model/configuration.js';
import type { ApiDevice, ApiRule, ApiUser, PortType, Role, RuleAction } from '../model/types.js';
import type { AnswerProblem } from './errors.js';

export type ResourceName = 'users' | 'devices' | 'rules';
export type Resource<N extends ResourceName> = N extends 'users' ? ApiUser : N extends 'devices' ? ApiDevice : ApiRule;

/** The wrapper key of a request body, per collection. */
export const WRAPPER: Record<ResourceName, 'user' | 'device' | 'rule'> = {
  users: 'user',
  devices: 'device',
  rules: 'rule',
};

/** An answer object the client cannot read: its code and values (AnswerProblem) say why. */
export class MalformedResponseError extends Error {
  override readonly name = 'MalformedResponseError';
  constructor(readonly answer: AnswerProblem) {
    super(answer.code);
  }
}

type Raw = Record<string, unknown>;

function text(raw: Raw, key: string): string | null {
  const v = raw[key];
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : String(v);
}

function requiredText(raw: Raw, key: string, what: string): string {
  const v = text(raw, key);
  if (v === null) throw new MalformedResponseError({ code: 'missing_field', object: what, field: key });
  return v;
}

function integer(raw: Raw, key: string): number | null {
  const v = raw[key];
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number(v);
  return null;
}

function flag(raw: Raw, key: string): boolean {
  const v = raw[key];
  // Upstream always sends the flags; a missing one is treated as the create default (true).
  return v === undefined || v === null ? true : v === true || v === 'true';
}

function list(raw: Raw, key: string): string[] | null {
  const v = raw[key];
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map((e) => String(e));
  // Some upstream versions stored these as comma-separated text.
  if (typeof v === 'string')
    return v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  return null;
}

function asObject(value: unknown, what: string): Raw {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new MalformedResponseError({ code: 'not_an_object', object: what });
  return value as Raw;
}

export function readUser(value: unknown): ApiUser {
  const raw = asObject(value, 'user');
  return {
    id: requiredText(raw, 'id', 'user'),
    email: requiredText(raw, 'email', 'user'),
    role: (text(raw, 'role') ?? 'unprivileged') as Role,
    last_signed_in_at: text(raw, 'last_signed_in_at'),
    last_signed_in_method: text(raw, 'last_signed_in_method'),
    disabled_at: text(raw, 'disabled_at'),
    inserted_at: text(raw, 'inserted_at') ?? '',
    updated_at: text(raw, 'updated_at') ?? '',
  };
}

export function readDevice(value: unknown): ApiDevice {
  const raw = asObject(value, 'device');
  return {
    id: requiredText(raw, 'id', 'device'),
    user_id: requiredText(raw, 'user_id', 'device'),
    name: requiredText(raw, 'name', 'device'),
    description: text(raw, 'description'),
    public_key: text(raw, 'public_key') ?? '',
    preshared_key: text(raw, 'preshared_key'),
    server_public_key: text(raw, 'server_public_key') ?? '',
    ipv4: text(raw, 'ipv4'),
    ipv6: text(raw, 'ipv6'),
    allowed_ips: list(raw, 'allowed_ips'),
    dns: list(raw, 'dns'),
    endpoint: text(raw, 'endpoint'),
    mtu: integer(raw, 'mtu'),
    persistent_keepalive: integer(raw, 'persistent_keepalive'),
    use_default_allowed_ips: flag(raw, 'use_default_allowed_ips'),
    use_default_dns: flag(raw, 'use_default_dns'),
    use_default_endpoint: flag(raw, 'use_default_endpoint'),
    use_default_mtu: flag(raw, 'use_default_mtu'),
    use_default_persistent_keepalive: flag(raw, 'use_default_persistent_keepalive'),
    remote_ip: text(raw, 'remote_ip'),
    latest_handshake: text(raw, 'latest_handshake'),
    rx_bytes: integer(raw, 'rx_bytes'),
    tx_bytes: integer(raw, 'tx_bytes'),
    inserted_at: text(raw, 'inserted_at') ?? '',
    updated_at: text(raw, 'updated_at') ?? '',
  };
}

export function readRule(value: unknown): ApiRule {
  const raw = asObject(value, 'rule');
  const portType = text(raw, 'port_type');
  return {
    id: requiredText(raw, 'id', 'rule'),
    action: (text(raw, 'action') ?? 'drop') as RuleAction,
    destination: requiredText(raw, 'destination', 'rule'),
    port_type: (portType === null || portType === '' ? null : portType.toLowerCase()) as PortType | null,
    port_range: text(raw, 'port_range') || null,
    // Some upstream versions named the owner `user`.
    user_id: text(raw, 'user_id') ?? text(raw, 'user'),
    inserted_at: text(raw, 'inserted_at') ?? '',
    updated_at: text(raw, 'updated_at') ?? '',
  };
}

function bool(raw: Raw, key: string): boolean {
  const v = raw[key];
  return v === true || v === 'true';
}

function objects(raw: Raw, key: string): Record<string, unknown>[] {
  const v = raw[key];
  return Array.isArray(v)
    ? v.filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && !Array.isArray(e))
    : [];
}

/**
 * `/v0/configuration`'s `data`. Upstream before 0.7.27 kept `default_client_allowed_ips` as
 * comma-separated text, and any version may leave a value null: lists read as lists (empty when
 * null), a missing number as null.
 */
export function readConfiguration(value: unknown): ApiConfiguration {
  const raw = asObject(value, 'configuration');
  const logo = raw.logo;
  return {
    id: text(raw, 'id') ?? '',
    local_auth_enabled: bool(raw, 'local_auth_enabled'),
    allow_unprivileged_device_management: bool(raw, 'allow_unprivileged_device_management'),
    allow_unprivileged_device_configuration: bool(raw, 'allow_unprivileged_device_configuration'),
    disable_vpn_on_oidc_error: bool(raw, 'disable_vpn_on_oidc_error'),
    vpn_session_duration: integer(raw, 'vpn_session_duration') as number,
    default_client_persistent_keepalive: integer(raw, 'default_client_persistent_keepalive') as number,
    default_client_mtu: integer(raw, 'default_client_mtu') as number,
    default_client_endpoint: text(raw, 'default_client_endpoint') as string,
    default_client_dns: list(raw, 'default_client_dns') ?? [],
    default_client_allowed_ips: list(raw, 'default_client_allowed_ips') ?? [],
    openid_connect_providers: objects(
      raw,
      'openid_connect_providers',
    ) as unknown as ApiConfiguration['openid_connect_providers'],
    saml_identity_providers: objects(
      raw,
      'saml_identity_providers',
    ) as unknown as ApiConfiguration['saml_identity_providers'],
    logo: typeof logo === 'object' && logo !== null && !Array.isArray(logo) ? (logo as ApiConfiguration['logo']) : {},
    inserted_at: text(raw, 'inserted_at') ?? '',
    updated_at: text(raw, 'updated_at') ?? '',
  };
}

export const READERS: { [N in ResourceName]: (value: unknown) => Resource<N> } = {
  users: readUser,
  devices: readDevice,
  rules: readRule,
} as { [N in ResourceName]: (value: unknown) => Resource<N> };
