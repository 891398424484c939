/** The /v0 resources as the API returns them (docs/api-v0.md sections 4 to 6). */

export type Role = 'admin' | 'unprivileged';
export const ROLES: readonly Role[] = ['admin', 'unprivileged'];

export type RuleAction = 'accept' | 'drop';
export const RULE_ACTIONS: readonly RuleAction[] = ['accept', 'drop'];

export type PortType = 'tcp' | 'udp';
export const PORT_TYPES: readonly PortType[] = ['tcp', 'udp'];

/** An access test's `expect:`: every packet of the destination accepted, none, or some (docs/rule-semantics.md §8). */
export type TestExpectation = 'accept' | 'drop' | 'partial';
export const TEST_EXPECTATIONS: readonly TestExpectation[] = ['accept', 'drop', 'partial'];

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

// Devices: their type and field lists live with the device-field table (device-fields.ts).
export {
  DEFAULTABLE_DEVICE_FIELDS,
  DEVICE_RESPONSE_KEYS,
  type ApiDevice,
  type DefaultableDeviceField,
  type UseDefaultFlag,
} from './device-fields.js';

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
