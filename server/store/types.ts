/**
 * The storage boundary of the server. A Store keeps and finds rows; it decides nothing (the
 * services do). Methods are async-shaped so that a PostgreSQL implementation can follow the same
 * interface; the SQLite one answers synchronously underneath.
 *
 * Reads on the Store itself see committed data only, and nothing is kept past a commit: with
 * several server processes on one PostgreSQL database, a committed write is seen by the next read
 * on any of them. (PostgreSQL keeps nothing between reads. SQLite's reader connection keeps the
 * settings, tokens found by hash, and devices and rules read by id, each only while PRAGMA
 * data_version shows no commit since, by this process or another: server/store/sqlite.ts.)
 * Every write goes through `transaction`, which runs one writer at a time: a check made inside it
 * (uniqueness, overlap, the last admin, a free address) still holds when its write lands.
 */
import type {
  ApiDevice,
  ApiRule,
  ApiUser,
  IpFamily,
  PortType,
  RuleAction,
  StoredDeviceField,
} from '../../src/model/index.js';

/** A user as stored: the API's user plus the password hash, which never leaves the server. */
export interface UserRow extends ApiUser {
  /** scrypt hash. */
  password_hash: string | null;
}

/**
 * A device as stored: the API's device without `server_public_key` (the server's own key, the
 * same on every device), as the device-field table says. Addresses are text as the client gave
 * it (canonical when the server chose them), indexed and compared by value through the
 * `ipv<n>_key` columns; a defaultable field holds the stored value, not the effective one the API
 * shows while the field's default flag is on.
 */
export type DeviceRow = Pick<ApiDevice, StoredDeviceField>;

/**
 * A rule as stored: the API's rule (destination as given), except that port_range is always
 * `"lo - hi"`, also for a single port (`"443 - 443"`; the API answers that one as `"443"`).
 */
export type RuleRow = ApiRule;

export interface TokenRow {
  id: string;
  user_id: string;
  /** Hex SHA-256 of the token text; the token itself is never stored. */
  token_hash: string;
  inserted_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface TokenWithOwner {
  token: TokenRow;
  owner: UserRow;
}

/**
 * A saved plan applied through this server (`POST /netform/applied-plans`): its seal, when, and
 * the random claim id of the apply that recorded it (a retry of that same claim is not a replay).
 */
export interface AppliedPlanRow {
  seal: string;
  claim: string;
  applied_at: string;
}

export interface TokenListing extends TokenRow {
  email: string;
}

/**
 * Rules whose destination block intersects [start, end] in the same group (action, binding,
 * family, port type or none) and, when `ports` is given, whose port range intersects it.
 * Destinations are CIDR blocks, which either nest or are disjoint, so the store finds them
 * through an index: blocks starting inside [start, end], plus the at most 129 blocks that could
 * contain it. The service confirms each candidate with the model's rulesOverlap.
 */
export interface RuleIntersectionQuery {
  action: RuleAction;
  userId: string | null;
  family: IpFamily;
  /** The block of the destination: first and last address, and its prefix length (SQLite's index needs it). */
  start: bigint;
  end: bigint;
  prefix: number;
  portType: PortType | null;
  ports: { low: number; high: number } | null;
  excludeId?: string;
  limit: number;
}

/**
 * The allocation mark of one family's tunnel network: every address of `network` below `next`
 * is either held by a device or listed among the free addresses.
 */
export interface AllocationHint {
  network: string;
  next: bigint;
}

export interface StoreReader {
  listUsers(): Promise<UserRow[]>;
  getUser(id: string): Promise<UserRow | null>;
  /** Case-insensitive. */
  findUserByEmail(email: string): Promise<UserRow | null>;
  /** Admins that are not disabled, other than `exceptId`. */
  countActiveAdmins(exceptId?: string): Promise<number>;

  listDevices(): Promise<DeviceRow[]>;
  getDevice(id: string): Promise<DeviceRow | null>;
  countDevicesOfUser(userId: string): Promise<number>;
  findDeviceByName(userId: string, name: string): Promise<DeviceRow | null>;
  findDeviceByPublicKey(publicKey: string): Promise<DeviceRow | null>;
  findDeviceByAddress(family: IpFamily, address: bigint): Promise<DeviceRow | null>;
  /** Addresses in use in [from, to], ascending, at most `limit`. */
  listAddressesInUse(family: IpFamily, from: bigint, to: bigint, limit: number): Promise<bigint[]>;

