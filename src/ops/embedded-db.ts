/** Where `--embedded` keeps the bundled server's SQLite file when given no path (a module of its own: the flags' help reads it without loading the session). */
export const DEFAULT_EMBEDDED_DB = '.netform/embedded.db';
