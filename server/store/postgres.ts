/**
 * The PostgreSQL store (node-postgres), for one or several `netform serve` replicas on one
 * database. No replica caches anything: every read goes to the database, so a write one replica
 * acknowledged (committed) is seen by the next read on any other.
 *
 * Concurrency. The services check-then-write inside `transaction` (a free address, the last
 * admin, no overlap) and rely on the Store contract that transactions run one at a time. Across
 * replicas that is kept by a transaction-scoped advisory lock (`pg_advisory_xact_lock`, WRITE_LOCK)
 * taken first in every transaction, at READ COMMITTED: once the lock is held, every statement of
 * the transaction sees every transaction committed before it (READ COMMITTED takes a snapshot per
 * statement), and no other writer can commit until this one ends. So the last-admin guard and
 * address allocation are race-free across replicas without SERIALIZABLE's retries (the contract
 * runs `fn` once). Writes are serialised, as on SQLite; reads are not, and run on any pooled
 * connection. Independently of the lock, the schema's unique and exclusion constraints
 * (postgres-migrations.ts) refuse any write that would break an invariant, whoever makes it.
 */
import pg from 'pg';
import { formatAddress, type IpFamily } from '../../src/model/index.js';
import { redactLocation, StoreOpenError, StoreUnavailableError } from './errors.js';
import type { Migration } from './migrations.js';
import { migratePostgres, POSTGRES_MIGRATIONS } from './postgres-migrations.js';
import {
  addressKey,
  addressOfKey,
  DEVICE_COLUMNS,
  deviceAddressKey,
  emailKey,
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
  TokenListing,
  TokenRow,
  TokenWithOwner,
  UserPatch,
  UserRow,
} from './types.js';

/** Key of the advisory lock every write transaction holds ('netform' + 0x02 in ASCII). */
export const WRITE_LOCK = 0x6e6574666f726d02n;
/** How long a write waits for the write lock before failing (SQLite's busy timeout is the same). */
export const LOCK_TIMEOUT_MS = 5000;

export interface PostgresStoreOptions {
  now?: () => string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** For tests of the version check: the migrations this code knows. */
  migrations?: readonly Migration[];
}

const USER_COLUMNS =
  'id, email, role, password_hash, last_signed_in_at, last_signed_in_method, disabled_at, inserted_at, updated_at';
const RULE_COLUMNS = 'id, action, destination, port_type, port_range, user_id, inserted_at, updated_at';
const TOKEN_COLUMNS = 'id, user_id, token_hash, inserted_at, expires_at, revoked_at';
const BIGINT_DEVICE_COLUMNS = ['rx_bytes', 'tx_bytes'] as const;

type SqlRow = Record<string, unknown>;
type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Network errors and SQLSTATEs that say the database is away for now, with words for each. */
const UNAVAILABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection lost',
  EPIPE: 'connection lost',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not resolved',
  EAI_AGAIN: 'host name not resolved',
  '57P01': 'connection closed by the database (administrator command)',
  '57P02': 'connection closed by the database (crash shutdown)',
  '57P03': 'the database is starting up or shutting down',
  '53300': 'too many connections',
};

/**
 * The reason a failure means "the database is away", or null for any other failure. node-postgres
 * reports a lost connection by message only ("Connection terminated unexpectedly", "... is not
 * queryable", the pool's connection timeout); SQLSTATE class 08 is a connection exception.
 */
function unavailableReason(error: unknown): string | null {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code in UNAVAILABLE) return UNAVAILABLE[code]!;
    if (code.startsWith('08')) return 'connection failure';
  }
  const message = error instanceof Error ? error.message : '';
  if (/^Connection terminated|not queryable|timeout exceeded when trying to connect/i.test(message)) {
    return /timeout/i.test(message) ? 'no connection within 10 s' : 'connection lost';
  }
  return null;
}

/** `error` as a StoreUnavailableError when it means the database is away; otherwise `error` itself. */
function translated(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const reason = unavailableReason(error);
  return reason === null ? error : new StoreUnavailableError(`PostgreSQL unavailable: ${reason}`, { cause: error });
}

