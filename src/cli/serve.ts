/** `netform serve`: the bundled /v0 server on a SQLite file or a PostgreSQL database. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { readFileSync, statSync } from 'node:fs';
import {
  DEFAULT_AUTH_FAILURE_LIMIT,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  startServer,
  StoreOpenError,
  type AuthFailureLimit,
  type LogLevel,
} from '../../server/index.js';
import { parseCidrOrAddress, parseIpAddress } from '../model/index.js';
import { action } from './boundary.js';
import { watchStopRequests, type StopReason } from './signals.js';
import { CliError, ExitCode } from './exit.js';

export const DEFAULT_DB_PATH = './netform.db';
const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text.trim()) || Number(text) > 65535)
    throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return Number(text);
}

function parseByteCount(text: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) throw new InvalidArgumentError('expected a number of bytes');
  return Number(text);
}

function parseFlag(text: string | undefined): boolean {
  return text !== undefined && /^(1|true|yes|on)$/i.test(text.trim());
}

function isOff(text: string | undefined): boolean {
  return text !== undefined && /^(0|false|no|off)$/i.test(text.trim());
}

export function dbOption(creates = false): Option {
  const what = creates
    ? 'SQLite database file (created with mode 0600 when missing)'
    : 'SQLite database file (must exist)';
  return new Option('--db <location>', `${what}, or postgres://USER@HOST:PORT/DB (an existing database)`)
    .env('NETFORM_DB')
    .default(DEFAULT_DB_PATH);
}

function parseCount(text: string): number {
  if (!/^\d+$/.test(text.trim())) throw new InvalidArgumentError('expected a whole number');
  return Number(text);
}

function parseSeconds(text: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1)
    throw new InvalidArgumentError('expected a whole number of seconds, at least 1');
  return Number(text);
}

interface ServeOptions {
  db: string;
  host: string;
  port: number;
  logLevel: LogLevel;
  legacyDeviceUpdates?: boolean;
  bodyLimit?: number;
  requestTimeout: number | string;
  shutdownTimeout: number | string;
  metrics: boolean;
  metricsPort?: number;
  metricsHost?: string;
  tlsCert?: string;
  tlsKey?: string;
  authFailureLimit: number;
  authFailureWindow: number;
  authFailureExempt: string;
  trustProxy?: string;
}

function readPem(path: string, flag: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new CliError(`cannot read ${flag} ${path}${code ? ` (${code})` : ''}`);
  }
}

function tlsOptions(options: ServeOptions): { cert: Buffer; key: Buffer } | undefined {
  if (options.tlsCert === undefined && options.tlsKey === undefined) return undefined;
  if (options.tlsCert === undefined || options.tlsKey === undefined) {
    throw new CliError(
      '--tls-cert and --tls-key (NETFORM_TLS_CERT, NETFORM_TLS_KEY) go together: give both or neither',
    );
  }
  const tls = { cert: readPem(options.tlsCert, '--tls-cert'), key: readPem(options.tlsKey, '--tls-key') };
  warnIfReadableByOthers(options.tlsKey);
  return tls;
}

/** A private key any user of the machine can read is as good as published there: say so at start. */
function warnIfReadableByOthers(path: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return; // read a moment ago; nothing more to say
  }
  if ((mode & 0o004) === 0) return;
  process.stderr.write(
    `warning: the TLS key ${path} is readable by every user of this machine (mode ${mode.toString(8).padStart(4, '0')}); ` +
      'make it readable by the server only (chmod 600, or 640 with a group of its own)\n',
  );
}

function authFailureLimit(options: ServeOptions): AuthFailureLimit | false {
  // commander parses environment values with the flag's parser too.
  const max = options.authFailureLimit;
  if (max === 0) return false;
  const windowSeconds = options.authFailureWindow;
  const exempt = options.authFailureExempt
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const entry of exempt) {
    if (!isAddressOrBlock(entry))
      throw new CliError(`--auth-failure-exempt: ${JSON.stringify(entry)} is not an IP address or CIDR block`);
  }
  return { max, windowMs: windowSeconds * 1000, exempt };
}

/** proxy-addr's names of address ranges, which --trust-proxy takes besides addresses and blocks. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * `--trust-proxy`: a hop count (a whole number N: every request comes through exactly N proxies,
 * the connection's peer and the last N - 1 entries of X-Forwarded-For, so the client is the Nth
 * entry from the end), or a comma-separated list of the proxies' addresses, CIDR blocks and the
 * names loopback, linklocal, uniquelocal (X-Forwarded-For is believed hop by hop while the hop is
 * one of those). A bare number used to be read as an IPv4 address (`1` was 0.0.0.1).
 */
