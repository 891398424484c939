/**
 * Schema migrations of the SQLite store. Each migration runs once, in order, inside one
 * transaction together with its row in `schema_version`; a database newer than this code is
 * refused rather than guessed at.
 */
import type Database from 'better-sqlite3';

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'users, devices, rules, api tokens, settings, allocation hints',
    sql: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL,
        email_key TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL CHECK (role IN ('admin', 'unprivileged')),
        password_hash TEXT,
        last_signed_in_at TEXT,
        last_signed_in_method TEXT,
        disabled_at TEXT,
        inserted_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX users_listing ON users (inserted_at, id);
      CREATE INDEX users_role ON users (role, disabled_at);

      CREATE TABLE devices (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users (id),
        name TEXT NOT NULL,
        description TEXT,
        public_key TEXT NOT NULL UNIQUE,
        preshared_key TEXT,
        ipv4 TEXT,
        ipv4_key TEXT UNIQUE,
        ipv6 TEXT,
        ipv6_key TEXT UNIQUE,
        allowed_ips TEXT,
        dns TEXT,
        endpoint TEXT,
        mtu INTEGER,
        persistent_keepalive INTEGER,
        use_default_allowed_ips INTEGER NOT NULL,
        use_default_dns INTEGER NOT NULL,
        use_default_endpoint INTEGER NOT NULL,
        use_default_mtu INTEGER NOT NULL,
        use_default_persistent_keepalive INTEGER NOT NULL,
        remote_ip TEXT,
        latest_handshake TEXT,
        rx_bytes INTEGER,
        tx_bytes INTEGER,
        inserted_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (user_id, name)
      );
      CREATE INDEX devices_listing ON devices (inserted_at, id);

      CREATE TABLE rules (
        id TEXT PRIMARY KEY,
        action TEXT NOT NULL CHECK (action IN ('accept', 'drop')),
        destination TEXT NOT NULL,
        port_type TEXT CHECK (port_type IN ('tcp', 'udp')),
        port_range TEXT,
        user_id TEXT REFERENCES users (id),
        owner_key TEXT NOT NULL,
        family INTEGER NOT NULL,
        start_key TEXT NOT NULL,
        end_key TEXT NOT NULL,
        port_group TEXT NOT NULL,
        port_low INTEGER,
        port_high INTEGER,
        inserted_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX rules_listing ON rules (inserted_at, id);
      CREATE INDEX rules_user ON rules (user_id);
      CREATE INDEX rules_overlap ON rules (action, owner_key, family, port_group, start_key);

      CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users (id),
        token_hash TEXT NOT NULL UNIQUE,
        inserted_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX api_tokens_user ON api_tokens (user_id);

      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );

      CREATE TABLE allocation_hints (
        family INTEGER PRIMARY KEY,
        network TEXT NOT NULL,
        next_key TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: 'free tunnel addresses below the allocation mark',
    sql: `
      CREATE TABLE free_addresses (
        family INTEGER NOT NULL,
        address_key TEXT NOT NULL,
        PRIMARY KEY (family, address_key)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    description: 'seals of the saved plans applied here',
    sql: `
      CREATE TABLE applied_plans (
        seal TEXT PRIMARY KEY,
        claim TEXT NOT NULL,
        applied_at TEXT NOT NULL
      );
    `,
  },
];

export function migrate(db: Database.Database, now: () => string): void {
  // Read and apply under one write lock, so two processes opening a new file at once cannot
  // both apply the same migration.
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    const row = db.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number | null };
    const current = row.version ?? 0;
    const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
    if (current > latest) {
      throw new Error(
        `database schema version ${current} is newer than this netform supports (${latest}); upgrade netform`,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)').run(migration.version, now());
    }
  }).immediate();
}
