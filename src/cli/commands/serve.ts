/** `netform serve`: the bundled /v0 server on a SQLite file or a PostgreSQL database. */
import type { Command } from 'commander';
import { startServer, StoreOpenError } from '../../../server/index.js';
import type { CliContext } from '../command.js';
import { CliError, ExitCode } from '../exit.js';
import { parsePortFromEnv, secondsOrFail } from '../flags/numbers.js';
import { parseTrustProxy } from '../flags/proxy.js';
import { addServeOptions, authFailureLimit, envFlag, type ServeOptions } from '../flags/serve.js';
import { tlsOptions } from '../flags/tls.js';
import type { CliIo } from '../io.js';
import { watchStopRequests, type StopReason } from '../signals.js';

export function registerServe(program: Command, cli: CliContext): void {
  const cmd = program
    .command('serve')
    .description(
      'Run the bundled /v0 server on a SQLite database file or a PostgreSQL database (created or migrated on start).',
    );
  addServeOptions(cmd)
    .addHelpText(
      'after',
      '\nPrints "listening on http(s)://HOST:PORT" first on stdout (then "metrics on URL" with --metrics-port). ' +
        'SIGTERM or SIGINT: stops accepting connections, finishes requests in flight for at most ' +
        '--shutdown-timeout seconds, closes every connection and the database, exits 0 (a second signal: exit 1 at once).\n' +
        'Without a token: GET /healthz, /readyz, /metrics, /v0/openapi.json and /docs.',
    )
    .action(cli.action((options: ServeOptions) => serve(options, cli.io)));
}

async function serve(options: ServeOptions, io: CliIo): Promise<ExitCode> {
  // Listen for signals before anything else: one that arrives right after the listening
  // line (or during startup) must still stop the server cleanly.
  const stopSignal = new Promise<StopReason>((resolve) => {
    watchStopRequests(io, (reason, first) => {
      // A second signal while stopping: stop now.
      if (!first) {
        io.err.write(`${reason} again: exiting without waiting\n`);
        io.exit(1);
      }
      resolve(reason);
    });
  });
  // commander hands an environment value over unparsed.
  const port = typeof options.port === 'string' ? parsePortFromEnv(options.port) : options.port;
  const requestTimeout = secondsOrFail(options.requestTimeout, 'NETFORM_REQUEST_TIMEOUT');
  const shutdownTimeout = secondsOrFail(options.shutdownTimeout, 'NETFORM_SHUTDOWN_TIMEOUT');
  const tls = tlsOptions(options, io);
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
      legacyDeviceUpdates: options.legacyDeviceUpdates ?? envFlag(io.env.NETFORM_LEGACY_DEVICE_UPDATES, true),
      bodyLimit: options.bodyLimit,
      requestTimeoutMs: requestTimeout * 1000,
      shutdownTimeoutMs: shutdownTimeout * 1000,
      metrics: options.metrics !== false && !envFlag(io.env.NETFORM_METRICS, false),
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
  io.out.write(`listening on ${server.url}\n${server.metricsUrl ? `metrics on ${server.metricsUrl}\n` : ''}`);
  const signal = await stopSignal;
  io.err.write(`${signal}: finishing requests in flight (at most ${shutdownTimeout} s), then stopping\n`);
  await server.close();
  return ExitCode.ok;
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
