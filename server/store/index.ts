export * from './types.js';
export { SqliteStore } from './sqlite.js';
export { PostgresStore } from './postgres.js';
export { POSTGRES_MIGRATIONS } from './postgres-migrations.js';
export { StoreOpenError } from './errors.js';
// The server's own modules import open.js, errors.js and types.js instead of this file, which
// loads both drivers.
export { openStore } from './open.js';
