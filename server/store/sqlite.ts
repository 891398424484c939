/**
 * The embedded SQLite store (better-sqlite3). Two connections to one file in WAL mode: a writer
 * used only inside `transaction` (BEGIN IMMEDIATE, one transaction at a time, or one batch of
 * them with group commit) and a reader for everything else, which therefore never sees a write
 * that has not committed.
 *
 * `synchronous = FULL`: in WAL mode NORMAL may lose the last commits on power loss, and the
 * contract says a crash loses no acknowledged write.
 */
import Database from 'better-sqlite3';
import { closeSync, existsSync, openSync } from 'node:fs';
import { resolve } from 'node:path';
import { overlapGroup, type IpFamily } from '../../src/model/index.js';
import { MissingDatabaseError } from './errors.js';
import { migrate } from './migrations.js';
import {
  addressKey,
  addressOfKey,
  DEVICE_COLUMNS,
  deviceAddressKey,
  emailKey,
  familyBits,
  FLAG_DEVICE_COLUMNS,
  JSON_DEVICE_COLUMNS,
  markKey,
  ruleDerivedColumns,
} from './rows.js';
import type {
  AppliedPlanRow,
  AllocationHint,
  DevicePatch,
  DeviceRow,
  RuleIntersectionQuery,
  RulePatch,
  RuleRow,
  Store,
  StoreWriter,
  SyncReads,
  TokenListing,
  TokenRow,
  TokenWithOwner,
  UserPatch,
  UserRow,
} from './types.js';

export interface SqliteStoreOptions {
  /** How long a connection waits for another process's write lock, in ms. */
  busyTimeoutMs?: number;
  now?: () => string;
  /** Called with every SQL statement run (bound values inlined); for diagnostics and tests. */
  verbose?: (sql: string) => void;
  /**
   * Create the database file when it does not exist (default true). When false, a missing file
   * is refused with MissingDatabaseError and nothing is created.
   */
  create?: boolean;
  /**
   * Commit the write transactions that queue up while one runs together, one fsync for all
   * (see SqliteStore.transaction). Default true; NETFORM_SQLITE_GROUP_COMMIT=0 turns it off
   * (for comparison in bench/server-throughput.mjs).
   */
  groupCommit?: boolean;
}

