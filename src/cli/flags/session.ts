/**
 * The connection flags resolved once, up front, into what the session opens (ops/session.ts):
 * the token read once (plan-key.ts seals with the same one), `--url`/`--embedded` checked once.
 * A flag that cannot work is kept as its error and raised when the operation opens its session,
 * so that bad files are reported before bad connection flags.
 */
import { checkEmail } from '../../model/user.js';
import { DEFAULT_EMBEDDED_DB } from '../../ops/embedded-db.js';
import { openSession, type Connector, type SessionSpec } from '../../ops/session.js';
import { CliError } from '../exit.js';
import type { CliIo } from '../io.js';
import { clientTuning, type ConnectionOptions } from './connection.js';
import { parseTimeout } from './numbers.js';
import { PEM_FILE_LIMIT, readFlagFile } from './files.js';
import { readToken } from './token.js';

/** The connection flags of one command, resolved. */
export interface Connection {
  /** The database of `--embedded`, or null for a server at --url. */
  embedded: string | null;
  /** `--url` typed together with `--embedded`. */
  exclusive: CliError | null;
  /** The token (not with --embedded): its value, or why there is none. */
  token: { value: string } | { error: CliError } | null;
  /** What the session opens, or the first flag that cannot work. */
  spec: SessionSpec | CliError;
  /** The same flags resolved again: a renewed --token-file read anew (a drift schedule's later runs). */
  again(): Connection;
}

export function resolveConnection(opts: ConnectionOptions, io: CliIo): Connection {
  const embedded = opts.embedded ? (opts.embedded === true ? DEFAULT_EMBEDDED_DB : opts.embedded) : null;
  const exclusive =
    opts.embedded && opts.urlGivenOnCommandLine
      ? new CliError('--url and --embedded exclude each other: choose one')
      : null;
  const token = embedded === null ? attempt(() => ({ value: readToken(opts, io.secrets) })) : null;
  const resolved = { embedded, exclusive, token };
  const spec = attempt(() => sessionSpec(opts, io, resolved));
  return { ...resolved, spec: 'error' in spec ? spec.error : spec, again: () => resolveConnection(opts, io) };
}

/**
 * The server the flags name, opened when the operation asks for it (a flag that cannot work fails
 * then). `readAgain`: every open after the first resolves the flags anew (a schedule that runs for
 * months picks up a renewed --token-file).
 */
export function connectorOf(connection: Connection, options: { readAgain?: boolean } = {}): Connector {
  let opened = false;
  return {
    embedded: connection.embedded !== null,
    open: async (signals) => {
      const { spec } = options.readAgain && opened ? connection.again() : connection;
      opened = true;
      if (spec instanceof CliError) throw spec;
      return openSession(spec, signals);
    },
  };
}

/** The token, or its error raised. */
export function tokenOf(connection: Connection): string {
  const { token } = connection;
  if (token === null) throw new Error('no token is read with --embedded');
  if ('error' in token) throw token.error;
  return token.value;
}

function attempt<T extends object>(make: () => T): T | { error: CliError } {
  try {
    return make();
  } catch (error) {
    if (error instanceof CliError) return { error };
    throw error;
  }
}

/** Checked in this order; the first flag that cannot work is the error. */
function sessionSpec(opts: ConnectionOptions, io: CliIo, resolved: Omit<Connection, 'spec' | 'again'>): SessionSpec {
  const timeoutMs = parseTimeout(opts.timeout);
  const checked = opts.tokenUser ? checkEmail(opts.tokenUser) : null;
  if (checked && !checked.ok) throw new CliError(`--token-user: "${opts.tokenUser}" ${checked.message}`);
  const tokenUser = checked?.ok ? checked.email : null;
  if (resolved.exclusive) throw resolved.exclusive;
  if (resolved.embedded !== null) {
    const onSecret = (value: string) => io.secrets.add(value);
    return { server: { embedded: resolved.embedded }, tuning: clientTuning(opts, timeoutMs, io), onSecret };
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
  const token = tokenOf(resolved as Connection);
  const ca = opts.caFile ? readFlagFile('--ca-file', opts.caFile, PEM_FILE_LIMIT).toString('utf8') : undefined;
  const server = { url: url.href, token, ca, insecure: opts.insecure ?? false };
  return { server, tokenUser, tuning: clientTuning(opts, timeoutMs, io) };
}