export function parseTrustProxy(text: string | undefined): string | number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    if (hops < 1 || hops > 100)
      throw new CliError(
        `--trust-proxy ${trimmed}: a hop count is from 1 to 100 (leave the flag out to trust no proxy)`,
      );
    return hops;
  }
  const entries: string[] = [];
  for (const entry of trimmed.split(',').map((s) => s.trim())) {
    if (PROXY_RANGE_NAMES.includes(entry)) {
      entries.push(entry);
      continue;
    }
    const block = parseCidrOrAddress(entry);
    if (!block)
      throw new CliError(
        `--trust-proxy: ${JSON.stringify(entry)} is not a hop count, an IP address, a CIDR block, or one of ${PROXY_RANGE_NAMES.join(', ')}`,
      );
    if (block.prefix === 0)
      throw new CliError(
        `--trust-proxy: ${JSON.stringify(entry)} would trust every address, so any client could pick the address it is ` +
          'logged and rate limited under; name the proxies (or give a hop count)',
      );
    entries.push(block.network);
  }
  return entries.join(',');
}

function isAddressOrBlock(text: string): boolean {
  return text.includes('/') ? parseCidrOrAddress(text) !== null : parseIpAddress(text) !== null;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description(
      'Run the bundled /v0 server on a SQLite database file or a PostgreSQL database (created or migrated on start).',
    )
    .addOption(dbOption(true))
    .addOption(new Option('--host <host>', 'address to listen on').env('NETFORM_HOST').default(DEFAULT_HOST))
    .addOption(
      new Option('--port <port>', 'port to listen on; 0 picks a free one')
        .env('NETFORM_PORT')
        .default(DEFAULT_PORT)
        .argParser(parsePort),
    )
    .addOption(
      new Option('--log-level <level>', 'request log level (JSON lines on stderr)')
        .env('NETFORM_LOG_LEVEL')
        .choices(LOG_LEVELS)
        .default('info'),
    )
    // Not commander's .env(): for a flag it would count NETFORM_LEGACY_DEVICE_UPDATES=0 as on.
    .option(
      '--legacy-device-updates',
      'emulate upstream 0.7.26+: device updates change only name and description (env NETFORM_LEGACY_DEVICE_UPDATES=1)',
    )
    .addOption(
      new Option('--body-limit <bytes>', 'largest request body; larger ones get 413')
        .default(1024 * 1024)
        .argParser(parseByteCount),
    )
    .addOption(
      new Option(
        '--request-timeout <seconds>',
        'longest time a request (headers and body) may take to arrive; then 408 and the connection closes',
      )
        .env('NETFORM_REQUEST_TIMEOUT')
        .default(DEFAULT_REQUEST_TIMEOUT_MS / 1000)
        .argParser(parseSeconds),
    )
    .addOption(
      new Option(
        '--shutdown-timeout <seconds>',
        'on SIGTERM/SIGINT, how long requests in flight may take to finish before every connection is closed',
      )
        .env('NETFORM_SHUTDOWN_TIMEOUT')
        .default(DEFAULT_SHUTDOWN_TIMEOUT_MS / 1000)
        .argParser(parseSeconds),
    )
    .addOption(
      new Option('--tls-cert <file>', 'serve HTTPS with this PEM certificate chain (with --tls-key)').env(
        'NETFORM_TLS_CERT',
      ),
    )
    .addOption(new Option('--tls-key <file>', 'the PEM private key of --tls-cert').env('NETFORM_TLS_KEY'))
    .option('--no-metrics', 'do not record or serve Prometheus metrics (env NETFORM_METRICS=0)')
    .addOption(
      new Option('--metrics-port <port>', 'serve /metrics on this port instead of the API port')
        .env('NETFORM_METRICS_PORT')
        .argParser(parsePort),
    )
    .addOption(
      new Option('--metrics-host <host>', 'address of the metrics port (default: --host)').env('NETFORM_METRICS_HOST'),
    )
    .addOption(
      new Option(
        '--auth-failure-limit <n>',
        'failed authentications per client address within the window before 429; 0: no limit',
      )
        .env('NETFORM_AUTH_FAILURE_LIMIT')
        .default(DEFAULT_AUTH_FAILURE_LIMIT.max)
        .argParser(parseCount),
    )
    .addOption(
      new Option('--auth-failure-window <seconds>', 'the window of --auth-failure-limit')
        .env('NETFORM_AUTH_FAILURE_WINDOW')
        .default(DEFAULT_AUTH_FAILURE_LIMIT.windowMs / 1000)
        .argParser(parseSeconds),
    )
    .addOption(
      new Option(
        '--auth-failure-exempt <list>',
        'client addresses/CIDR blocks never limited, comma-separated ("" for none)',
      )
        .env('NETFORM_AUTH_FAILURE_EXEMPT')
        .default(DEFAULT_AUTH_FAILURE_LIMIT.exempt.join(',')),
    )
    .addOption(
      new Option(
        '--trust-proxy <list|hops>',
        'proxies whose X-Forwarded-For names the client: addresses/CIDR blocks (comma-separated; loopback, ' +
          'linklocal, uniquelocal), or a hop count N when every request comes through exactly N proxies',
      ).env('NETFORM_TRUST_PROXY'),
    )
    .addHelpText(
      'after',
      '\nPrints "listening on http(s)://HOST:PORT" first on stdout (then "metrics on URL" with --metrics-port). ' +
        'SIGTERM or SIGINT: stops accepting connections, finishes requests in flight for at most ' +
        '--shutdown-timeout seconds, closes every connection and the database, exits 0 (a second signal: exit 1 at once).\n' +
        'Without a token: GET /healthz, /readyz, /metrics, /v0/openapi.json and /docs.',
    )
    .action(
      action(async (options: ServeOptions) => {
        // Listen for signals before anything else: one that arrives right after the listening
        // line (or during startup) must still stop the server cleanly.
        const stopSignal = new Promise<StopReason>((resolve) => {
          watchStopRequests((reason, first) => {
            // A second signal while stopping: stop now.
            if (!first) {
              process.stderr.write(`${reason} again: exiting without waiting\n`);
              process.exit(1);
            }
            resolve(reason);
          });
        });
        // commander hands an environment value over unparsed.
        const port = typeof options.port === 'string' ? parsePortOrFail(options.port) : options.port;
        const requestTimeout = secondsOrFail(options.requestTimeout, 'NETFORM_REQUEST_TIMEOUT');
        const shutdownTimeout = secondsOrFail(options.shutdownTimeout, 'NETFORM_SHUTDOWN_TIMEOUT');
        const tls = tlsOptions(options);
        const failureLimit = authFailureLimit(options);
        const trustProxy = parseTrustProxy(options.trustProxy);
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
            requestTimeoutMs: requestTimeout * 1000,
            shutdownTimeoutMs: shutdownTimeout * 1000,
            metrics: options.metrics !== false && !isOff(process.env.NETFORM_METRICS),
            metricsPort: options.metricsPort,
            metricsHost: options.metricsHost,
            tls,
            authFailureLimit: failureLimit,
            trustProxy,
          });
        } catch (error) {
          throw new CliError(`cannot start the server: ${describeStartError(error, options)}`);
        }
        // One write (atomic on a pipe): whoever reads the first line finds the second with it.
        process.stdout.write(
          `listening on ${server.url}\n${server.metricsUrl ? `metrics on ${server.metricsUrl}\n` : ''}`,
        );
        const signal = await stopSignal;
        process.stderr.write(`${signal}: finishing requests in flight (at most ${shutdownTimeout} s), then stopping\n`);
        await server.close();
        return ExitCode.ok;
      }),
    );
}

function secondsOrFail(value: number | string, variable: string): number {
  if (typeof value === 'number') return value;
  try {
    return parseSeconds(value);
  } catch {
    throw new CliError(`${variable}=${JSON.stringify(value)} is not a whole number of seconds, at least 1`);
  }
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
  if (error instanceof StoreOpenError) return error.message;
  // OpenSSL's reasons name no key material: a certificate or key that does not parse or match.
  if (
    options.tlsCert !== undefined &&
    /PEM|ASN1|x509|key values mismatch|certificate|private key/i.test(String((error as Error)?.message))
  ) {
    return `the TLS certificate ${options.tlsCert} or key ${options.tlsKey} is not usable (${(error as Error).message})`;
  }
  return error instanceof Error ? error.message : String(error);
}