  listRules(): Promise<RuleRow[]>;
  getRule(id: string): Promise<RuleRow | null>;
  findIntersectingRules(query: RuleIntersectionQuery): Promise<RuleRow[]>;

  findTokenByHash(tokenHash: string): Promise<TokenWithOwner | null>;
  getToken(id: string): Promise<TokenRow | null>;
  listTokens(): Promise<TokenListing[]>;
  /** Tokens of the user neither revoked nor expired at `now`. */
  countLiveTokens(userId: string, now: string): Promise<number>;

  /** Server settings, JSON values by key. */
  getSettings(): Promise<Record<string, unknown>>;

  /** The record of the saved plan with this seal, if one was applied here. */
  findAppliedPlan(seal: string): Promise<AppliedPlanRow | null>;
  /** Every record of an applied saved plan (for `server copy`). */
  listAppliedPlans(): Promise<AppliedPlanRow[]>;

  /** How many users, devices and rules there are (for metrics), counted by the database. */
  countObjects(): Promise<{ users: number; devices: number; rules: number }>;
  getAllocationHint(family: IpFamily): Promise<AllocationHint | null>;
  /** The lowest listed free address in [from, to], or null. */
  lowestFreeAddress(family: IpFamily, from: bigint, to: bigint): Promise<bigint | null>;
}

export type UserPatch = Partial<Omit<UserRow, 'id' | 'inserted_at'>>;
export type DevicePatch = Partial<Omit<DeviceRow, 'id' | 'inserted_at'>>;
export type RulePatch = Partial<Omit<RuleRow, 'id' | 'inserted_at'>>;

export interface StoreWriter extends StoreReader {
  insertUser(row: UserRow): Promise<void>;
  updateUser(id: string, patch: UserPatch): Promise<void>;
  deleteUser(id: string): Promise<void>;

  insertDevice(row: DeviceRow): Promise<void>;
  updateDevice(id: string, patch: DevicePatch): Promise<void>;
  deleteDevice(id: string): Promise<void>;
  /** Deletes the user's devices and returns them. */
  deleteDevicesOfUser(userId: string): Promise<DeviceRow[]>;

  insertRule(row: RuleRow): Promise<void>;
  updateRule(id: string, patch: RulePatch): Promise<void>;
  deleteRule(id: string): Promise<void>;
  deleteRulesOfUser(userId: string): Promise<number>;

  insertToken(row: TokenRow): Promise<void>;
  revokeToken(id: string, at: string): Promise<void>;
  /** Revokes every token of the user not yet revoked; returns how many. */
  revokeTokensOfUser(userId: string, at: string): Promise<number>;
  deleteTokensOfUser(userId: string): Promise<number>;

  setSetting(key: string, value: unknown): Promise<void>;
  insertAppliedPlan(row: AppliedPlanRow): Promise<void>;
  setAllocationHint(family: IpFamily, hint: AllocationHint | null): Promise<void>;
  addFreeAddress(family: IpFamily, address: bigint): Promise<void>;
  removeFreeAddress(family: IpFamily, address: bigint): Promise<void>;
  clearFreeAddresses(family: IpFamily): Promise<void>;
}

/**
 * The lookups of a GET by id, answered at once, by a store whose reads are synchronous (SQLite's
 * reader): the same results as the methods of the same names of StoreReader, kept (and frozen)
 * until anything commits, the one PRAGMA data_version a request included.
 */
export interface SyncReads {
  findTokenByHash(tokenHash: string): TokenWithOwner | null;
  getDevice(id: string): DeviceRow | null;
  getRule(id: string): RuleRow | null;
  getSettings(): Record<string, unknown>;
}

export interface Store extends StoreReader {
  /** The store's synchronous lookups, where it has them (see SyncReads); none on PostgreSQL. */
  readonly syncReads?: SyncReads | null;
  /**
   * Runs `fn` as one transaction: all of its writes land, or none. One at a time, across every
   * process on the database (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock). `fn` runs
   * exactly once: no store retries it, so it may generate ids and timestamps.
   */
  transaction<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
