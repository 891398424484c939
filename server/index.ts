/**
 * The bundled /v0 server: start it on a database file, and the administration that works on the
 * server machine without any token (issue, list and revoke tokens; show and change defaults).
 */
import type { FastifyInstance } from 'fastify';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { buildApp, type LogLevel } from './app.js';
import { createClock, type Clock } from './clock.js';
import { ensureSettings, readSettings, setDefault, type ServerDefaults } from './services/settings.js';
import { checkTokenRequest, issueApiToken, listApiTokens, revokeApiToken, TOKEN_DAYS, type TokenSummary } from './services/tokens.js';
import { MissingDatabaseError, openStore, type Store } from './store/index.js';
import { AdminError } from './errors.js';

export { buildApp, DEFAULT_BODY_LIMIT, type AppOptions, type LogLevel } from './app.js';
export { AdminError } from './errors.js';
export { DEFAULT_KEYS, type DefaultKey, type ServerDefaults } from './services/settings.js';
export type { TokenSummary } from './services/tokens.js';

export interface StartServerOptions {
  dbPath: string;
  host?: string;
  /** 0 picks a free port. Default 8080. */
  port?: number;
  /** Request logs as JSON lines on stderr (or `logStream`). Default off. */
  logger?: boolean;
  logLevel?: LogLevel;
  logStream?: Pick<Writable, 'write'>;
  legacyDeviceUpdates?: boolean;
  bodyLimit?: number;
}

export interface RunningServer {
  /** `http://HOST:PORT`, with the port actually bound. */
  url: string;
  host: string;
  port: number;
  app: FastifyInstance;
  /** Stops accepting connections, lets requests in flight finish, closes the database. */
  close(): Promise<void>;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;

function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const clock = createClock();
  const store = await openStore(options.dbPath, { create: true });
  try {
    await ensureSettings(store);
    const app = await buildApp({
      store,
      clock,
      logger: options.logger ? { level: options.logLevel, stream: options.logStream } : false,
      bodyLimit: options.bodyLimit,
      legacyDeviceUpdates: options.legacyDeviceUpdates,
    });
    const host = options.host ?? DEFAULT_HOST;
    await app.listen({ host, port: options.port ?? DEFAULT_PORT });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? DEFAULT_PORT);
    let closing: Promise<void> | null = null;
    return {
      url: urlOf(host, port),
      host,
      port,
      app,
      close() {
        closing ??= (async () => {
          try {
            await app.close();
          } finally {
            await store.close();
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * Runs `fn` on the store of a database file and closes it. Only `create` (serve and token create,
 * the first step of setting up a server) makes a missing file; otherwise a missing file is an
 * AdminError naming the full path, and nothing is created.
 */
async function withStore<T>(
  dbPath: string,
  fn: (store: Store, clock: Clock, created: boolean) => Promise<T>,
  create = false,
): Promise<T> {
  let store: Store;
  try {
    store = await openStore(dbPath, { create });
  } catch (error) {
    if (error instanceof MissingDatabaseError) {
      throw new AdminError(
        `no database at ${error.path} (check --db / NETFORM_DB); only "netform serve" and ` +
          '"netform server token create" create a new one',
      );
    }
    throw error;
  }
  try {
    await ensureSettings(store);
    return await fn(store, createClock(), (store as { created?: boolean }).created === true);
  } finally {
    await store.close();
  }
}

export interface IssuedTokenResult {
  token: string;
  userCreated: boolean;
  id: string;
  expiresAt: string;
  /** The full path of the database file when this call created it, else null. */
  createdDatabase: string | null;
}

/**
 * Issues an API token for the admin `email`, creating that admin when no user has the email,
 * and the database file when it does not exist (the first step of setting up a server). Refuses
 * (AdminError) a bad email or days before touching any file, an unprivileged or disabled user,
 * and a 26th live token.
 */
export async function issueToken(options: { dbPath: string; email: string; days?: number }): Promise<IssuedTokenResult> {
  checkTokenRequest(options.email, options.days ?? TOKEN_DAYS.default);
  return withStore(
    options.dbPath,
    async (store, clock, created) => {
      const issued = await issueApiToken(store, clock, options.email, options.days ?? TOKEN_DAYS.default);
      return {
        token: issued.token,
        userCreated: issued.userCreated,
        id: issued.id,
        expiresAt: issued.expiresAt,
        createdDatabase: created ? resolve(options.dbPath) : null,
      };
    },
    true,
  );
}

export async function listTokens(options: { dbPath: string }): Promise<TokenSummary[]> {
  return withStore(options.dbPath, (store, clock) => listApiTokens(store, clock));
}

export async function revokeToken(options: { dbPath: string; id: string }): Promise<{ alreadyRevoked: boolean }> {
  return withStore(options.dbPath, (store, clock) => revokeApiToken(store, clock, options.id));
}

export async function showDefaults(options: { dbPath: string }): Promise<ServerDefaults & { server_public_key: string }> {
  return withStore(options.dbPath, async (store) => {
    const settings = await readSettings(store);
    return { ...settings.defaults, server_public_key: settings.serverPublicKey };
  });
}

export async function setServerDefault(options: { dbPath: string; key: string; value: string }): Promise<{ value: unknown; notes: string[] }> {
  return withStore(options.dbPath, (store) => setDefault(store, options.key, options.value));
}
