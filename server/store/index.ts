export * from './types.js';
export { MissingDatabaseError, SqliteStore, type SqliteStoreOptions } from './sqlite.js';
export { MIGRATIONS } from './migrations.js';

import { SqliteStore, type SqliteStoreOptions } from './sqlite.js';
import type { Store } from './types.js';

/** Opens the store at a database location. Today a SQLite file path; PostgreSQL URLs will follow. */
export async function openStore(location: string, options: SqliteStoreOptions = {}): Promise<Store> {
  if (/^postgres(ql)?:\/\//i.test(location)) {
    throw new Error('PostgreSQL storage is not available in this build; use a SQLite file path');
  }
  return SqliteStore.open(location, options);
}