/** `db` whose failures say whether the database is away (see StoreUnavailableError). */
function translating(db: Queryable): Queryable {
  return {
    query: ((sql: string, params?: unknown[]) =>
      (db.query(sql, params) as Promise<pg.QueryResult>).catch((error: unknown) => {
        throw translated(error);
      })) as Queryable['query'],
  };
}

function toDevice(row: SqlRow): DeviceRow {
  const device = { ...row };
  for (const column of JSON_DEVICE_COLUMNS)
    device[column] = row[column] === null ? null : JSON.parse(row[column] as string);
  // int8 arrives as text (it may exceed 2^53); byte counters stay well inside.
  for (const column of BIGINT_DEVICE_COLUMNS) device[column] = row[column] === null ? null : Number(row[column]);
  return device as unknown as DeviceRow;
}

function deviceColumns(patch: DevicePatch): SqlRow {
  const columns: SqlRow = {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    columns[key] = JSON_DEVICE_COLUMNS.has(key) && value !== null ? JSON.stringify(value) : value;
  }
  for (const family of [4, 6] as const) {
    const column = `ipv${family}` as const;
    if (column in columns) columns[`${column}_key`] = deviceAddressKey(family, columns[column] as string | null);
  }
  return columns;
}

function ruleColumns(rule: RuleRow): SqlRow {
  const derived = ruleDerivedColumns(rule);
  return {
    ...rule,
    owner_key: derived.owner_key,
    family: derived.family,
    block: derived.network,
    port_group: derived.port_group,
    ports: `[${derived.port_low},${derived.port_high}]`,
  };
}

