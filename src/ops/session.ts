/**
 * A session with a server: a remote /v0 server reached with a token, or the bundled server run
 * in-process on a local SQLite file with an admin token of its own (`--embedded`), so netform
 * works on a fresh machine with no server at all.
 */
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ApiClient, ApiError, fetchConfiguration, fetchLiveState, type ApiClientOptions } from '../client/index.js';
import {
  FileReadError,
  readBoundedFileSync,
  SECRET_FILE_MAX_BYTES,
  sizeLimit,
  writeFileAtomically,
} from '../model/files.js';
import type { LiveState } from '../model/state.js';
import { OpError } from './errors.js';

/** The admin user the embedded server's token belongs to. */
export const EMBEDDED_ADMIN_EMAIL = 'netform-admin@embedded.local';

export interface Session {
  client: ApiClient;
  /** The server's base URL (no credentials), or `embedded:<path>`. */
  url: string;
  /** Email of the user the token belongs to, when known: that user is never deleted or demoted. */
  tokenUser: string | null;
  /** The bound on one request (and on one call with its retries). */
  timeoutMs: number;
  /**
   * The id of netform's own admin on an embedded server (the owner of the token it issued): outside
   * every scope, so left out of the live state every command reads. Unset for any other server,
   * where a user of the same email is an ordinary user.
   */
  ownUserId?: string;
  /**
   * The server's tunnel networks and its own addresses in them, when known: only the embedded
   * server's (`/v0` does not expose them).
   */
  tunnel?: { networks: { ipv4: string; ipv6: string }; serverAddresses: string[] };
  close(): Promise<void>;
}

/** How the client times out, retries and reports; the same for a remote and an embedded server. */
export type ClientTuning = Omit<ApiClientOptions, 'url' | 'token' | 'ca' | 'insecure' | 'signal' | 'cancel'>;

export interface SessionSpec {
  server: { url: string; token: string; ca?: string; insecure?: boolean } | { embedded: string };
  /** The token's owner (known by itself for an embedded server). */
  tokenUser?: string | null;
  tuning?: ClientTuning;
  /** Told every secret the session comes to hold (the embedded server's token), to keep it out of any output. */
  onSecret?: (value: string) => void;
}

/**
 * `signal`: once aborted, calls in progress start no more retries (an interrupted apply).
 * `cancel`: once aborted, requests in flight are abandoned as well (reads no longer wanted).
 */
export interface SessionSignals {
  signal?: AbortSignal;
  cancel?: AbortSignal;
}

/** How an operation reaches its server: opened when the operation is ready for it. */
export interface Connector {
  /**
   * Opening starts the bundled server on a local database: the files are read first, so that bad
   * files touch no database.
   */
  readonly embedded: boolean;
  open(signals?: SessionSignals): Promise<Session>;
}

export function connectTo(spec: SessionSpec): Connector {
  return { embedded: 'embedded' in spec.server, open: (signals) => openSession(spec, signals) };
}

export async function openSession(spec: SessionSpec, signals: SessionSignals = {}): Promise<Session> {
  const tuning: Partial<ApiClientOptions> = {
    ...spec.tuning,
    ...(signals.signal ? { signal: signals.signal } : {}),
    ...(signals.cancel ? { cancel: signals.cancel } : {}),
  };
  const timeoutMs = spec.tuning?.timeoutMs ?? 30_000;
  if ('embedded' in spec.server) return openEmbedded(spec.server.embedded, tuning, timeoutMs, spec.onSecret);
  const client = new ApiClient({ ...spec.server, insecure: spec.server.insecure ?? false, ...tuning });
  return { client, url: client.baseUrl, tokenUser: spec.tokenUser ?? null, timeoutMs, close: async () => {} };
}

/** Where the embedded server's admin token is kept: beside the database, readable by its owner only. */
export function embeddedTokenPath(dbPath: string): string {
  return `${dbPath}.token`;
}

/** The kept token, '' when there is none yet; a file that is not a small regular file is refused. */
function readEmbeddedToken(tokenPath: string): string {
  try {
    return readBoundedFileSync(tokenPath, sizeLimit(SECRET_FILE_MAX_BYTES, 'token_file')).toString('utf8').trim();
  } catch (error) {
    if (!(error instanceof FileReadError)) throw error;
    if (error.problem.code === 'missing') return '';
    throw new OpError('request', {
      code: error.rule ? 'embedded_token_refused' : 'embedded_token_unreadable',
      path: tokenPath,
      problem: error.problem,
    });
  }
}

