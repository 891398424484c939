/**
 * The connection flags of every command that talks to a server (`--url` + a token, or
 * `--embedded`), and how the client times out and retries; session.ts resolves them.
 */
import { Option, type Command } from 'commander';
import { apiErrorText, retryAnnouncer } from '../../views/api-error.js';
import { inertText } from '../../views/escape.js';
import { DEFAULT_EMBEDDED_DB } from '../../ops/embedded-db.js';
import type { ClientTuning } from '../../ops/session.js';
import type { CliIo } from '../io.js';
import { parseRetries, wholeNumberFromEnv } from './numbers.js';

export interface ConnectionOptions {
  url?: string;
  token?: string;
  tokenFile?: string;
  tokenUser?: string;
  /** `true` for `--embedded` without a path. */
  embedded?: boolean | string;
  caFile?: string;
  insecure?: boolean;
  timeout?: string;
  retries?: string;
  verbose?: boolean;
  /** Set by addConnectionOptions: --url was typed, not taken from NETFORM_URL. */
  urlGivenOnCommandLine?: boolean;
}

export function addConnectionOptions(cmd: Command): Command {
  cmd
    .addOption(new Option('--url <url>', 'base URL of the /v0 server').env('NETFORM_URL'))
    .addOption(new Option('--token <token>', 'API token of an admin').env('NETFORM_TOKEN'))
    .option('--token-file <path>', 'read the API token from this file')
    .addOption(
      new Option(
        '--token-user <email>',
        "email of the token's owner, who is never deleted or demoted (known by itself with --embedded)",
      ).env('NETFORM_TOKEN_USER'),
    )
    .option(
      '--embedded [path]',
      `run the bundled server in-process on a local SQLite file (default ${DEFAULT_EMBEDDED_DB})`,
    )
    .option('--ca-file <path>', 'trust the certificate authorities in this PEM file')
    .option('--insecure', "do not verify the server's TLS certificate")
    .option('--timeout <seconds>', 'timeout of one HTTP request; also the bound on one call with its retries', '30')
    .addOption(
      new Option('--retries <n>', 'retries of a failed request (network errors, 429, 5xx) within the timeout')
        .env('NETFORM_RETRIES')
        .default('4'),
    )
    .option('--verbose', 'log each HTTP request (method, path, status, time) on stderr; also NETFORM_LOG=debug');
  // Whether --url was typed or came from NETFORM_URL: --embedded overrides only the environment.
  cmd.hook('preAction', (_self, actionCommand) => {
    actionCommand.setOptionValue('urlGivenOnCommandLine', actionCommand.getOptionValueSource('url') === 'cli');
  });
  return cmd;
}

/**
 * How the client times out, retries and reports: a line on stderr per retry, and per request with
 * --verbose. NETFORM_RETRY_DELAY_MS sets the first backoff delay (tests use it to make error paths quick).
 */
export function clientTuning(opts: ConnectionOptions, timeoutMs: number, io: CliIo): ClientTuning {
  const retries = parseRetries(opts.retries);
  const retryBaseMs = wholeNumberFromEnv(io.env.NETFORM_RETRY_DELAY_MS);
  const verbose = opts.verbose === true || io.env.NETFORM_LOG === 'debug';
  return {
    timeoutMs,
    retries,
    ...(retryBaseMs !== undefined ? { retryBaseMs } : {}),
    describeError: apiErrorText,
    onRetry: retryAnnouncer((line) => io.err.write(`${inertText(line)}\n`)), // quotes the server: inert
    ...(verbose
      ? {
          onRequest: (e) =>
            io.err.write(`debug: ${e.method} ${e.path} ${e.status ?? e.problem ?? 'no answer'} ${e.ms} ms\n`),
        }
      : {}),
  };
}
