/** The flags of `netform serve`, with the environment variables that set them, and what they mean for the server. */
import { Option, type Command } from 'commander';
import {
  DEFAULT_AUTH_FAILURE_LIMIT,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  type AuthFailureLimit,
  type LogLevel,
} from '../../../server/index.js';
import { parseCidrOrAddress, parseIpAddress } from '../../model/index.js';
import { CliError } from '../exit.js';
import { parseByteCount, parseCount, parsePort, parseWholeSeconds } from './numbers.js';
import { dbOption } from './store.js';

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface ServeOptions {
  db: string;
  exitWithParent?: boolean;
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

export function addServeOptions(cmd: Command): Command {
  const env = (flags: string, description: string, name: string) => new Option(flags, description).env(name);
  return (
    cmd
      .addOption(dbOption(true))
      .addOption(env('--host <host>', 'address to listen on', 'NETFORM_HOST').default(DEFAULT_HOST))
      .addOption(
        env('--port <port>', 'port to listen on; 0 picks a free one', 'NETFORM_PORT')
          .default(DEFAULT_PORT)
          .argParser(parsePort),
      )
      .addOption(
        env('--log-level <level>', 'request log level (JSON lines on stderr)', 'NETFORM_LOG_LEVEL')
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
        env(
          '--request-timeout <seconds>',
          'longest time a request (headers and body) may take to arrive; then 408 and the connection closes',
          'NETFORM_REQUEST_TIMEOUT',
        )
          .default(DEFAULT_REQUEST_TIMEOUT_MS / 1000)
          .argParser(parseWholeSeconds),
      )
      .addOption(
        env(
          '--shutdown-timeout <seconds>',
          'on SIGTERM/SIGINT, how long requests in flight may take to finish before every connection is closed',
          'NETFORM_SHUTDOWN_TIMEOUT',
        )
          .default(DEFAULT_SHUTDOWN_TIMEOUT_MS / 1000)
          .argParser(parseWholeSeconds),
      )
      .addOption(
        env('--tls-cert <file>', 'serve HTTPS with this PEM certificate chain (with --tls-key)', 'NETFORM_TLS_CERT'),
      )
      .addOption(env('--tls-key <file>', 'the PEM private key of --tls-cert', 'NETFORM_TLS_KEY'))
      .option('--no-metrics', 'do not record or serve Prometheus metrics (env NETFORM_METRICS=0)')
      .addOption(
        env(
          '--metrics-port <port>',
          'serve /metrics on this port instead of the API port',
          'NETFORM_METRICS_PORT',
        ).argParser(parsePort),
      )
      .addOption(env('--metrics-host <host>', 'address of the metrics port (default: --host)', 'NETFORM_METRICS_HOST'))
      .addOption(
        env(
          '--auth-failure-limit <n>',
          'failed authentications per client address within the window before 429; 0: no limit',
          'NETFORM_AUTH_FAILURE_LIMIT',
        )
          .default(DEFAULT_AUTH_FAILURE_LIMIT.max)
          .argParser(parseCount),
      )
      .addOption(
        env('--auth-failure-window <seconds>', 'the window of --auth-failure-limit', 'NETFORM_AUTH_FAILURE_WINDOW')
          .default(DEFAULT_AUTH_FAILURE_LIMIT.windowMs / 1000)
          .argParser(parseWholeSeconds),
      )
      .addOption(
        env(
          '--auth-failure-exempt <list>',
          'client addresses/CIDR blocks never limited, comma-separated ("" for none)',
          'NETFORM_AUTH_FAILURE_EXEMPT',
        ).default(DEFAULT_AUTH_FAILURE_LIMIT.exempt.join(',')),
      )
      .addOption(
        env(
          '--trust-proxy <list|hops>',
          'proxies whose X-Forwarded-For names the client: addresses/CIDR blocks (comma-separated; loopback, ' +
            'linklocal, uniquelocal), or a hop count N when every request comes through exactly N proxies',
          'NETFORM_TRUST_PROXY',
        ),
      )
  );
}

/** NETFORM_LEGACY_DEVICE_UPDATES and NETFORM_METRICS: on or off in words. */
export function envFlag(text: string | undefined, value: boolean): boolean {
  const words = value ? /^(1|true|yes|on)$/i : /^(0|false|no|off)$/i;
  return text !== undefined && words.test(text.trim());
}

export function authFailureLimit(options: ServeOptions): AuthFailureLimit | false {
  // commander parses environment values with the flag's parser too.
  const max = options.authFailureLimit;
  if (max === 0) return false;
  const exempt = options.authFailureExempt
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const entry of exempt) {
    const ok = entry.includes('/') ? parseCidrOrAddress(entry) !== null : parseIpAddress(entry) !== null;
    if (!ok) throw new CliError(`--auth-failure-exempt: ${JSON.stringify(entry)} is not an IP address or CIDR block`);
  }
  return { max, windowMs: options.authFailureWindow * 1000, exempt };
}
