/**
 * The connection flags of every command that talks to a server (`--url` + a token, or
 * `--embedded`), and the Connector they make: checked, in the order below, when the operation
 * opens its session (bad files are reported before bad connection flags).
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { checkEmail } from '../../model/user.js';
import { inertText } from '../../views/escape.js';
import {
  DEFAULT_EMBEDDED_DB,
  openSession,
  retryAnnouncer,
  type ClientTuning,
  type Connector,
  type SessionSpec,
} from '../../ops/session.js';
import { rememberSecret } from '../boundary.js';
import { CliError } from '../exit.js';
import { parseRetries, parseTimeout, wholeNumberFromEnv } from './numbers.js';

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

/** The server the flags name, opened when the operation asks for it. */
export function connectorOf(opts: ConnectionOptions): Connector {
  return { embedded: !!opts.embedded, open: async (signals) => openSession(await sessionSpec(opts), signals) };
}

async function sessionSpec(opts: ConnectionOptions): Promise<SessionSpec> {
  const timeoutMs = parseTimeout(opts.timeout);
  const checked = opts.tokenUser ? checkEmail(opts.tokenUser) : null;
  if (checked && !checked.ok) throw new CliError(`--token-user: "${opts.tokenUser}" ${checked.message}`);
  const tokenUser = checked?.ok ? checked.email : null;
  if (opts.embedded && opts.urlGivenOnCommandLine)
    throw new CliError('--url and --embedded exclude each other: choose one');
  if (opts.embedded) {
    const embedded = opts.embedded === true ? DEFAULT_EMBEDDED_DB : opts.embedded;
    return { server: { embedded }, tuning: clientTuning(opts, timeoutMs), onSecret: rememberSecret };
  }
  if (!opts.url) {
    throw new CliError(
      'no server given: pass --url URL (or set NETFORM_URL) with a token, or --embedded to run the bundled server on a local file',
    );
  }
  let url: URL;
  try {
    url = new URL(opts.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new CliError(`--url: not an http(s) URL: ${opts.url}`);
  }
  if (url.username || url.password)
    throw new CliError(
      '--url: credentials in the URL are not accepted; pass the token with --token, NETFORM_TOKEN or --token-file',
    );
  const token = readToken(opts);
  const ca = opts.caFile ? readFlagFile('--ca-file', opts.caFile) : undefined;
  const server = { url: url.href, token, ca, insecure: opts.insecure ?? false };
  return { server, tokenUser, tuning: clientTuning(opts, timeoutMs) };
}

/**
 * How the client times out, retries and reports: a line on stderr per retry, and per request with
 * --verbose. NETFORM_RETRY_DELAY_MS sets the first backoff delay (tests use it to make error paths quick).
 */
function clientTuning(opts: ConnectionOptions, timeoutMs: number): ClientTuning {
  const retries = parseRetries(opts.retries);
  const retryBaseMs = wholeNumberFromEnv(process.env.NETFORM_RETRY_DELAY_MS);
  const verbose = opts.verbose === true || process.env.NETFORM_LOG === 'debug';
  return {
    timeoutMs,
    retries,
    ...(retryBaseMs !== undefined ? { retryBaseMs } : {}),
    onRetry: retryAnnouncer((line) => process.stderr.write(`${inertText(line)}\n`)), // quotes the server: inert
    ...(verbose
      ? {
          onRequest: (e) =>
            process.stderr.write(`debug: ${e.method} ${e.path} ${e.status ?? e.problem ?? 'no answer'} ${e.ms} ms\n`),
        }
      : {}),
  };
}

export function readToken(opts: ConnectionOptions): string {
  if (opts.token && opts.tokenFile) throw new CliError('--token and --token-file exclude each other: choose one');
  if (opts.tokenFile) {
    const token = readFlagFile('--token-file', opts.tokenFile).trim();
    if (token === '') throw new CliError(`--token-file: ${opts.tokenFile} is empty`);
    rememberSecret(token);
    return token;
  }
  if (opts.token?.trim()) {
    rememberSecret(opts.token.trim());
    return opts.token.trim();
  }
  throw new CliError('no API token: pass --token TOKEN, set NETFORM_TOKEN, or pass --token-file PATH');
}

function readFlagFile(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(`${flag}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
