/** `--db`: the database of the bundled server, for `serve` and the `server` commands. */
import { Option } from 'commander';

export const DEFAULT_DB_PATH = './netform.db';

export function dbOption(creates = false): Option {
  const what = creates
    ? 'SQLite database file (created with mode 0600 when missing)'
    : 'SQLite database file (must exist)';
  return new Option('--db <location>', `${what}, or postgres://USER@HOST:PORT/DB (an existing database)`)
    .env('NETFORM_DB')
    .default(DEFAULT_DB_PATH);
}