interface PendingTransaction {
  fn: (tx: StoreWriter) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** At most this many transactions share one commit, so that no answer waits behind too many others. */
const MAX_BATCH = 256;

/**
 * Makes sure the file exists before SQLite opens it, created empty with mode 0600: it holds
 * preshared keys and token hashes. SQLite gives the -wal and -shm files it creates the mode of
 * the database file, so they are 0600 too. Returns whether this call created the file.
 */
function prepareDatabaseFile(path: string, create: boolean): boolean {
  if (existsSync(path)) return false;
  if (!create) throw new MissingDatabaseError(resolve(path));
  try {
    closeSync(openSync(path, 'wx', 0o600));
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return false;
    throw error;
  }
}

const USER_COLUMNS =
  'id, email, role, password_hash, last_signed_in_at, last_signed_in_method, disabled_at, inserted_at, updated_at';
const RULE_COLUMNS = 'id, action, destination, port_type, port_range, user_id, inserted_at, updated_at';
/** The reads of one object by id, which most requests make: built once, not per call. */
const USER_BY_ID_SQL = `SELECT ${USER_COLUMNS} FROM users WHERE id = ?`;
const DEVICE_BY_ID_SQL = `SELECT ${DEVICE_COLUMNS} FROM devices WHERE id = ?`;
const RULE_BY_ID_SQL = `SELECT ${RULE_COLUMNS} FROM rules WHERE id = ?`;
const TOKEN_COLUMNS = 'id, user_id, token_hash, inserted_at, expires_at, revoked_at';
const TOKEN_COLUMN_NAMES = TOKEN_COLUMNS.split(', ');
const USER_COLUMN_NAMES = USER_COLUMNS.split(', ');
const TOKEN_WITH_OWNER_SQL =
  `SELECT ${TOKEN_COLUMN_NAMES.map((c) => `t.${c} AS t_${c}`).join(', ')}, ${USER_COLUMN_NAMES.map((c) => `u.${c} AS u_${c}`).join(', ')} ` +
  'FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?';

type SqlRow = Record<string, unknown>;

const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');
const DEVICE_COLUMN_NAMES = DEVICE_COLUMNS.split(', ');
/** How a device column is stored, in DEVICE_COLUMNS order: 0 as it is, 1 a flag (0/1), 2 a list (JSON). */
const DEVICE_COLUMN_KINDS = DEVICE_COLUMN_NAMES.map((n) =>
  FLAG_DEVICE_COLUMNS.has(n) ? 1 : JSON_DEVICE_COLUMNS.has(n) ? 2 : 0,
);
/**
 * The inserts of a create, written once with positional values: no statement text, column list
 * or object of named values is built per create (see deviceInsertValues, ruleInsertValues).
 */
const INSERT_DEVICE_SQL = `INSERT INTO devices (${DEVICE_COLUMNS}, ipv4_key, ipv6_key) VALUES (${placeholders(DEVICE_COLUMN_NAMES.length + 2)})`;
const INSERT_RULE_SQL =
  `INSERT INTO rules (${RULE_COLUMNS}, owner_key, family, start_key, end_key, port_group, port_low, port_high) ` +
  `VALUES (${placeholders(15)})`;

const keyOf = addressKey;
const valueOfKey = addressOfKey;

/**
 * A device from its column values in DEVICE_COLUMNS order. Devices are read as arrays (raw
 * mode): for a list of 60,000 that halves the read, against one object per row made by the driver.
 */
function toDevice(v: unknown[]): DeviceRow {
  return {
    id: v[0] as string,
    user_id: v[1] as string,
    name: v[2] as string,
    description: v[3] as string | null,
    public_key: v[4] as string,
    preshared_key: v[5] as string | null,
    ipv4: v[6] as string | null,
    ipv6: v[7] as string | null,
    allowed_ips: v[8] === null ? null : JSON.parse(v[8] as string),
    dns: v[9] === null ? null : JSON.parse(v[9] as string),
    endpoint: v[10] as string | null,
    mtu: v[11] as number | null,
    persistent_keepalive: v[12] as number | null,
    use_default_allowed_ips: v[13] === 1,
    use_default_dns: v[14] === 1,
    use_default_endpoint: v[15] === 1,
    use_default_mtu: v[16] === 1,
    use_default_persistent_keepalive: v[17] === 1,
    remote_ip: v[18] as string | null,
    latest_handshake: v[19] as string | null,
    rx_bytes: v[20] as number | null,
    tx_bytes: v[21] as number | null,
    inserted_at: v[22] as string,
    updated_at: v[23] as string,
  };
}

/** Column values of a device for SQL: booleans as 0/1, lists as JSON, addresses with their index keys. */
function deviceColumns(patch: DevicePatch): SqlRow {
  const columns: SqlRow = {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (FLAG_DEVICE_COLUMNS.has(key)) columns[key] = value ? 1 : 0;
    else if (JSON_DEVICE_COLUMNS.has(key)) columns[key] = value === null ? null : JSON.stringify(value);
    else columns[key] = value;
  }
  for (const family of [4, 6] as const) {
    const column = `ipv${family}` as const;
    if (column in columns) columns[`${column}_key`] = deviceAddressKey(family, columns[column] as string | null);
  }
  return columns;
}

/**
 * A whole device's values for INSERT_DEVICE_SQL, stored as deviceColumns stores them (a value
 * left undefined is stored as NULL, as a column left out of a named insert would be).
 */
function deviceInsertValues(row: DeviceRow): unknown[] {
  const count = DEVICE_COLUMN_NAMES.length;
  const values: unknown[] = new Array(count + 2);
  for (let i = 0; i < count; i++) {
    const value = (row as unknown as SqlRow)[DEVICE_COLUMN_NAMES[i]!];
    const kind = DEVICE_COLUMN_KINDS[i];
    if (value === undefined || value === null) values[i] = null;
    else if (kind === 1) values[i] = value ? 1 : 0;
    else if (kind === 2) values[i] = JSON.stringify(value);
    else values[i] = value;
  }
  values[count] = deviceAddressKey(4, row.ipv4 ?? null);
  values[count + 1] = deviceAddressKey(6, row.ipv6 ?? null);
  return values;
}

/** A rule's values for INSERT_RULE_SQL: its own columns, then the derived ones (see ruleColumns). */
function ruleInsertValues(rule: RuleRow): unknown[] {
  const derived = ruleDerivedColumns(rule);
  return [
    rule.id,
    rule.action,
    rule.destination,
    rule.port_type ?? null,
    rule.port_range ?? null,
    rule.user_id ?? null,
    rule.inserted_at,
    rule.updated_at,
    derived.owner_key,
    derived.family,
    derived.start_key,
    derived.end_key,
    derived.port_group,
    derived.has_ports ? derived.port_low : null,
    derived.has_ports ? derived.port_high : null,
  ];
}

/** A rule from its column values in RULE_COLUMNS order (rules read as arrays, see toDevice). */
function toRule(v: unknown[]): RuleRow {
  return {
    id: v[0] as string,
    action: v[1] as RuleRow['action'],
    destination: v[2] as string,
    port_type: v[3] as RuleRow['port_type'],
    port_range: v[4] as string | null,
    user_id: v[5] as string | null,
    inserted_at: v[6] as string,
    updated_at: v[7] as string,
  };
}

/** Column values of a rule for SQL, with the derived columns the overlap index needs. */
function ruleColumns(rule: RuleRow): SqlRow {
  const derived = ruleDerivedColumns(rule);
  return {
    ...rule,
    owner_key: derived.owner_key,
    family: derived.family,
    start_key: derived.start_key,
    end_key: derived.end_key,
    port_group: derived.port_group,
    port_low: derived.has_ports ? derived.port_low : null,
    port_high: derived.has_ports ? derived.port_high : null,
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Start addresses of every block of prefix 0..prefix that contains the block at `start`, each
 * once, lowest first (they only grow with the prefix).
 */
function enclosingStarts(family: IpFamily, start: bigint, prefix: number): string[] {
  const keys: string[] = [];
  if (family === 4) {
    // Within 32 bits: plain numbers, no BigInt per prefix.
    const value = Number(start);
    let last = -1;
    for (let p = 0; p <= prefix; p++) {
      const block = p === 0 ? 0 : value - (value % 2 ** (32 - p));
      if (block !== last) keys.push(keyOf(4, BigInt(block)));
      last = block;
    }
    return keys;
  }
  const bits = familyBits(family);
  let last: bigint | null = null;
  for (let p = 0; p <= prefix; p++) {
    const hostMask = (1n << BigInt(bits - p)) - 1n;
    const block = start & ~hostMask;
    if (block !== last) keys.push(keyOf(family, block));
    last = block;
  }
  return keys;
}

/** The group of rules that can overlap each other (the overlap index's leading columns). */
const RULE_GROUP = 'action = ? AND owner_key = ? AND family = ? AND port_group = ?';
/** The conditions a query adds to the group, by variant: 1 ports given, 2 a rule left out. */
const ruleQueryExtra = (variant: number): string =>
  (variant & 1 ? ' AND port_low <= ? AND port_high >= ?' : '') + (variant & 2 ? ' AND id <> ?' : '');
/**
 * A LIMIT written into the statement's text: bound as a parameter, it made each run of these
 * statements three times slower here (SQLite 3.4x, better-sqlite3); a count our own code chose.
 */
function limitClause(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`store: limit ${limit} is not a count`);
  return ` LIMIT ${limit}`;
}

/** The addresses in use from an address on (see listAddressesInUse), by family and limit. */
const ADDRESSES_IN_USE_SQL = new Map<string, string>();

/** Statement texts built once, by what varies in them (see rulesInsideSql, rulesEnclosingSql). */
const RULE_QUERY_SQL = new Map<string, string>();

/** Rules starting inside a block: the group's, then start_key from and to. */
function rulesInsideSql(variant: number, limit: number): string {
  const key = `i${variant} ${limit}`;
  let sql = RULE_QUERY_SQL.get(key);
  if (sql === undefined) {
    sql = `SELECT ${RULE_COLUMNS} FROM rules WHERE ${RULE_GROUP} AND start_key >= ? AND start_key <= ?${ruleQueryExtra(variant)} ORDER BY start_key${limitClause(limit)}`;
    RULE_QUERY_SQL.set(key, sql);
  }
  return sql;
}

/** Rules starting at one of `count` given starts and ending at or after a key. */
function rulesEnclosingSql(variant: number, count: number, limit: number): string {
  const key = `e${variant} ${count} ${limit}`;
  let sql = RULE_QUERY_SQL.get(key);
  if (sql === undefined) {
    sql = `SELECT ${RULE_COLUMNS} FROM rules WHERE ${RULE_GROUP} AND start_key IN (${placeholders(count)}) AND end_key >= ?${ruleQueryExtra(variant)}${limitClause(limit)}`;
    RULE_QUERY_SQL.set(key, sql);
  }
  return sql;
}

const MAX_KEPT_TOKENS = 1000;
/** The tables whose rows a write transaction keeps once read (tokens, their owners, settings). */
const KEPT_TABLES = /\b(users|api_tokens|settings)\b/i;
const MAX_KEPT_ROWS = 1000;

class SqliteQueries implements StoreWriter {
  readonly #statements = new Map<string, Database.Statement>();
  /** Statements that return rows as arrays of column values (see toDevice). */
  readonly #rawStatements = new Map<string, Database.Statement>();
  /** Settings as last read, and the connection's data_version then (see getSettings). */
  #settings: { version: unknown; values: Record<string, unknown> } | null = null;
  /** Tokens found, by hash, with the connection's data_version then (see findTokenByHash). */
  readonly #tokens = new Map<string, { version: unknown; found: TokenWithOwner }>();
  /** Devices and rules read by id on the reader, with the data_version they were read at (see #keptRow). */
  #rows: { version: unknown; byKey: Map<string, unknown> } = { version: undefined, byKey: new Map() };
  /**
   * On the writer, during one write transaction (a batch: see SqliteStore.transaction): tokens
   * with their owners and the settings as read in it, by key, until a statement of the
   * transaction writes to their tables (see #run); and the allocation hints, as read or as last
   * set (setAllocationHint, their only writer). Another process cannot commit while the
   * transaction holds the write lock, so what it read stays true until it writes there itself.
   * `null` outside a transaction.
   */
  #inTransaction: Map<string, unknown> | null = null;
  /** Whether a statement writes to a table whose rows #inTransaction keeps, by its SQL. */
  readonly #writesKept = new Map<string, boolean>();
  /** PRAGMA data_version as read in this turn of the event loop (see #dataVersion); `undefined`: not read yet. */
  #turnVersion: unknown = undefined;
  readonly #endTurn = (): void => {
    this.#turnVersion = undefined;
  };
  readonly #endTurnAfterPromises = (): void => {
    process.nextTick(this.#endTurn);
  };

  /**
   * `cacheSettings` only on a connection that never writes: SQLite's data_version changes when
   * any other connection (the writer, another process) commits, but not for its own writes.
   */
  constructor(
    readonly db: Database.Database,
    private readonly cacheSettings = false,
  ) {
    this.syncReads = cacheSettings
      ? {
          findTokenByHash: (tokenHash) => this.#tokenByHash(tokenHash),
          getDevice: (id) => this.#deviceById(id),
          getRule: (id) => this.#ruleById(id),
          getSettings: () => this.#settingsNow(),
        }
      : null;
  }

  /**
   * The reader's lookups of a GET, at once (see SyncReads): only on a reader that keeps what it
   * reads (never on the writer, nor on an in-memory database read and written by one connection).
   */
  readonly syncReads: SyncReads | null;

  #statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #all(sql: string, ...params: unknown[]): SqlRow[] {
    return this.#statement(sql).all(...params) as SqlRow[];
  }

