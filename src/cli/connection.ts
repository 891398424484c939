/**
 * How a command reaches a server: `--url` + a token, or `--embedded`, which runs the bundled
 * server in-process on a local SQLite file with an admin token of its own, so netform works on a
 * fresh machine with no server at all.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { ApiClient, ApiError, fetchLiveState, retryLine, type ApiClientOptions } from '../client/index.js';
import type { LiveState } from '../model/state.js';
import { checkEmail } from '../model/user.js';
import { PlanKey, PlanKeyError } from '../plan/seal.js';
import { inertText } from '../render/escape.js';
import { rememberSecret } from './boundary.js';
import { CliError } from './exit.js';

export const DEFAULT_EMBEDDED_DB = '.netform/embedded.db';
/** The admin user the embedded server's token belongs to. */
export const EMBEDDED_ADMIN_EMAIL = 'netform-admin@embedded.local';

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

export interface Connection {
  client: ApiClient;
  /** The server's base URL (no credentials). */
  url: string;
  /** Email of the user the token belongs to, when known: that user is never deleted or demoted. */
  tokenUser: string | null;
  close(): Promise<void>;
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
 * `signal`: once aborted, calls in progress start no more retries (an interrupted apply).
 * `cancel`: once aborted, requests in flight are abandoned as well (reads no longer wanted).
 */
export async function openConnection(
  opts: ConnectionOptions,
  signal?: AbortSignal,
  cancel?: AbortSignal,
): Promise<Connection> {
  const timeoutMs = parseTimeout(opts.timeout);
  const tokenUser = opts.tokenUser ? checkedTokenUser(opts.tokenUser) : null;
  if (opts.embedded && opts.urlGivenOnCommandLine)
    throw new CliError('--url and --embedded exclude each other: choose one');
  if (opts.embedded)
    return openEmbedded(
      opts.embedded === true ? DEFAULT_EMBEDDED_DB : opts.embedded,
      clientTuning(opts, timeoutMs, signal, cancel),
    );
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
  const ca = opts.caFile ? readCaFile(opts.caFile) : undefined;
  const client = new ApiClient({
    url: url.href,
    token,
    ca,
    insecure: opts.insecure ?? false,
    ...clientTuning(opts, timeoutMs, signal, cancel),
  });
  return { client, url: client.baseUrl, tokenUser, close: async () => {} };
}

/**
 * How the client times out, retries and reports (the same for --url and --embedded): a line on
 * stderr per retry, and per request with --verbose. NETFORM_RETRY_DELAY_MS sets the first
 * backoff delay (tests use it to make error paths quick).
 */
export function clientTuning(
  opts: ConnectionOptions,
  timeoutMs: number,
  signal?: AbortSignal,
  cancel?: AbortSignal,
): Partial<ApiClientOptions> {
  const retries = parseRetries(opts.retries);
  const baseDelay = process.env.NETFORM_RETRY_DELAY_MS;
  const verbose = opts.verbose === true || process.env.NETFORM_LOG === 'debug';
  return {
    timeoutMs,
    retries,
    ...(baseDelay && /^\d+$/.test(baseDelay) ? { retryBaseMs: Number(baseDelay) } : {}),
    // The reason may quote the server's answer: escaped, so it cannot write to the terminal or start a line.
    onRetry: (event) => process.stderr.write(`${inertText(retryLine(event))}\n`),
    ...(verbose
      ? {
          onRequest: (e) =>
            process.stderr.write(`debug: ${e.method} ${e.path} ${e.status ?? e.problem ?? 'no answer'} ${e.ms} ms\n`),
        }
      : {}),
    ...(signal ? { signal } : {}),
    ...(cancel ? { cancel } : {}),
  };
}

function parseRetries(text: string | undefined): number {
  if (text === undefined) return 4;
  if (!/^\d+$/.test(text.trim()) || Number(text) > 20)
    throw new CliError(`--retries (NETFORM_RETRIES): expected a whole number from 0 to 20, got "${text}"`);
  return Number(text);
}

function readToken(opts: ConnectionOptions): string {
  if (opts.token && opts.tokenFile) throw new CliError('--token and --token-file exclude each other: choose one');
  if (opts.tokenFile) {
    let text: string;
    try {
      text = readFileSync(opts.tokenFile, 'utf8');
    } catch (error) {
      throw new CliError(
        `--token-file: cannot read ${opts.tokenFile} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    const token = text.trim();
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

/**
 * The key that seals saved plans and checks them (src/plan/seal.ts): NETFORM_PLAN_KEY when set,
 * otherwise the API token or, with --embedded, the embedded server's token. Known without
 * connecting, so a saved plan is checked before anything is opened; with --embedded, call it after
 * the connection when sealing (the first run issues the token).
 */
export function planKeyOf(opts: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): PlanKey {
  if (opts.embedded && opts.urlGivenOnCommandLine)
    throw new CliError('--url and --embedded exclude each other: choose one');
  try {
    if (opts.embedded) {
      const tokenPath = embeddedTokenPath(resolve(opts.embedded === true ? DEFAULT_EMBEDDED_DB : opts.embedded));
      return PlanKey.from(env, () => readEmbeddedToken(tokenPath), 'embedded-token');
    }
    return PlanKey.from(env, () => readToken(opts), 'token');
  } catch (error) {
    if (error instanceof PlanKeyError) throw new CliError(error.message);
    throw error;
  }
}

function readEmbeddedToken(tokenPath: string): string {
  let token = '';
  try {
    token = readFileSync(tokenPath, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new CliError(
        `cannot read the embedded token ${tokenPath} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
  }
  if (token === '')
    throw new CliError(
      `the embedded server has no token (${tokenPath}), and saved plans made with --embedded are sealed with it: plan again with --embedded, or set NETFORM_PLAN_KEY for both plan and apply`,
    );
  rememberSecret(token);
  return token;
}

function readCaFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(`--ca-file: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function parseTimeout(text: string | undefined): number {
  if (text === undefined) return 30_000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new CliError(`--timeout: expected a number of seconds above 0, got "${text}"`);
  return Math.round(seconds * 1000);
}

function checkedTokenUser(email: string): string {
  const checked = checkEmail(email);
  if (!checked.ok) throw new CliError(`--token-user: "${email}" ${checked.message}`);
  return checked.email;
}

/** Where the embedded server's admin token is kept: beside the database, readable by its owner only. */
export function embeddedTokenPath(dbPath: string): string {
  return `${dbPath}.token`;
}

async function openEmbedded(path: string, tuning: Partial<ApiClientOptions>): Promise<Connection> {
  const dbPath = resolve(path);
  mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
  // Loaded here so that commands against a remote server never load the server's code.
  const server = await import('../../server/index.js');
  const tokenPath = embeddedTokenPath(dbPath);
  const issue = async (): Promise<string> => {
    const { token } = await server.issueToken({ dbPath, email: EMBEDDED_ADMIN_EMAIL, days: 90 });
    rememberSecret(token);
    writeFileSync(tokenPath, `${token}\n`, { mode: 0o600 });
    chmodSync(tokenPath, 0o600);
    return token;
  };
  let token = existsSync(tokenPath) ? readFileSync(tokenPath, 'utf8').trim() : '';
  if (token === '') token = await issue();
  else if ((statSync(tokenPath).mode & 0o077) !== 0) chmodSync(tokenPath, 0o600);
  rememberSecret(token);

  const running = await server.startServer({ dbPath, host: '127.0.0.1', port: 0, logger: false });
  try {
    let client = new ApiClient({ ...tuning, url: running.url, token });
    try {
      await client.find('users', EMBEDDED_ADMIN_EMAIL);
    } catch (error) {
      // The kept token expired or was revoked: issue a new one (tokens last at most 90 days).
      if (!(error instanceof ApiError && error.isUnauthorized)) throw error;
      client = new ApiClient({ ...tuning, url: running.url, token: await issue() });
    }
    return { client, url: `embedded:${dbPath}`, tokenUser: EMBEDDED_ADMIN_EMAIL, close: () => running.close() };
  } catch (error) {
    await running.close();
    throw error;
  }
}

/**
 * The server's state (one list call per collection, and `/v0/configuration` only when
 * `configuration` is true); a refusal by the server is an expected failure.
 */
export async function readLiveState(
  connection: Connection,
  options: { configuration?: boolean } = {},
): Promise<LiveState> {
  try {
    return await fetchLiveState(connection.client, { configuration: options.configuration ? 'required' : false });
  } catch (error) {
    if (error instanceof ApiError) throw new CliError(`cannot read the server's state: ${error.message}`);
    throw error;
  }
}