class PostgresQueries implements StoreWriter {
  readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = translating(db);
  }

  async #all(sql: string, params: unknown[] = []): Promise<SqlRow[]> {
    return (await this.db.query(sql, params)).rows as SqlRow[];
  }

  async #get(sql: string, params: unknown[] = []): Promise<SqlRow | undefined> {
    return (await this.db.query(sql, params)).rows[0] as SqlRow | undefined;
  }

  async #run(sql: string, params: unknown[] = []): Promise<number> {
    return (await this.db.query(sql, params)).rowCount ?? 0;
  }

  async #insert(table: string, columns: SqlRow): Promise<void> {
    const names = Object.keys(columns);
    await this.#run(
      `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
      Object.values(columns),
    );
  }

  async #update(table: string, id: string, columns: SqlRow): Promise<void> {
    const names = Object.keys(columns);
    if (names.length === 0) return;
    await this.#run(`UPDATE ${table} SET ${names.map((n, i) => `${n} = $${i + 2}`).join(', ')} WHERE id = $1`, [
      id,
      ...Object.values(columns),
    ]);
  }

  // Users

  async listUsers(): Promise<UserRow[]> {
    return (await this.#all(`SELECT ${USER_COLUMNS} FROM users ORDER BY inserted_at, id`)) as unknown as UserRow[];
  }

  async getUser(id: string): Promise<UserRow | null> {
    return (
      ((await this.#get(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id])) as unknown as UserRow | undefined) ??
      null
    );
  }

  async findUserByEmail(email: string): Promise<UserRow | null> {
    const row = await this.#get(`SELECT ${USER_COLUMNS} FROM users WHERE email_key = $1`, [emailKey(email)]);
    return (row as unknown as UserRow | undefined) ?? null;
  }

  async countActiveAdmins(exceptId?: string): Promise<number> {
    const row = await this.#get(
      "SELECT COUNT(*)::int AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL AND id <> $1",
      [exceptId ?? ''],
    );
    return row!.n as number;
  }

  async insertUser(row: UserRow): Promise<void> {
    await this.#insert('users', { ...row, email_key: emailKey(row.email) });
  }

  async updateUser(id: string, patch: UserPatch): Promise<void> {
    const columns: SqlRow = { ...patch };
    if (patch.email !== undefined) columns.email_key = emailKey(patch.email);
    await this.#update('users', id, columns);
  }

  async deleteUser(id: string): Promise<void> {
    await this.#run('DELETE FROM users WHERE id = $1', [id]);
  }

  // Devices

  async listDevices(): Promise<DeviceRow[]> {
    return (await this.#all(`SELECT ${DEVICE_COLUMNS} FROM devices ORDER BY inserted_at, id`)).map(toDevice);
  }

  async getDevice(id: string): Promise<DeviceRow | null> {
    const row = await this.#get(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE id = $1`, [id]);
    return row ? toDevice(row) : null;
  }

  async countDevicesOfUser(userId: string): Promise<number> {
    return (await this.#get('SELECT COUNT(*)::int AS n FROM devices WHERE user_id = $1', [userId]))!.n as number;
  }

  async findDeviceByName(userId: string, name: string): Promise<DeviceRow | null> {
    const row = await this.#get(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE user_id = $1 AND name = $2`, [
      userId,
      name,
    ]);
    return row ? toDevice(row) : null;
  }

  async findDeviceByPublicKey(publicKey: string): Promise<DeviceRow | null> {
    const row = await this.#get(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE public_key = $1`, [publicKey]);
    return row ? toDevice(row) : null;
  }

  async findDeviceByAddress(family: IpFamily, address: bigint): Promise<DeviceRow | null> {
    const row = await this.#get(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE ipv${family}_key = $1`, [
      addressKey(family, address),
    ]);
    return row ? toDevice(row) : null;
  }

  async listAddressesInUse(family: IpFamily, from: bigint, to: bigint, limit: number): Promise<bigint[]> {
    const column = `ipv${family}_key`;
    const rows = await this.#all(
      `SELECT ${column} AS k FROM devices WHERE ${column} >= $1 AND ${column} <= $2 ORDER BY ${column} LIMIT $3`,
      [addressKey(family, from), addressKey(family, to), limit],
    );
    return rows.map((r) => addressOfKey(r.k as string));
  }

  async insertDevice(row: DeviceRow): Promise<void> {
    await this.#insert('devices', deviceColumns(row));
  }

  async updateDevice(id: string, patch: DevicePatch): Promise<void> {
    await this.#update('devices', id, deviceColumns(patch));
  }

  async deleteDevice(id: string): Promise<void> {
    await this.#run('DELETE FROM devices WHERE id = $1', [id]);
  }

  async deleteDevicesOfUser(userId: string): Promise<DeviceRow[]> {
    return (await this.#all(`DELETE FROM devices WHERE user_id = $1 RETURNING ${DEVICE_COLUMNS}`, [userId])).map(
      toDevice,
    );
  }

  // Rules

  async listRules(): Promise<RuleRow[]> {
    return (await this.#all(`SELECT ${RULE_COLUMNS} FROM rules ORDER BY inserted_at, id`)) as unknown as RuleRow[];
  }

  async getRule(id: string): Promise<RuleRow | null> {
    return (
      ((await this.#get(`SELECT ${RULE_COLUMNS} FROM rules WHERE id = $1`, [id])) as unknown as RuleRow | undefined) ??
      null
    );
  }

  /** Through the exclusion constraint's GiST index: `&&` on the block and the port range. */
  async findIntersectingRules(query: RuleIntersectionQuery): Promise<RuleRow[]> {
    const derived = ruleDerivedColumns({
      action: query.action,
      destination: `${formatAddress(query.family, query.start)}/${query.prefix}`,
      port_type: query.portType,
      port_range: query.ports === null ? null : `${query.ports.low} - ${query.ports.high}`,
      user_id: query.userId,
    });
    const params: unknown[] = [
      query.action,
      derived.owner_key,
      derived.port_group,
      derived.network,
      `[${derived.port_low},${derived.port_high}]`,
    ];
    let extra = '';
    if (query.excludeId !== undefined) {
      params.push(query.excludeId);
      extra = ` AND id <> $${params.length}`;
    }
    params.push(query.limit);
    return (await this.#all(
      `SELECT ${RULE_COLUMNS} FROM rules
       WHERE action = $1 AND owner_key = $2 AND port_group = $3 AND block && $4::inet AND ports && $5::int4range${extra}
       LIMIT $${params.length}`,
      params,
    )) as unknown as RuleRow[];
  }

  async insertRule(row: RuleRow): Promise<void> {
    await this.#insert('rules', ruleColumns(row));
  }

  async updateRule(id: string, patch: RulePatch): Promise<void> {
    const current = await this.getRule(id);
    if (!current) return;
    const { id: _id, inserted_at: _inserted, ...columns } = ruleColumns({ ...current, ...patch });
    await this.#update('rules', id, columns);
  }

  async deleteRule(id: string): Promise<void> {
    await this.#run('DELETE FROM rules WHERE id = $1', [id]);
  }

  async deleteRulesOfUser(userId: string): Promise<number> {
    return this.#run('DELETE FROM rules WHERE user_id = $1', [userId]);
  }

  // API tokens

  async findTokenByHash(tokenHash: string): Promise<TokenWithOwner | null> {
    const row = await this.#get(
      `SELECT ${TOKEN_COLUMNS.split(', ')
        .map((c) => `t.${c} AS t_${c}`)
        .join(', ')}, ${USER_COLUMNS.split(', ')
        .map((c) => `u.${c}`)
        .join(', ')}
       FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1`,
      [tokenHash],
    );
    if (!row) return null;
    const token: SqlRow = {};
    const owner: SqlRow = {};
    for (const [key, value] of Object.entries(row)) {
      if (key.startsWith('t_')) token[key.slice(2)] = value;
      else owner[key] = value;
    }
    return { token: token as unknown as TokenRow, owner: owner as unknown as UserRow };
  }

  async getToken(id: string): Promise<TokenRow | null> {
    return (
      ((await this.#get(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE id = $1`, [id])) as TokenRow | undefined) ?? null
    );
  }

  async listTokens(): Promise<TokenListing[]> {
    return (await this.#all(
      `SELECT ${TOKEN_COLUMNS.split(', ')
        .map((c) => `t.${c}`)
        .join(', ')}, u.email AS email
       FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.inserted_at, t.id`,
    )) as unknown as TokenListing[];
  }

  async countLiveTokens(userId: string, now: string): Promise<number> {
    const row = await this.#get(
      'SELECT COUNT(*)::int AS n FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2',
      [userId, now],
    );
    return row!.n as number;
  }

  async insertToken(row: TokenRow): Promise<void> {
    await this.#insert('api_tokens', { ...row });
  }

  async revokeToken(id: string, at: string): Promise<void> {
    await this.#run('UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
  }

  async revokeTokensOfUser(userId: string, at: string): Promise<number> {
    return this.#run('UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL', [at, userId]);
  }

  async deleteTokensOfUser(userId: string): Promise<number> {
    return this.#run('DELETE FROM api_tokens WHERE user_id = $1', [userId]);
  }

  // Settings and address allocation

  async getSettings(): Promise<Record<string, unknown>> {
    const settings: Record<string, unknown> = {};
    for (const row of await this.#all('SELECT key, value FROM settings'))
      settings[row.key as string] = JSON.parse(row.value as string);
    return settings;
  }

  async findAppliedPlan(seal: string): Promise<AppliedPlanRow | null> {
    const row = await this.#get('SELECT seal, claim, applied_at FROM applied_plans WHERE seal = $1', [seal]);
    return (row as AppliedPlanRow | undefined) ?? null;
  }

  async listAppliedPlans(): Promise<AppliedPlanRow[]> {
    return (await this.#all(
      'SELECT seal, claim, applied_at FROM applied_plans ORDER BY applied_at, seal',
    )) as unknown as AppliedPlanRow[];
  }

  async insertAppliedPlan(row: AppliedPlanRow): Promise<void> {
    await this.#insert('applied_plans', { ...row });
  }

  async countObjects(): Promise<{ users: number; devices: number; rules: number }> {
    const row = await this.#get(
      'SELECT (SELECT COUNT(*) FROM users)::int AS users, (SELECT COUNT(*) FROM devices)::int AS devices, (SELECT COUNT(*) FROM rules)::int AS rules',
    );
    return row as { users: number; devices: number; rules: number };
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    await this.#run(
      'INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      [key, JSON.stringify(value)],
    );
  }

  async getAllocationHint(family: IpFamily): Promise<AllocationHint | null> {
    const row = await this.#get('SELECT network, next_key FROM allocation_hints WHERE family = $1', [family]);
    return row ? { network: row.network as string, next: addressOfKey(row.next_key as string) } : null;
  }

  async lowestFreeAddress(family: IpFamily, from: bigint, to: bigint): Promise<bigint | null> {
    const row = await this.#get(
      'SELECT address_key FROM free_addresses WHERE family = $1 AND address_key >= $2 AND address_key <= $3 ORDER BY address_key LIMIT 1',
      [family, addressKey(family, from), addressKey(family, to)],
    );
    return row ? addressOfKey(row.address_key as string) : null;
  }

  async addFreeAddress(family: IpFamily, address: bigint): Promise<void> {
    await this.#run('INSERT INTO free_addresses (family, address_key) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
      family,
      addressKey(family, address),
    ]);
  }

  async removeFreeAddress(family: IpFamily, address: bigint): Promise<void> {
    await this.#run('DELETE FROM free_addresses WHERE family = $1 AND address_key = $2', [
      family,
      addressKey(family, address),
    ]);
  }

  async clearFreeAddresses(family: IpFamily): Promise<void> {
    await this.#run('DELETE FROM free_addresses WHERE family = $1', [family]);
  }

  async setAllocationHint(family: IpFamily, hint: AllocationHint | null): Promise<void> {
    if (hint === null) {
      await this.#run('DELETE FROM allocation_hints WHERE family = $1', [family]);
      return;
    }
    await this.#run(
      `INSERT INTO allocation_hints (family, network, next_key) VALUES ($1, $2, $3)
       ON CONFLICT (family) DO UPDATE SET network = excluded.network, next_key = excluded.next_key`,
      [family, hint.network, markKey(family, hint.next)],
    );
  }
}