  #get(sql: string, ...params: unknown[]): SqlRow | undefined {
    return this.#statement(sql).get(...params) as SqlRow | undefined;
  }

  /** Rows as arrays of column values (see toDevice). */
  #allRaw(sql: string, ...params: unknown[]): unknown[][] {
    return this.#rawStatement(sql).all(...params) as unknown[][];
  }

  #getRaw(sql: string, ...params: unknown[]): unknown[] | undefined {
    return this.#rawStatement(sql).get(...params) as unknown[] | undefined;
  }

  /** Keyed by the SQL text alone, a constant whose hash V8 keeps: no key is built per call. */
  #rawStatement(sql: string): Database.Statement {
    let statement = this.#rawStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql).raw(true);
      this.#rawStatements.set(sql, statement);
    }
    return statement;
  }

  #run(sql: string, ...params: unknown[]): Database.RunResult {
    if (this.#inTransaction !== null && this.#inTransaction.size > 0) {
      let writesKept = this.#writesKept.get(sql);
      if (writesKept === undefined) this.#writesKept.set(sql, (writesKept = KEPT_TABLES.test(sql)));
      if (writesKept) this.#inTransaction.clear();
    }
    return this.#statement(sql).run(...params);
  }

  /**
   * A write transaction begins (true: also after a savepoint rolled back, which may undo what
   * was kept) or ends (false) on this connection: see #inTransaction. For SqliteStore only.
   */
  keepInTransaction(keep: boolean): void {
    this.#inTransaction = keep ? new Map() : null;
  }

  /** What `read` returns, kept under `key` for the rest of the write transaction (see #inTransaction). */
  #keptInTransaction<T>(key: string, read: () => T): T {
    const kept = this.#inTransaction;
    if (kept === null) return read();
    if (kept.has(key)) return kept.get(key) as T;
    const value = read();
    kept.set(key, value);
    return value;
  }

  #insert(table: string, columns: SqlRow): void {
    const names = Object.keys(columns);
    this.#run(`INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`, columns);
  }

  #update(table: string, id: string, columns: SqlRow): void {
    const names = Object.keys(columns);
    if (names.length === 0) return;
    this.#run(`UPDATE ${table} SET ${names.map((n) => `${n} = @${n}`).join(', ')} WHERE id = @id`, { ...columns, id });
  }

  // Users

  async listUsers(): Promise<UserRow[]> {
    // Raw rows turned into objects here: about twice as fast as the driver's objects on big lists.
    return this.#allRaw(`SELECT ${USER_COLUMNS} FROM users ORDER BY inserted_at, id`).map((v) => ({
      id: v[0] as string,
      email: v[1] as string,
      role: v[2] as UserRow['role'],
      password_hash: v[3] as string | null,
      last_signed_in_at: v[4] as string | null,
      last_signed_in_method: v[5] as string | null,
      disabled_at: v[6] as string | null,
      inserted_at: v[7] as string,
      updated_at: v[8] as string,
    }));
  }

  async getUser(id: string): Promise<UserRow | null> {
    return (this.#get(USER_BY_ID_SQL, id) as unknown as UserRow | undefined) ?? null;
  }

  async findUserByEmail(email: string): Promise<UserRow | null> {
    const row = this.#get(`SELECT ${USER_COLUMNS} FROM users WHERE email_key = ?`, emailKey(email));
    return (row as unknown as UserRow | undefined) ?? null;
  }

  async countActiveAdmins(exceptId?: string): Promise<number> {
    const row = this.#get(
      "SELECT COUNT(*) AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL AND id <> ?",
      exceptId ?? '',
    ) as { n: number };
    return row.n;
  }

  async insertUser(row: UserRow): Promise<void> {
    this.#insert('users', { ...row, email_key: emailKey(row.email) });
  }

  async updateUser(id: string, patch: UserPatch): Promise<void> {
    const columns: SqlRow = { ...patch };
    if (patch.email !== undefined) columns.email_key = emailKey(patch.email);
    this.#update('users', id, columns);
  }

  async deleteUser(id: string): Promise<void> {
    this.#run('DELETE FROM users WHERE id = ?', id);
  }

  // Devices

  async listDevices(): Promise<DeviceRow[]> {
    return this.#allRaw(`SELECT ${DEVICE_COLUMNS} FROM devices ORDER BY inserted_at, id`).map(toDevice);
  }

  async getDevice(id: string): Promise<DeviceRow | null> {
    return this.#deviceById(id);
  }

  #deviceById(id: string): DeviceRow | null {
    return this.#keptRow(`d${id}`, () => {
      const row = this.#getRaw(DEVICE_BY_ID_SQL, id);
      return row ? toDevice(row) : null;
    });
  }

  async countDevicesOfUser(userId: string): Promise<number> {
    return (this.#get('SELECT COUNT(*) AS n FROM devices WHERE user_id = ?', userId) as { n: number }).n;
  }

  async findDeviceByName(userId: string, name: string): Promise<DeviceRow | null> {
    const row = this.#getRaw(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE user_id = ? AND name = ?`, userId, name);
    return row ? toDevice(row) : null;
  }

  async findDeviceByPublicKey(publicKey: string): Promise<DeviceRow | null> {
    const row = this.#getRaw(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE public_key = ?`, publicKey);
    return row ? toDevice(row) : null;
  }

  async findDeviceByAddress(family: IpFamily, address: bigint): Promise<DeviceRow | null> {
    const row = this.#getRaw(
      `SELECT ${DEVICE_COLUMNS} FROM devices WHERE ipv${family}_key = ?`,
      keyOf(family, address),
    );
    return row ? toDevice(row) : null;
  }

  async listAddressesInUse(family: IpFamily, from: bigint, to: bigint, limit: number): Promise<bigint[]> {
    const key = `${family} ${limit}`;
    let sql = ADDRESSES_IN_USE_SQL.get(key);
    if (sql === undefined) {
      const column = `ipv${family}_key`;
      sql = `SELECT ${column} FROM devices WHERE ${column} >= ? AND ${column} <= ? ORDER BY ${column}${limitClause(limit)}`;
      ADDRESSES_IN_USE_SQL.set(key, sql);
    }
    const rows = this.#allRaw(sql, keyOf(family, from), keyOf(family, to));
    return rows.map((r) => valueOfKey(r[0] as string));
  }

  async insertDevice(row: DeviceRow): Promise<void> {
    this.#run(INSERT_DEVICE_SQL, ...deviceInsertValues(row));
  }

  async updateDevice(id: string, patch: DevicePatch): Promise<void> {
    this.#update('devices', id, deviceColumns(patch));
  }

  async deleteDevice(id: string): Promise<void> {
    this.#run('DELETE FROM devices WHERE id = ?', id);
  }

  async deleteDevicesOfUser(userId: string): Promise<DeviceRow[]> {
    const rows = this.#allRaw(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE user_id = ?`, userId).map(toDevice);
    this.#run('DELETE FROM devices WHERE user_id = ?', userId);
    return rows;
  }

  // Rules

  async listRules(): Promise<RuleRow[]> {
    return this.#allRaw(`SELECT ${RULE_COLUMNS} FROM rules ORDER BY inserted_at, id`).map(toRule);
  }

  async getRule(id: string): Promise<RuleRow | null> {
    return this.#ruleById(id);
  }

  #ruleById(id: string): RuleRow | null {
    return this.#keptRow(`r${id}`, () => (this.#get(RULE_BY_ID_SQL, id) as unknown as RuleRow | undefined) ?? null);
  }

  async findIntersectingRules(query: RuleIntersectionQuery): Promise<RuleRow[]> {
    const { action, owner, family, ports } = overlapGroup({
      action: query.action,
      owner: query.userId,
      destination: { family: query.family },
      port_type: query.portType,
      ports: query.ports,
    });
    const startKey = keyOf(query.family, query.start);
    const params: unknown[] = [action, owner, family, ports, startKey, keyOf(query.family, query.end)];
    if (query.ports !== null) params.push(query.ports.high, query.ports.low);
    if (query.excludeId !== undefined) params.push(query.excludeId);
    const variant = (query.ports !== null ? 1 : 0) + (query.excludeId !== undefined ? 2 : 0);
    // Blocks that start inside the queried block (so lie inside it, CIDR blocks being nested or disjoint)...
    const inside = this.#allRaw(rulesInsideSql(variant, query.limit), ...params).map(toRule);
    if (inside.length >= query.limit) return inside;
    // ...and blocks that contain it, which can only start at one of its enclosing blocks' starts.
    // (Asked for up to the whole limit, one text for every count of rules found inside; the
    // first of them fill it up.)
    const starts = enclosingStarts(query.family, query.start, query.prefix);
    const enclosing = this.#allRaw(
      rulesEnclosingSql(variant, starts.length, query.limit),
      action,
      owner,
      family,
      ports,
      ...starts,
      startKey,
      ...params.slice(6),
    );
    if (enclosing.length > query.limit - inside.length) enclosing.length = query.limit - inside.length;
    if (enclosing.length === 0) return inside;
    const seen = new Set(inside.map((r) => r.id));
    for (const v of enclosing) if (!seen.has(v[0] as string)) inside.push(toRule(v));
    return inside;
  }

  async insertRule(row: RuleRow): Promise<void> {
    this.#run(INSERT_RULE_SQL, ...ruleInsertValues(row));
  }

  async updateRule(id: string, patch: RulePatch): Promise<void> {
    const current = await this.getRule(id);
    if (!current) return;
    const { id: _id, inserted_at: _inserted, ...columns } = ruleColumns({ ...current, ...patch });
    this.#update('rules', id, columns);
  }

  async deleteRule(id: string): Promise<void> {
    this.#run('DELETE FROM rules WHERE id = ?', id);
  }

  async deleteRulesOfUser(userId: string): Promise<number> {
    return this.#run('DELETE FROM rules WHERE user_id = ?', userId).changes;
  }

  // API tokens

  /**
   * One statement for the token and its owner: it runs on every request. On the reader connection
   * a token found is kept until PRAGMA data_version says something committed since, as the
   * settings are (getSettings): a revocation, an expiry change, the owner demoted, disabled or
   * deleted, by this process or any other, is seen by the very next request. Shared, so frozen.
   */
  async findTokenByHash(tokenHash: string): Promise<TokenWithOwner | null> {
    return this.#tokenByHash(tokenHash);
  }

  #tokenByHash(tokenHash: string): TokenWithOwner | null {
    const version = this.cacheSettings ? this.#dataVersion() : undefined;
    if (this.cacheSettings) {
      const kept = this.#tokens.get(tokenHash);
      if (kept && kept.version === version) return kept.found;
    }
    // Column values in the statement's order: no column name is built per call (a write
    // transaction reads its token this way on every write, see services/context.ts).
    const found = this.#keptInTransaction(`t${tokenHash}`, () => this.#readToken(tokenHash));
    if (this.cacheSettings && found) {
      // Bounded: tokens in use are few; a flood of distinct ones only starts the table afresh.
      if (this.#tokens.size >= MAX_KEPT_TOKENS) this.#tokens.clear();
      this.#tokens.set(tokenHash, { version, found: deepFreeze(found) });
    }
    return found;
  }

  #readToken(tokenHash: string): TokenWithOwner | null {
    const row = this.#getRaw(TOKEN_WITH_OWNER_SQL, tokenHash);
    if (!row) return null;
    const token: SqlRow = {};
    const owner: SqlRow = {};
    const tokenColumns = TOKEN_COLUMN_NAMES.length;
    for (let i = 0; i < tokenColumns; i++) token[TOKEN_COLUMN_NAMES[i]!] = row[i];
    for (let i = 0; i < USER_COLUMN_NAMES.length; i++) owner[USER_COLUMN_NAMES[i]!] = row[tokenColumns + i];
    return { token: token as unknown as TokenRow, owner: owner as unknown as UserRow };
  }

  /**
   * The reader's PRAGMA data_version, read once per turn of the event loop: the first lookup of
   * a turn reads it, and it is forgotten once the turn's callback and its promise chain have run.
   * After every callback Node runs the tick queue, then the promise jobs, again and again until
   * both are empty, before the next socket's data or timer. So a tick queued from a promise job
   * runs once the promise jobs of the turn are done (a tick queued at once would run before
   * them: before the handler of the request whose authentication read the version). A GET's token, settings and row lookups run in the turn its request was read in,
   * so they share one read instead of three (bench/RESULTS.md, "GET of one object"). Every request of a turn
   * had reached this process before the turn began, so a commit another process acknowledged
   * before a request was sent is seen by it; this process's own commits forget it too
   * (forgetDataVersion, after each COMMIT).
   */
  #dataVersion(): unknown {
    if (this.#turnVersion !== undefined) return this.#turnVersion;
    const version = this.#statement('PRAGMA data_version').pluck().get();
    this.#turnVersion = version;
    queueMicrotask(this.#endTurnAfterPromises);
    return version;
  }

  /**
   * A row by id, kept on the reader connection until PRAGMA data_version says something committed
   * since, as tokens and settings are: a write by this process's writer or by any other process
   * is seen by the next request, and a GET needs no read of its row while nothing changed. On the
   * writer (which never caches) the row is read every time. Shared, so frozen.
   */
  #keptRow<T>(key: string, read: () => T | null): T | null {
    if (!this.cacheSettings) return read();
    const version = this.#dataVersion();
    if (this.#rows.version !== version) this.#rows = { version, byKey: new Map() };
    const kept = this.#rows.byKey;
    if (kept.has(key)) return kept.get(key) as T | null;
    const row = read();
    // Bounded: a walk over many ids only starts the table afresh.
    if (kept.size >= MAX_KEPT_ROWS) kept.clear();
    kept.set(key, row === null ? null : deepFreeze(row));
    return row;
  }

  /** Forgets the data_version of this turn: a commit of this process's writer follows. */
  protected forgetDataVersion(): void {
    this.#turnVersion = undefined;
  }

  async getToken(id: string): Promise<TokenRow | null> {
    return (this.#get(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE id = ?`, id) as TokenRow | undefined) ?? null;
  }

  async listTokens(): Promise<TokenListing[]> {
    return this.#all(
      `SELECT ${TOKEN_COLUMNS.split(', ')
        .map((c) => `t.${c}`)
        .join(', ')}, u.email AS email
       FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.inserted_at, t.id`,
    ) as unknown as TokenListing[];
  }

  async countLiveTokens(userId: string, now: string): Promise<number> {
    const row = this.#get(
      'SELECT COUNT(*) AS n FROM api_tokens WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?',
      userId,
      now,
    ) as { n: number };
    return row.n;
  }

  async insertToken(row: TokenRow): Promise<void> {
    this.#insert('api_tokens', { ...row });
  }

  async revokeToken(id: string, at: string): Promise<void> {
    this.#run('UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', at, id);
  }

  async revokeTokensOfUser(userId: string, at: string): Promise<number> {
    return this.#run('UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL', at, userId)
      .changes;
  }

  async deleteTokensOfUser(userId: string): Promise<number> {
    return this.#run('DELETE FROM api_tokens WHERE user_id = ?', userId).changes;
  }

  // Settings and allocation hints

  /**
   * Read on every device request. On the reader connection the parsed settings are kept until
   * PRAGMA data_version says something committed since (a change by `server defaults set` in
   * another process included), so they are never stale; the values are frozen, being shared.
   */
  async getSettings(): Promise<Record<string, unknown>> {
    return this.#settingsNow();
  }

  #settingsNow(): Record<string, unknown> {
    const version = this.cacheSettings ? this.#dataVersion() : undefined;
    if (this.#settings && this.cacheSettings && this.#settings.version === version) return this.#settings.values;
    const settings = this.#keptInTransaction('settings', () => this.#readSettings());
    if (this.cacheSettings) this.#settings = { version, values: settings };
    return settings;
  }

  /** Frozen, being shared (between requests on the reader, within a transaction on the writer). */
  #readSettings(): Record<string, unknown> {
    const settings: Record<string, unknown> = {};
    for (const row of this.#all('SELECT key, value FROM settings'))
      settings[row.key as string] = deepFreeze(JSON.parse(row.value as string));
    return Object.freeze(settings);
  }

  async findAppliedPlan(seal: string): Promise<AppliedPlanRow | null> {
    return (
      (this.#get('SELECT seal, claim, applied_at FROM applied_plans WHERE seal = ?', seal) as
        AppliedPlanRow | undefined) ?? null
    );
  }

  async listAppliedPlans(): Promise<AppliedPlanRow[]> {
    return this.#all(
      'SELECT seal, claim, applied_at FROM applied_plans ORDER BY applied_at, seal',
    ) as unknown as AppliedPlanRow[];
  }

  async insertAppliedPlan(row: AppliedPlanRow): Promise<void> {
    this.#run(
      'INSERT INTO applied_plans (seal, claim, applied_at) VALUES (?, ?, ?)',
      row.seal,
      row.claim,
      row.applied_at,
    );
  }

  async countObjects(): Promise<{ users: number; devices: number; rules: number }> {
    const sql =
      'SELECT (SELECT COUNT(*) FROM users) AS users, (SELECT COUNT(*) FROM devices) AS devices, (SELECT COUNT(*) FROM rules) AS rules';
    return this.#get(sql) as { users: number; devices: number; rules: number };
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    this.#run(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      key,
      JSON.stringify(value),
    );
  }

  /** Kept for the rest of a write transaction once read, and as set (see setAllocationHint). */
  async getAllocationHint(family: IpFamily): Promise<AllocationHint | null> {
    return this.#keptInTransaction(family === 4 ? 'h4' : 'h6', () => {
      const row = this.#get('SELECT network, next_key FROM allocation_hints WHERE family = ?', family);
      return row ? { network: row.network as string, next: valueOfKey(row.next_key as string) } : null;
    });
  }

  async lowestFreeAddress(family: IpFamily, from: bigint, to: bigint): Promise<bigint | null> {
    const row = this.#get(
      'SELECT address_key FROM free_addresses WHERE family = ? AND address_key >= ? AND address_key <= ? ORDER BY address_key LIMIT 1',
      family,
      keyOf(family, from),
      keyOf(family, to),
    );
    return row ? valueOfKey(row.address_key as string) : null;
  }

  async addFreeAddress(family: IpFamily, address: bigint): Promise<void> {
    this.#run(
      'INSERT OR IGNORE INTO free_addresses (family, address_key) VALUES (?, ?)',
      family,
      keyOf(family, address),
    );
  }

  async removeFreeAddress(family: IpFamily, address: bigint): Promise<void> {
    this.#run('DELETE FROM free_addresses WHERE family = ? AND address_key = ?', family, keyOf(family, address));
  }

  async clearFreeAddresses(family: IpFamily): Promise<void> {
    this.#run('DELETE FROM free_addresses WHERE family = ?', family);
  }

  async setAllocationHint(family: IpFamily, hint: AllocationHint | null): Promise<void> {
    const keptKey = family === 4 ? 'h4' : 'h6';
    if (hint === null) {
      this.#run('DELETE FROM allocation_hints WHERE family = ?', family);
      this.#inTransaction?.set(keptKey, null);
      return;
    }
    const nextKey = markKey(family, hint.next);
    this.#run(
      `INSERT INTO allocation_hints (family, network, next_key) VALUES (?, ?, ?)
       ON CONFLICT (family) DO UPDATE SET network = excluded.network, next_key = excluded.next_key`,
      family,
      hint.network,
      nextKey,
    );
    // What getAllocationHint would read back now (the mark clamped as stored).
    this.#inTransaction?.set(keptKey, { network: hint.network, next: valueOfKey(nextKey) });
  }
}

