/**
 * The migration's data: the 1.x objects compiled from a 0.7 state and, per user, how its reach
 * under 1.x compares with its reach under 0.7.36. Codes are stable (report.json, docs/netform.md);
 * their sentences live in src/views/migrate.ts.
 */
import type { IpFamily } from '../model/net.js';
import type { Filter1x } from './access.js';

/** Why a difference or a note exists (report.json `code`). */
export type MigrateCode =
  | 'FULL_TUNNEL'
  | 'RESERVED'
  | 'SERVER_LOCAL'
  | 'DEVICE_TO_DEVICE'
  | 'PORT_ZERO'
  | 'PROTOCOL_LOST'
  | 'PREFER_WIDER'
  | 'EVERYONE_GROUP'
  | 'ROUTING'
  | 'NOT_EXPRESSED'
  | 'DROP_COMPLEMENT'
  | 'DISABLED_USER'
  | 'GRANT_EXPIRES'
  | 'NAME_COLLISION'
  | 'RE_ENROL'
  | 'ALLOWED_IPS'
  | 'FUTURE_USERS'
  | 'PAID_TIER';

export interface MigrateOptions {
  prefer: 'narrower' | 'wider';
  /** Allow overlapping Resources with different filters (clients with firezone#12684 only). */
  assumeFilterRouting: boolean;
  /** The id of the account's Everyone group: the global rules' reach is granted to it. */
  everyoneGroup?: string;
  /** The migrated scope (default: the private ranges); every rule's destination is added to it. */
  scope?: string[];
}

/** A device as the report lists it: its name, its last handshake when known, its allowed_ips when declared. */
export interface DeviceFacts {
  name: string;
  lastHandshake?: string | null;
  allowedIps?: string[];
}

/** A grant that ends in 0.7 (`expires:`) and is permanent in 1.x. */
export interface ExpiringGrant {
  /** The owner's email in normal form, null for a global rule. */
  owner: string | null;
  rule: string;
  expires: string;
}

export interface Actor1x {
  address: string;
  email: string;
  enabled: boolean;
}

export interface Group1x {
  /** Terraform address (`g_…`); for the Everyone group, `everyone`. */
  address: string;
  name: string;
  /** Members' emails in normal form, sorted. */
  members: string[];
  /** The account's Everyone group (its id given with --everyone-group): not emitted. */
  everyone?: string;
}

export interface ResourceOut {
  address: string;
  name: string;
  type: 'cidr' | 'ip';
  /** The CIDR (`cidr`) or the address (`ip`). */
  address_text: string;
  family: IpFamily;
  start: bigint;
  end: bigint;
  prefix: number;
  filter: Filter1x;
  /** Group addresses it is granted to, sorted. */
  groups: string[];
}

export interface Policy1x {
  address: string;
  group: string;
  resource: string;
}

export interface Membership1x {
  address: string;
  group: string;
  actor: string;
}

/** A difference: address blocks × protocol × ports, with one packet of it. */
export interface DiffEntry {
  code: MigrateCode;
  family: IpFamily;
  protocol: 'all' | 'tcp' | 'udp' | 'icmp' | 'other';
  ports?: string;
  /** The blocks, at most 20 of them (MAX_LISTED_BLOCKS); `addresses_total` counts them all when there are more. */
  addresses: string[];
  addresses_total?: number;
  /** When the list is cut: the smallest block holding every address of the difference. */
  within?: string;
  except?: { block: string; holes: string[] };
  /** One packet of the difference: `10.1.0.1 tcp/8080`, `10.9.0.0 gre`, `10.1.0.1 icmp`. */
  example: string;
}

export interface Note {
  code: MigrateCode;
  /** What it is about (a rule, a name, a date); data, not a sentence. */
  subject?: string;
  /** For DROP_COMPLEMENT: how many Resources express the reach around the drop. */
  pieces?: number;
}

export interface DeviceResult {
  name: string;
  lastHandshake?: string | null;
  notes: Note[];
}

export interface UserResult {
  email: string;
  verdict: 'equal' | 'narrower' | 'wider';
  /** Group address (none: no reach to grant, or disabled). */
  group?: string;
  /** Packets 0.7.36 accepts that 1.x refuses (with firezone#12684's routing). */
  lost: DiffEntry[];
  /** Packets 1.x lets through that 0.7.36 drops. */
  gained: DiffEntry[];
  /** Packets clients without firezone#12684 refuse although newer ones let them through. */
  oldClients: DiffEntry[];
  notes: Note[];
  devices: DeviceResult[];
}

export interface Migration {
  options: MigrateOptions;
  scope: string[];
  actors: Actor1x[];
  groups: Group1x[];
  memberships: Membership1x[];
  resources: ResourceOut[];
  policies: Policy1x[];
  users: UserResult[];
  account: Note[];
}