/** Why a connection failed, in words an operator can act on (node-postgres codes and SQLSTATEs). */
function describeConnectError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ECONNREFUSED') return 'connection refused (is PostgreSQL running on that host and port?)';
  if (code === 'ENOTFOUND') return 'unknown host';
  if (code === '3D000') return 'the database does not exist (create it with createdb)';
  if (code === '28P01' || code === '28000') return 'authentication failed';
  if (/timeout/i.test(error instanceof Error ? error.message : '')) return 'no answer within 10 s';
  return error instanceof Error ? error.message : String(error);
}

export class PostgresStore extends PostgresQueries implements Store {
  readonly #pool: pg.Pool;
  #closed = false;

  private constructor(pool: pg.Pool) {
    super(pool);
    this.#pool = pool;
  }

  /** Connects, and migrates the database (under the migration lock) when it is behind. */
  static async open(location: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    // A host that never answers fails the start (and each request) after 10 s instead of hanging.
    const pool = new pg.Pool({
      connectionString: location,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 10_000,
    });
    // An idle connection dropped by the server (restart, failover) must not crash the process;
    // the next query opens a new one, and fails its own request if the database is still away.
    pool.on('error', () => {});
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      await pool.end();
      throw new StoreOpenError(
        `cannot connect to PostgreSQL at ${redactLocation(location)}: ${describeConnectError(error)}`,
        { cause: error },
      );
    }
    // As in transaction(): a connection lost while checked out must not end the process.
    let lost: Error | undefined;
    const onError = (error: Error) => {
      lost ??= error;
    };
    client.on('error', onError);
    try {
      await migratePostgres(
        client,
        options.now ?? (() => new Date().toISOString()),
        options.migrations ?? POSTGRES_MIGRATIONS,
      );
    } catch (error) {
      client.off('error', onError);
      client.release(lost);
      await pool.end();
      throw error;
    }
    client.off('error', onError);
    client.release(lost);
    return new PostgresStore(pool);
  }

  async transaction<T>(fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error('store is closed');
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translated(error);
    }
    // A checked-out client has no listener of the pool's: a connection lost while this
    // transaction holds it (PostgreSQL restarted, a failover, a cut network) is emitted as
    // 'error' on the client, which would otherwise end the process. The query in flight, if
    // any, fails on its own; the client is then released as broken (the pool makes a new one).
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      try {
        // One round trip: begin, then wait for the write lock (see the header), at most as long as
        // SQLite's busy timeout: a writer stuck elsewhere fails this request instead of hanging it.
        await client.query(
          `BEGIN; SET LOCAL lock_timeout = '${LOCK_TIMEOUT_MS}ms'; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`,
        );
      } catch (error) {
        broken ??= error as Error;
        throw translated(error);
      }
      try {
        const result = await fn(new PostgresQueries(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection in an unknown state is destroyed rather than handed to the next request.
        if (!broken) {
          await client.query('ROLLBACK').catch((rollbackError: Error) => {
            broken = rollbackError;
          });
        }
        throw translated(error);
      }
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }
}
