/** `netform serve`: the bundled /v0 server on a SQLite file. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_HOST, DEFAULT_PORT, startServer, type LogLevel } from '../../server/index.js';
import { action, CliError, ExitCode } from './exit.js';

export const DEFAULT_DB_PATH = './netform.db';
const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text.trim()) || Number(text) > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return Number(text);
}

function parseByteCount(text: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) throw new InvalidArgumentError('expected a number of bytes');
  return Number(text);
}

function parseFlag(text: string | undefined): boolean {
  return text !== undefined && /^(1|true|yes|on)$/i.test(text.trim());
}

export function dbOption(creates = false): Option {
  const what = creates ? 'SQLite database file (created with mode 0600 when missing)' : 'SQLite database file (must exist)';
  return new Option('--db <path>', what).env('NETFORM_DB').default(DEFAULT_DB_PATH);
}

interface ServeOptions {
  db: string;
  host: string;
  port: number;
  logLevel: LogLevel;
  legacyDeviceUpdates?: boolean;
  bodyLimit?: number;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the bundled /v0 server on a SQLite database file (created and migrated on first start).')
    .addOption(dbOption(true))
    .addOption(new Option('--host <host>', 'address to listen on').env('NETFORM_HOST').default(DEFAULT_HOST))
    .addOption(new Option('--port <port>', 'port to listen on; 0 picks a free one').env('NETFORM_PORT').default(DEFAULT_PORT).argParser(parsePort))
    .addOption(new Option('--log-level <level>', 'request log level (JSON lines on stderr)').env('NETFORM_LOG_LEVEL').choices(LOG_LEVELS).default('info'))
    // Not commander's .env(): for a flag it would count NETFORM_LEGACY_DEVICE_UPDATES=0 as on.
    .option('--legacy-device-updates', 'emulate upstream 0.7.26+: device updates change only name and description (env NETFORM_LEGACY_DEVICE_UPDATES=1)')
    .addOption(new Option('--body-limit <bytes>', 'largest request body; larger ones get 413').default(1024 * 1024).argParser(parseByteCount))
    .addHelpText('after', '\nPrints "listening on http://HOST:PORT" first on stdout. SIGTERM or SIGINT: finishes requests in flight, closes the database, exits 0.')
    .action(
      action(async (options: ServeOptions) => {
        // Listen for signals before anything else: one that arrives right after the listening
        // line (or during startup) must still stop the server cleanly.
        const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
          const onSignal = (signal: NodeJS.Signals) => {
            process.off('SIGTERM', onSignal);
            process.off('SIGINT', onSignal);
            // A second signal while stopping: stop now.
            const force = (again: NodeJS.Signals) => {
              process.stderr.write(`${again} again: exiting without waiting\n`);
              process.exit(1);
            };
            process.once('SIGTERM', force);
            process.once('SIGINT', force);
            resolve(signal);
          };
          process.on('SIGTERM', onSignal);
          process.on('SIGINT', onSignal);
        });
        // commander hands an environment value over unparsed.
        const port = typeof options.port === 'string' ? parsePortOrFail(options.port) : options.port;
        let server;
        try {
          server = await startServer({
            dbPath: options.db,
            host: options.host,
            port,
            logger: options.logLevel !== 'silent',
            logLevel: options.logLevel,
            legacyDeviceUpdates: options.legacyDeviceUpdates ?? parseFlag(process.env.NETFORM_LEGACY_DEVICE_UPDATES),
            bodyLimit: options.bodyLimit,
          });
        } catch (error) {
          throw new CliError(`cannot start the server: ${describeStartError(error, options)}`);
        }
        process.stdout.write(`listening on ${server.url}\n`);
        const signal = await stopSignal;
        process.stderr.write(`${signal}: finishing requests in flight, then stopping\n`);
        await server.close();
        return ExitCode.ok;
      }),
    );
}

function parsePortOrFail(text: string): number {
  try {
    return parsePort(text);
  } catch {
    throw new CliError(`NETFORM_PORT=${JSON.stringify(text)} is not a port number from 0 to 65535`);
  }
}

function describeStartError(error: unknown, options: ServeOptions): string {
  const code = (error as { code?: string }).code;
  if (code === 'EADDRINUSE') return `port ${options.port} on ${options.host} is already in use`;
  if (code === 'EADDRNOTAVAIL') return `${options.host} is not an address of this machine`;
  if (code === 'SQLITE_CANTOPEN') return `cannot open the database file ${options.db}`;
  return error instanceof Error ? error.message : String(error);
}
