/**
 * `netform server ...`: administration on the server machine, straight on the database file,
 * no token needed: API tokens (the only way to get one) and the server defaults.
 */
import { Option, type Command } from 'commander';
import {
  AdminError,
  StoreOpenError,
  copyServerData,
  issueToken,
  listTokens,
  revokeToken,
  setServerDefault,
  showDefaults,
  DEFAULT_KEYS,
} from '../../../server/index.js';
import { copiedLine, defaultsTable, formatSettingValue, leftOutWarnings, tokenTable } from '../../views/admin.js';
import { action } from '../boundary.js';
import { CliError, ExitCode } from '../exit.js';
import { parseDays } from '../flags/numbers.js';
import { dbOption } from '../flags/store.js';

/** Administration failures are expected: their message alone, no stack. */
async function admin<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AdminError) throw new CliError(error.message);
    if (error instanceof StoreOpenError) throw new CliError(`${error.message} (check --db / NETFORM_DB)`);
    throw error;
  }
}

export function registerServer(program: Command): void {
  const server = program
    .command('server')
    .description('Administer the bundled server on its machine: API tokens, server defaults, moving its data.');

  server
    .command('copy')
    .description(
      "Copy a server's data (users, devices, rules, tokens, defaults, key pair) into a new, empty database in one transaction.",
    )
    .requiredOption('--from <location>', 'the existing database: a SQLite file (or a postgres:// URL)')
    .requiredOption('--to <location>', 'the new, empty database: a postgres://USER@HOST:PORT/DB URL (or a SQLite file)')
    .action(
      action(async (options: { from: string; to: string }) => {
        const counts = await admin(() => copyServerData(options));
        process.stdout.write(copiedLine(counts));
        process.stderr.write(leftOutWarnings(counts.leftOut));
        return ExitCode.ok;
      }),
    );

  const token = server.command('token').description('Issue, list and revoke API tokens.');

  token
    .command('create')
    .description(
      'Issue an API token for an admin (made an admin when no user has the email yet); prints only the token on stdout.',
    )
    .requiredOption('--email <email>', 'email of the admin')
    .addOption(new Option('--days <n>', 'days until the token expires, 1 to 90').default(30).argParser(parseDays))
    .addOption(dbOption(true))
    .action(
      action(async (options: { email: string; days: number; db: string }) => {
        const issued = await admin(() => issueToken({ dbPath: options.db, email: options.email, days: options.days }));
        if (issued.createdDatabase !== null)
          process.stderr.write(`created a new database at ${issued.createdDatabase}\n`);
        if (issued.userCreated) process.stderr.write(`created admin ${options.email.trim()}\n`);
        process.stderr.write(`token ${issued.id} expires ${issued.expiresAt}; this is the only time it is shown\n`);
        process.stdout.write(`${issued.token}\n`);
        return ExitCode.ok;
      }),
    );

  token
    .command('list')
    .description('List API tokens (ids, owners, expiry, status; never their values).')
    .option('--json', 'print JSON')
    .addOption(dbOption())
    .action(
      action(async (options: { db: string; json?: boolean }) => {
        const tokens = await admin(() => listTokens({ dbPath: options.db }));
        if (options.json) process.stdout.write(`${JSON.stringify(tokens, null, 2)}\n`);
        else if (tokens.length === 0) process.stdout.write('no tokens\n');
        else process.stdout.write(tokenTable(tokens));
        return ExitCode.ok;
      }),
    );

  token
    .command('revoke')
    .description('Revoke an API token by its id (see token list).')
    .argument('<id>', 'token id')
    .addOption(dbOption())
    .action(
      action(async (id: string, options: { db: string }) => {
        const result = await admin(() => revokeToken({ dbPath: options.db, id }));
        process.stderr.write(result.alreadyRevoked ? `token ${id} was already revoked\n` : `revoked token ${id}\n`);
        return ExitCode.ok;
      }),
    );

  const defaults = server
    .command('defaults')
    .description('Show and change the server defaults (device defaults, tunnel networks, device limit).');

  defaults
    .command('show')
    .description('Print the server defaults.')
    .option('--json', 'print JSON')
    .addOption(dbOption())
    .action(
      action(async (options: { db: string; json?: boolean }) => {
        const values = await admin(() => showDefaults({ dbPath: options.db }));
        if (options.json) process.stdout.write(`${JSON.stringify(values, null, 2)}\n`);
        else process.stdout.write(defaultsTable(values));
        return ExitCode.ok;
      }),
    );

  defaults
    .command('set')
    .description(`Change one server default. Keys: ${DEFAULT_KEYS.join(', ')}. Lists are comma-separated.`)
    .argument('<key>', 'setting name')
    .argument('<value>', 'new value')
    .addOption(dbOption())
    .action(
      action(async (key: string, value: string, options: { db: string }) => {
        const result = await admin(() => setServerDefault({ dbPath: options.db, key, value }));
        process.stderr.write(`${key} = ${formatSettingValue(result.value)}\n`);
        for (const note of result.notes) process.stderr.write(`${note}\n`);
        return ExitCode.ok;
      }),
    );
}