async function openEmbedded(
  path: string,
  tuning: Partial<ApiClientOptions>,
  timeoutMs: number,
  onSecret: (value: string) => void = () => {},
): Promise<Session> {
  const dbPath = resolve(path);
  mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
  // Loaded here so that commands against a remote server never load the server's code.
  const server = await import('../../server/index.js');
  const tokenPath = embeddedTokenPath(dbPath);
  const issue = async (): Promise<string> => {
    const { token } = await server.issueToken({ dbPath, email: EMBEDDED_ADMIN_EMAIL, days: 90 });
    onSecret(token);
    writeFileAtomically(tokenPath, `${token}\n`, { mode: 0o600 });
    chmodSync(tokenPath, 0o600);
    return token;
  };
  let token = readEmbeddedToken(tokenPath);
  if (token === '') token = await issue();
  else if ((statSync(tokenPath).mode & 0o077) !== 0) chmodSync(tokenPath, 0o600);
  onSecret(token);

  const running = await server.startServer({ dbPath, host: '127.0.0.1', port: 0, logger: false });
  try {
    let client = new ApiClient({ ...tuning, url: running.url, token });
    let own;
    try {
      own = await client.find('users', EMBEDDED_ADMIN_EMAIL);
    } catch (error) {
      // The kept token expired or was revoked: issue a new one (tokens last at most 90 days).
      if (!(error instanceof ApiError && error.isUnauthorized)) throw error;
      client = new ApiClient({ ...tuning, url: running.url, token: await issue() });
      own = await client.find('users', EMBEDDED_ADMIN_EMAIL);
    }
    const url = `embedded:${dbPath}`;
    // netform's own admin is left out of the live state (below), so no token-owner guard is needed for it.
    const ownUserId = own ? { ownUserId: own.id } : {};
    const defaults = await server.showDefaults({ dbPath });
    const tunnel = {
      networks: { ipv4: defaults.ipv4_network, ipv6: defaults.ipv6_network },
      serverAddresses: [defaults.ipv4_address, defaults.ipv6_address],
    };
    return {
      client,
      url,
      tokenUser: own ? null : EMBEDDED_ADMIN_EMAIL,
      timeoutMs,
      ...ownUserId,
      tunnel,
      close: () => running.close(),
    };
  } catch (error) {
    await running.close();
    throw error;
  }
}

/**
 * The server's state (one list call per collection, and `/v0/configuration` only when
 * `configuration` is true); a refusal by the server is an expected failure.
 */
export async function readLiveState(session: Session, options: { configuration?: boolean } = {}): Promise<LiveState> {
  let live: LiveState;
  try {
    live = await fetchLiveState(session.client, { configuration: options.configuration ? 'required' : false });
  } catch (error) {
    throw serverRefused(error);
  }
  return session.ownUserId === undefined ? live : withoutUser(live, session.ownUserId);
}

/** The live state without one user, its devices and its rules: netform's own embedded admin is in no scope. */
function withoutUser(live: LiveState, id: string): LiveState {
  return {
    ...live,
    users: live.users.filter((user) => user.id !== id),
    devices: live.devices.filter((device) => device.user_id !== id),
    rules: live.rules.filter((rule) => rule.user_id !== id),
  };
}

/** A refusal by the server (an ApiError) as an expected failure; anything else as it is. */
export function serverRefused(error: unknown): unknown {
  return error instanceof ApiError
    ? new OpError('server', { code: 'server_unreadable', problem: error.message })
    : error;
}

/** The lists being read, with `/v0/configuration` read beside them (when the files declare `configuration:`). */
export async function withConfiguration(lists: Promise<LiveState>, session: Session): Promise<LiveState> {
  const [live, configuration] = await Promise.all([
    lists,
    fetchConfiguration(session.client, 'required').catch((error: unknown) => {
      throw serverRefused(error);
    }),
  ]);
  return configuration ? { ...live, configuration } : live;
}
