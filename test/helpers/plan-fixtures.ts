/** Plain-data builders for planner tests: desired states, live objects, fixed ids. */
import { Secret } from '../../src/model/secret.js';
import {
  defaultSettings,
  type DesiredDevice,
  type DesiredRule,
  type DesiredSettings,
  type DesiredState,
  type DesiredUser,
  type LiveState,
} from '../../src/model/state.js';
import type { ApiDevice, ApiRule, ApiUser } from '../../src/model/types.js';

let counter = 0;
export function uuid(): string {
  counter++;
  return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, '0')}`;
}

const T = '2024-01-01T00:00:00.000000Z';

export function liveUser(email: string, over: Partial<ApiUser> = {}): ApiUser {
  return {
    id: uuid(),
    email,
    role: 'unprivileged',
    last_signed_in_at: null,
    last_signed_in_method: null,
    disabled_at: null,
    inserted_at: T,
    updated_at: T,
    ...over,
  };
}

export const KEY_A = 'x8mEqUv3cGt1Xq6h3mJx0o8nOqCq2cW1oZt3JYfJfGs=';
export const KEY_B = 'YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=';
export const PSK_LIVE = 'cHNrLWxpdmUtdmFsdWUtMzItYnl0ZXMtbG9uZy4uLi4=';
export const PSK_NEW = 'bmV3LXBzay12YWx1ZS0zMi1ieXRlcy1sb25nLi4uLi4=';

export function liveDevice(user: ApiUser, name: string, over: Partial<ApiDevice> = {}): ApiDevice {
  return {
    id: uuid(),
    user_id: user.id,
    name,
    description: null,
    public_key: KEY_A,
    preshared_key: PSK_LIVE,
    server_public_key: KEY_B,
    ipv4: '10.3.2.2',
    ipv6: 'fd00::3:2:2',
    allowed_ips: ['0.0.0.0/0', '::/0'],
    dns: ['1.1.1.1', '1.0.0.1'],
    endpoint: 'vpn.example.com:51820',
    mtu: 1280,
    persistent_keepalive: 25,
    use_default_allowed_ips: true,
    use_default_dns: true,
    use_default_endpoint: true,
    use_default_mtu: true,
    use_default_persistent_keepalive: true,
    remote_ip: null,
    latest_handshake: null,
    rx_bytes: null,
    tx_bytes: null,
    inserted_at: T,
    updated_at: T,
    ...over,
  };
}

export function liveRule(over: Partial<ApiRule> & Pick<ApiRule, 'destination'>): ApiRule {
  return {
    id: uuid(),
    action: 'accept',
    port_type: null,
    port_range: null,
    user_id: null,
    inserted_at: T,
    updated_at: T,
    ...over,
  };
}

export function user(email: string, over: Partial<DesiredUser> = {}): DesiredUser {
  return { email, devices: [], rules: [], ...over };
}

export function device(
  name: string,
  fields: DesiredDevice['fields'] = {},
  over: Partial<DesiredDevice> = {},
): DesiredDevice {
  return { name, fields, ...over };
}

export function rule(destination: string, over: Partial<DesiredRule> = {}): DesiredRule {
  return { action: 'accept', destination, port_type: null, port_range: null, ...over };
}

export function secret(value: string, env: string): Secret {
  return new Secret(value, { env });
}

export function desired(
  parts: {
    users?: DesiredUser[];
    rules?: DesiredRule[];
    settings?: Partial<DesiredSettings>;
    absent?: DesiredState['absent'];
  } = {},
): DesiredState {
  return {
    settings: { ...defaultSettings(), ...parts.settings },
    users: parts.users ?? [],
    rules: parts.rules ?? [],
    absent: parts.absent ?? { users: [], devices: [] },
    sources: ['netform.yaml'],
  };
}

export function liveState(parts: Partial<LiveState> = {}): LiveState {
  return { users: parts.users ?? [], devices: parts.devices ?? [], rules: parts.rules ?? [] };
}

export const OPTIONS = {
  server: 'http://127.0.0.1:4000',
  createdAt: '2024-05-01T00:00:00.000Z',
  tokenUser: 'admin@example.com',
};
