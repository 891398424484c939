/**
 * Opening a store by its location. Each driver is imported only when its kind of database is
 * opened: a server on a SQLite file never loads the PostgreSQL driver (pg), nor one on
 * PostgreSQL the SQLite one, and whoever imports this module loads neither until it opens one.
 */
import { StoreOpenError, isPostgresLocation } from './errors.js';
import type { SqliteStoreOptions } from './sqlite.js';
import type { Store } from './types.js';

const FILE_ERRORS = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'EISDIR', 'EROFS', 'ELOOP', 'ENAMETOOLONG']);

/**
 * Opens the store at a database location: a `postgres://` (or `postgresql://`) URL, else a
 * SQLite file path (`options` apply to SQLite: whether a missing file may be created). A
 * PostgreSQL database must exist; either is migrated when behind. A location that cannot be
 * opened or reached is a StoreOpenError naming it (never with its password).
 */
export async function openStore(location: string, options: SqliteStoreOptions = {}): Promise<Store> {
  if (isPostgresLocation(location)) {
    const { PostgresStore } = await import('./postgres.js');
    return PostgresStore.open(location);
  }
  const { SqliteStore } = await import('./sqlite.js');
  try {
    return SqliteStore.open(location, options);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_CANTOPEN') {
      throw new StoreOpenError(`cannot open the database file ${location}`, { cause: error });
    }
    // Creating the file failed: its folder is missing, is a file, or may not be written.
    if (code !== undefined && FILE_ERRORS.has(code)) {
      throw new StoreOpenError(`cannot open the database file ${location} (${code})`, { cause: error });
    }
    throw error;
  }
}
