/** The /v0 resources as the API returns them (spec/api-v0.md sections 4 to 6). */

export type Role = 'admin' | 'unprivileged';
export const ROLES: readonly Role[] = ['admin', 'unprivileged'];

export type RuleAction = 'accept' | 'drop';
export const RULE_ACTIONS: readonly RuleAction[] = ['accept', 'drop'];

export type PortType = 'tcp' | 'udp';
export const PORT_TYPES: readonly PortType[] = ['tcp', 'udp'];

export interface ApiUser {
  id: string;
  email: string;
  role: Role;
  last_signed_in_at: string | null;
  last_signed_in_method: string | null;
  disabled_at: string | null;
  inserted_at: string;
  updated_at: string;
}

/** The fields a device's `use_default_<x>` flags govern. */
export const DEFAULTABLE_DEVICE_FIELDS = ['allowed_ips', 'dns', 'endpoint', 'mtu', 'persistent_keepalive'] as const;
export type DefaultableDeviceField = (typeof DEFAULTABLE_DEVICE_FIELDS)[number];
export type UseDefaultFlag = `use_default_${DefaultableDeviceField}`;

export interface ApiDevice {
  id: string;
  user_id: string;
  name: string;
  description: string | null;
  public_key: string;
  preshared_key: string | null;
  server_public_key: string;
  ipv4: string | null;
  ipv6: string | null;
  allowed_ips: string[] | null;
  dns: string[] | null;
  endpoint: string | null;
  mtu: number | null;
  persistent_keepalive: number | null;
  use_default_allowed_ips: boolean;
  use_default_dns: boolean;
  use_default_endpoint: boolean;
  use_default_mtu: boolean;
  use_default_persistent_keepalive: boolean;
  remote_ip: string | null;
  latest_handshake: string | null;
  rx_bytes: number | null;
  tx_bytes: number | null;
  inserted_at: string;
  updated_at: string;
}

/** The 25 keys of a device response, in the contract's order. */
export const DEVICE_RESPONSE_KEYS = [
  'id',
  'user_id',
  'name',
  'description',
  'public_key',
  'preshared_key',
  'server_public_key',
  'ipv4',
  'ipv6',
  'allowed_ips',
  'dns',
  'endpoint',
  'mtu',
  'persistent_keepalive',
  'use_default_allowed_ips',
  'use_default_dns',
  'use_default_endpoint',
  'use_default_mtu',
  'use_default_persistent_keepalive',
  'remote_ip',
  'latest_handshake',
  'rx_bytes',
  'tx_bytes',
  'inserted_at',
  'updated_at',
] as const satisfies readonly (keyof ApiDevice)[];

export interface ApiRule {
  id: string;
  action: RuleAction;
  destination: string;
  port_type: PortType | null;
  port_range: string | null;
  user_id: string | null;
  inserted_at: string;
  updated_at: string;
}
