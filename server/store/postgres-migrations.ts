/**
 * Schema migrations of the PostgreSQL store. Whichever replica starts first applies them: every
 * starting process takes one session advisory lock (MIGRATION_LOCK) before reading the version,
 * so replicas starting at once wait for each other and the later ones find nothing left to do.
 * Each migration runs in one transaction with its row in `schema_version`; a database newer than
 * this code is refused.
 *
 * The database enforces the invariants itself, so that no write from any replica can break
 * them: unique email keys (lower-cased), public keys, (user, device name) and tunnel addresses;
 * no two overlapping rules, through an exclusion constraint on (action, owner, port group,
 * destination block `&&`, port range `&&`) as upstream Firezone does (btree_gist for the `=`
 * columns; `inet_ops` and `int4range` are GiST-indexable natively).
 *
 * Text that is ordered or compared by range (ids, times, address keys) is `COLLATE "C"`: byte
 * order, the same as SQLite's, whatever the database's locale.
 */
import type { PoolClient } from 'pg';
import type { Migration } from './migrations.js';

/** Key of the session advisory lock held while migrating ('netform' + 'migr' in ASCII). */
export const MIGRATION_LOCK = 0x6e6574666f726d01n;

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'users, devices, rules (with their exclusion constraint), api tokens, settings, address allocation',
    sql: `
      CREATE EXTENSION IF NOT EXISTS btree_gist;

      CREATE TABLE users (
        id text COLLATE "C" PRIMARY KEY,
        email text NOT NULL,
        email_key text NOT NULL CONSTRAINT users_email_unique UNIQUE,
        role text NOT NULL CHECK (role IN ('admin', 'unprivileged')),
        password_hash text,
        last_signed_in_at text,
        last_signed_in_method text,
        disabled_at text,
        inserted_at text COLLATE "C" NOT NULL,
        updated_at text NOT NULL
      );
      CREATE INDEX users_listing ON users (inserted_at, id);
      CREATE INDEX users_role ON users (role, disabled_at);

      CREATE TABLE devices (
        id text COLLATE "C" PRIMARY KEY,
        user_id text COLLATE "C" NOT NULL REFERENCES users (id),
        name text NOT NULL,
        description text,
        public_key text NOT NULL CONSTRAINT devices_public_key_unique UNIQUE,
        preshared_key text,
        ipv4 text,
        ipv4_key text COLLATE "C" CONSTRAINT devices_ipv4_unique UNIQUE,
        ipv6 text,
        ipv6_key text COLLATE "C" CONSTRAINT devices_ipv6_unique UNIQUE,
        allowed_ips text,
        dns text,
        endpoint text,
        mtu integer,
        persistent_keepalive integer,
        use_default_allowed_ips boolean NOT NULL,
        use_default_dns boolean NOT NULL,
        use_default_endpoint boolean NOT NULL,
        use_default_mtu boolean NOT NULL,
        use_default_persistent_keepalive boolean NOT NULL,
        remote_ip text,
        latest_handshake text,
        rx_bytes bigint,
        tx_bytes bigint,
        inserted_at text COLLATE "C" NOT NULL,
        updated_at text NOT NULL,
        CONSTRAINT devices_name_unique UNIQUE (user_id, name)
      );
      CREATE INDEX devices_listing ON devices (inserted_at, id);

      CREATE TABLE rules (
        id text COLLATE "C" PRIMARY KEY,
        action text NOT NULL CHECK (action IN ('accept', 'drop')),
        destination text NOT NULL,
        port_type text CHECK (port_type IN ('tcp', 'udp')),
        port_range text,
        user_id text COLLATE "C" REFERENCES users (id),
        owner_key text COLLATE "C" NOT NULL,
        family integer NOT NULL,
        block inet NOT NULL,
        port_group text NOT NULL,
        ports int4range NOT NULL,
        inserted_at text COLLATE "C" NOT NULL,
        updated_at text NOT NULL,
        CONSTRAINT rules_no_overlap EXCLUDE USING gist (
          action WITH =, owner_key WITH =, port_group WITH =, block inet_ops WITH &&, ports WITH &&
        )
      );
      CREATE INDEX rules_listing ON rules (inserted_at, id);
      CREATE INDEX rules_user ON rules (user_id);

      CREATE TABLE api_tokens (
        id text COLLATE "C" PRIMARY KEY,
        user_id text COLLATE "C" NOT NULL REFERENCES users (id),
        token_hash text NOT NULL UNIQUE,
        inserted_at text COLLATE "C" NOT NULL,
        expires_at text COLLATE "C" NOT NULL,
        revoked_at text
      );
      CREATE INDEX api_tokens_user ON api_tokens (user_id);

      CREATE TABLE settings (
        key text PRIMARY KEY,
        value text NOT NULL
      );

      CREATE TABLE allocation_hints (
        family integer PRIMARY KEY,
        network text NOT NULL,
        next_key text COLLATE "C" NOT NULL
      );

      CREATE TABLE free_addresses (
        family integer NOT NULL,
        address_key text COLLATE "C" NOT NULL,
        PRIMARY KEY (family, address_key)
      );
    `,
  },
  {
    version: 2,
    description: 'seals of the saved plans applied here',
    sql: `
      CREATE TABLE applied_plans (
        seal text COLLATE "C" PRIMARY KEY,
        claim text NOT NULL,
        applied_at text NOT NULL
      );
    `,
  },
];

export async function migratePostgres(
  client: PoolClient,
  now: () => string,
  migrations = POSTGRES_MIGRATIONS,
): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, applied_at text NOT NULL)',
    );
    const { rows } = await client.query<{ version: number | null }>(
      'SELECT MAX(version) AS version FROM schema_version',
    );
    const current = rows[0]?.version ?? 0;
    const latest = migrations[migrations.length - 1]!.version;
    if (current > latest) {
      throw new Error(
        `database schema version ${current} is newer than this netform supports (${latest}); upgrade netform`,
      );
    }
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)', [
          migration.version,
          now(),
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]);
  }
}
