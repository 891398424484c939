export * from './types.js';
export { MissingDatabaseError, SqliteStore, type SqliteStoreOptions } from './sqlite.js';
export { PostgresStore } from './postgres.js';
export { POSTGRES_MIGRATIONS } from './postgres-migrations.js';
export { StoreOpenError, StoreUnavailableError, isPostgresLocation, redactLocation } from './errors.js';

import { StoreOpenError, isPostgresLocation } from './errors.js';
import { PostgresStore } from './postgres.js';
import { SqliteStore, type SqliteStoreOptions } from './sqlite.js';
import type { Store } from './types.js';

/**
 * Opens the store at a database location: a `postgres://` (or `postgresql://`) URL, else a
 * SQLite file path (`options` apply to SQLite: whether a missing file may be created). A
 * PostgreSQL database must exist; either is migrated when behind. A location that cannot be
 * opened or reached is a StoreOpenError naming it (never with its password).
 */
export async function openStore(location: string, options: SqliteStoreOptions = {}): Promise<Store> {
  if (isPostgresLocation(location)) return PostgresStore.open(location);
  try {
    return SqliteStore.open(location, options);
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CANTOPEN') {
      throw new StoreOpenError(`cannot open the database file ${location}`, { cause: error });
    }
    throw error;
  }
}
