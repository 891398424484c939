/**
 * `netform server ...`: administration on the server machine, straight on the database file,
 * no token needed: API tokens (the only way to get one) and the server defaults.
 */
import { Option, type Command } from 'commander';
// The administration and the store only: these commands never load the HTTP server.
import { issueToken, listTokens, revokeToken, setServerDefault, showDefaults } from '../../../server/admin.js';
import { copyServerData } from '../../../server/copy.js';
import { AdminError } from '../../../server/errors.js';
import { DEFAULT_KEYS } from '../../../server/services/settings.js';
import { StoreOpenError } from '../../../server/store/errors.js';
import { copiedLine, defaultsTable, formatSettingValue, leftOutWarnings, tokenTable } from '../../views/admin.js';
import type { CliContext } from '../command.js';
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

export function registerServer(program: Command, cli: CliContext): void {
  const { io } = cli;
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
      cli.action(async (options: { from: string; to: string }) => {
        const counts = await admin(() => copyServerData(options));
        io.out.write(copiedLine(counts));
        io.err.write(leftOutWarnings(counts.leftOut));
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
      cli.action(async (options: { email: string; days: number; db: string }) => {
        const issued = await admin(() => issueToken({ dbPath: options.db, email: options.email, days: options.days }));
        if (issued.createdDatabase !== null) io.err.write(`created a new database at ${issued.createdDatabase}\n`);
        if (issued.userCreated) io.err.write(`created admin ${options.email.trim()}\n`);
        io.err.write(`token ${issued.id} expires ${issued.expiresAt}; this is the only time it is shown\n`);
        io.out.write(`${issued.token}\n`);
        return ExitCode.ok;
      }),
    );

  token
    .command('list')
    .description('List API tokens (ids, owners, expiry, status; never their values).')
    .option('--json', 'print JSON')
    .addOption(dbOption())
    .action(
      cli.action(async (options: { db: string; json?: boolean }) => {
        const tokens = await admin(() => listTokens({ dbPath: options.db }));
        if (options.json) io.out.write(`${JSON.stringify(tokens, null, 2)}\n`);
        else if (tokens.length === 0) io.out.write('no tokens\n');
        else io.out.write(tokenTable(tokens));
        return ExitCode.ok;
      }),
    );

  token
    .command('revoke')
    .description('Revoke an API token by its id (see token list).')
    .argument('<id>', 'token id')
    .addOption(dbOption())
    .action(
      cli.action(async (id: string, options: { db: string }) => {
        const result = await admin(() => revokeToken({ dbPath: options.db, id }));
        io.err.write(result.alreadyRevoked ? `token ${id} was already revoked\n` : `revoked token ${id}\n`);
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
      cli.action(async (options: { db: string; json?: boolean }) => {
        const values = await admin(() => showDefaults({ dbPath: options.db }));
        if (options.json) io.out.write(`${JSON.stringify(values, null, 2)}\n`);
        else io.out.write(defaultsTable(values));
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
      cli.action(async (key: string, value: string, options: { db: string }) => {
        const result = await admin(() => setServerDefault({ dbPath: options.db, key, value }));
        io.err.write(`${key} = ${formatSettingValue(result.value)}\n`);
        for (const note of result.notes) io.err.write(`${note}\n`);
        return ExitCode.ok;
      }),
    );
}
