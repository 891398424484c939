/**
 * Columns every store derives from a row to index and constrain it, written once for SQLite and
 * PostgreSQL: email keys (userKey), fixed-width address keys, and a rule's overlap group,
 * block and ports.
 */
import {
  addressSortKey,
  LIST_DEVICE_FIELDS,
  parseCidrOrAddress,
  parseIpAddress,
  overlapGroup,
  parsePortRange,
  userKey,
  STORED_DEVICE_FIELDS,
  USE_DEFAULT_FLAGS,
  type IpFamily,
  type PortRange,
} from '../../src/model/index.js';
import type { RuleRow } from './types.js';

/** A device's columns, from the device-field table: every stored field, in the contract's order. */
export const DEVICE_COLUMNS = STORED_DEVICE_FIELDS.join(', ');
/** Device columns holding a list, kept as JSON text. */
export const JSON_DEVICE_COLUMNS: ReadonlySet<string> = new Set(LIST_DEVICE_FIELDS);
/** Device columns holding a default flag (a boolean). */
export const FLAG_DEVICE_COLUMNS: ReadonlySet<string> = new Set(USE_DEFAULT_FLAGS.map(([, flag]) => flag));

/** Fixed-width hex of an address (8 digits IPv4, 32 IPv6): compared as text in numeric order. */
export function addressKey(family: IpFamily, value: bigint): string {
  return addressSortKey(family, value);
}

export function addressOfKey(key: string): bigint {
  return BigInt(`0x${key}`);
}

export function familyBits(family: IpFamily): number {
  return family === 4 ? 32 : 128;
}

/** Key of the allocation mark: one past the family's last address is clamped to the last. */
export function markKey(family: IpFamily, next: bigint): string {
  const last = (1n << BigInt(familyBits(family))) - 1n;
  return addressKey(family, next > last ? last : next);
}

/**
 * The unique key of a user's email: the one key of src/model (userKey, the email's Unicode lower
 * case, as a citext column compares), so that the server, the planner and validate agree.
 */
export function emailKey(email: string): string {
  return userKey(email);
}

/** The index key of a device address column (`ipv4` or `ipv6`), or null for none. */
export function deviceAddressKey(family: IpFamily, text: string | null): string | null {
  if (text === null) return null;
  const parsed = parseIpAddress(text);
  if (!parsed || parsed.family !== family)
    throw new Error(`store: ipv${family} ${text} is not an IPv${family} address`);
  return addressKey(family, parsed.value);
}

/** What a store keeps beside a rule so that overlapping rules are found (and refused) by index. */
export interface RuleDerivedColumns {
  /** The owner's id, '' for a rule of every user (so that the group compares with `=`). */
  owner_key: string;
  family: IpFamily;
  start_key: string;
  end_key: string;
  /** The destination as a network block, `10.0.0.0/8`. */
  network: string;
  /** '' without ports (such rules only overlap each other), else the port type. */
  port_group: string;
  /** The port range, or the whole 0-65535 for a rule without ports. */
  port_low: number;
  port_high: number;
  has_ports: boolean;
}

export function ruleDerivedColumns(
  rule: Pick<RuleRow, 'action' | 'destination' | 'port_type' | 'port_range' | 'user_id'>,
): RuleDerivedColumns {
  const block = parseCidrOrAddress(rule.destination);
  if (!block) throw new Error(`store: rule destination ${rule.destination} is not an address or CIDR block`);
  let ports: PortRange | null = null;
  if (rule.port_range !== null) {
    const parsed = parsePortRange(rule.port_range);
    if (!parsed.ok) throw new Error(`store: rule port_range ${rule.port_range} is not a port range`);
    ports = parsed.range;
  }
  const group = overlapGroup({ ...rule, owner: rule.user_id, destination: block, ports });
  return {
    owner_key: group.owner,
    family: group.family,
    start_key: addressKey(block.family, block.start),
    end_key: addressKey(block.family, block.end),
    network: block.network,
    port_group: group.ports,
    port_low: ports?.low ?? 0,
    port_high: ports?.high ?? 65535,
    has_ports: ports !== null,
  };
}