function openConnection(path: string, busyTimeoutMs: number, verbose?: (sql: string) => void): Database.Database {
  const db = new Database(path, {
    timeout: busyTimeoutMs,
    verbose: verbose as ((message?: unknown) => void) | undefined,
  });
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = FULL');
  return db;
}

export class SqliteStore extends SqliteQueries implements Store {
  readonly #writer: SqliteQueries;
  readonly #writerDb: Database.Database;
  readonly #readerDb: Database.Database;
  readonly #groupCommit: boolean;
  /** BEGIN IMMEDIATE, SAVEPOINT, RELEASE, ROLLBACK TO and COMMIT, prepared once: a batch runs them per member. */
  readonly #control: Record<'begin' | 'savepoint' | 'release' | 'rollbackTo' | 'commit', Database.Statement>;
  readonly #pending: PendingTransaction[] = [];
  #running: Promise<void> | null = null;
  #scheduled = false;
  #closed = false;
  /** Whether opening this store created its database file. */
  created = false;

  private constructor(readerDb: Database.Database, writerDb: Database.Database, groupCommit: boolean) {
    super(readerDb, readerDb !== writerDb);
    this.#groupCommit = groupCommit;
    this.#readerDb = readerDb;
    this.#writerDb = writerDb;
    this.#writer = readerDb === writerDb ? this : new SqliteQueries(writerDb);
    this.#control = {
      begin: writerDb.prepare('BEGIN IMMEDIATE'),
      savepoint: writerDb.prepare('SAVEPOINT member'),
      release: writerDb.prepare('RELEASE member'),
      rollbackTo: writerDb.prepare('ROLLBACK TO member'),
      commit: writerDb.prepare('COMMIT'),
    };
  }

  /** Opens (creating and migrating when needed) the database file at `path`. */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteStore {
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const inMemory = path === ':memory:' || path === '';
    const created = !inMemory && prepareDatabaseFile(path, options.create ?? true);
    const writerDb = openConnection(path, busyTimeoutMs, options.verbose);
    try {
      migrate(writerDb, options.now ?? (() => new Date().toISOString()));
      // An in-memory database is private to its connection: read and write through the same one.
      const groupCommit = options.groupCommit ?? process.env.NETFORM_SQLITE_GROUP_COMMIT !== '0';
      if (inMemory) return new SqliteStore(writerDb, writerDb, groupCommit);
      const readerDb = openConnection(path, busyTimeoutMs, options.verbose);
      readerDb.pragma('query_only = ON');
      const store = new SqliteStore(readerDb, writerDb, groupCommit);
      store.created = created;
      return store;
    } catch (error) {
      writerDb.close();
      throw error;
    }
  }

  /**
   * Runs `fn` in a write transaction. With group commit (the default), the transactions asked for
   * while the writer was busy run together in one BEGIN IMMEDIATE ... COMMIT, one after another,
   * each inside its own SAVEPOINT:
   * - each one's checks see every write before it (committed, or earlier in the same batch);
   * - one that fails is rolled back to its savepoint alone; the others go on;
   * - every one is answered (result or refusal) only after the COMMIT, so an acknowledged write
   *   is durable (synchronous = FULL): one fsync serves the whole batch instead of one each.
   * If the COMMIT fails, or SQLite rolls the whole transaction back (disk full, I/O error), the
   * members that had run get that error: none of them was acknowledged, and none was kept.
   */
  transaction<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({
        fn: fn as (tx: StoreWriter) => Promise<unknown>,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#schedule();
    });
  }

  /** The next batch starts once the current one is done, after the I/O of this turn of the event loop has queued its requests. */
  #schedule(): void {
    if (this.#running || this.#scheduled || this.#pending.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#running = this.#runBatch().finally(() => {
        this.#running = null;
        this.#schedule();
      });
    });
  }

  async #runBatch(): Promise<void> {
    const db = this.#writerDb;
    const batch = this.#pending.splice(0, this.#groupCommit ? MAX_BATCH : 1);
    try {
      this.#control.begin.run();
    } catch (error) {
      for (const member of batch) member.reject(error);
      return;
    }
    this.#writer.keepInTransaction(true);
    try {
      await this.#runMembers(db, batch);
    } finally {
      this.#writer.keepInTransaction(false);
    }
  }

  async #runMembers(db: Database.Database, batch: PendingTransaction[]): Promise<void> {
    const control = this.#control;
    const outcomes: { member: PendingTransaction; ok: boolean; value: unknown }[] = [];
    for (let i = 0; i < batch.length; i++) {
      const member = batch[i]!;
      control.savepoint.run();
      try {
        const value = await member.fn(this.#writer);
        control.release.run();
        outcomes.push({ member, ok: true, value });
      } catch (error) {
        // What the member read after its own writes may be undone now.
        this.#writer.keepInTransaction(true);
        if (db.inTransaction) {
          control.rollbackTo.run();
          control.release.run();
          outcomes.push({ member, ok: false, value: error });
          continue;
        }
        // SQLite rolled the whole transaction back: what ran before is gone with it. The rest
        // go back to the front of the queue for the next batch.
        for (const done of outcomes) done.member.reject(error);
        member.reject(error);
        this.#pending.unshift(...batch.slice(i + 1));
        return;
      }
    }
    try {
      control.commit.run();
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      this.forgetDataVersion();
      for (const done of outcomes) done.member.reject(error);
      return;
    }
    // What the reader read earlier in this turn predates the commit.
    this.forgetDataVersion();
    for (const done of outcomes) (done.ok ? done.member.resolve : done.member.reject)(done.value);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Transactions already asked for still run and are answered.
    while (this.#running || this.#pending.length > 0) {
      if (!this.#running) this.#schedule();
      await (this.#running ?? new Promise((resolve) => setImmediate(resolve)));
    }
    if (this.#readerDb !== this.#writerDb) this.#readerDb.close();
    // Folds the WAL back into the main file so a copied .db file is complete on its own.
    try {
      this.#writerDb.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // Another process still reading: the WAL stays, which SQLite handles on next open.
    }
    this.#writerDb.close();
  }
}
