/**
 * The bundled /v0 server: start it on a database file, and the administration that works on the
 * server machine without any token (issue, list and revoke tokens; show and change defaults).
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Writable } from 'node:stream';
import type { Socket } from 'node:net';
import { buildApp, httpServerOptions, type AppOptions, type LogLevel } from './app.js';
import type { AuthFailureLimit } from './auth.js';
import { createMetrics, type ServerMetrics } from './metrics.js';
import { metricsRoute } from './operations.js';
import { createClock } from './clock.js';
import { ensureSettings } from './services/settings.js';
import { openStore } from './store/open.js';

export {
  buildApp,
  DEFAULT_BODY_LIMIT,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type AppOptions,
  type LogLevel,
} from './app.js';
export { DEFAULT_AUTH_FAILURE_LIMIT, type AuthFailureLimit } from './auth.js';
export { createMetrics, type ServerMetrics } from './metrics.js';
export { AdminError } from './errors.js';
export { StoreOpenError } from './store/errors.js';
export { DEFAULT_KEYS, type DefaultKey, type ServerDefaults } from './services/settings.js';
export type { TokenSummary } from './services/tokens.js';
export { copyServerData, type CopyCounts } from './copy.js';
export {
  issueToken,
  listTokens,
  revokeToken,
  setServerDefault,
  showDefaults,
  type IssuedTokenResult,
} from './admin.js';

export interface StartServerOptions {
  /** The database location: a SQLite file path or a `postgres://` URL. */
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
  /** Longest time a request may take to arrive, in ms (then 408 and the connection closes). Default 60 s. */
  requestTimeoutMs?: number;
  /** Longest time its headers may take, in ms. Default 30 s (at most the request timeout). */
  headersTimeoutMs?: number;
  /** How long close() lets requests in flight finish before it closes their connections, in ms. Default 10 s. */
  shutdownTimeoutMs?: number;
  /** Prometheus metrics (default on): recorded, and served at /metrics on the API port unless `metricsPort` is given. */
  metrics?: boolean;
  /** Serve /metrics on this port instead (0 picks a free one), on `metricsHost` (default: `host`). */
  metricsPort?: number;
  metricsHost?: string;
  /** HTTPS with this certificate chain and key (PEM text). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Rate limit of failed authentications per client address (default DEFAULT_AUTH_FAILURE_LIMIT); false: off. */
  authFailureLimit?: AuthFailureLimit | false;
  /** Proxies (addresses/CIDRs, comma-separated, or a hop count) whose X-Forwarded-For names the client; true trusts any. */
  trustProxy?: string | number | boolean;
  /** For tests only: runs between a write request's authentication and its transaction (see AppOptions). */
  beforeWrite?: AppOptions['beforeWrite'];
}

export interface RunningServer {
  /** `http://HOST:PORT`, with the port actually bound. */
  url: string;
  host: string;
  port: number;
  app: FastifyInstance;
  /** `http(s)://HOST:PORT/metrics` when metrics are served on their own port, else null. */
  metricsUrl: string | null;
  /**
   * Stops accepting connections, lets requests in flight finish for at most the shutdown timeout,
   * then closes every connection still open (a client dripping a body, say), and closes the database.
   */
  close(): Promise<void>;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/** Keeps in `sockets` those of the server that are open (TLS ones before their handshake included). */
function trackSockets(app: FastifyInstance, sockets = new Set<Socket>()): Set<Socket> {
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

function urlOf(scheme: 'http' | 'https', host: string, port: number): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function boundPort(app: FastifyInstance, fallback: number): number {
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? address.port : fallback;
}

/** A second, minimal server for GET /metrics alone (no token, nothing else). */
async function startMetricsServer(
  metrics: ServerMetrics,
  options: StartServerOptions,
  host: string,
  sockets: Set<Socket>,
): Promise<FastifyInstance> {
  const { requestTimeout, http } = httpServerOptions(options);
  const serverOptions = {
    logger: false,
    requestTimeout,
    ...(options.tls
      ? { https: { ...http, requireHostHeader: true, ...options.tls } }
      : { http: { ...http, requireHostHeader: true } }),
  };
  const app = Fastify(serverOptions as FastifyServerOptions) as unknown as FastifyInstance;
  metricsRoute(app, metrics);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'not_found' }));
  trackSockets(app, sockets);
  await app.listen({ host, port: options.metricsPort });
  return app;
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const clock = createClock();
  const store = await openStore(options.dbPath, { create: true });
  let metricsApp: FastifyInstance | null = null;
  try {
    await ensureSettings(store);
    const metrics = options.metrics === false ? undefined : createMetrics(store);
    const separateMetrics = metrics !== undefined && options.metricsPort !== undefined;
    const app = await buildApp({
      store,
      clock,
      logger: options.logger ? { level: options.logLevel, stream: options.logStream } : false,
      bodyLimit: options.bodyLimit,
      requestTimeoutMs: options.requestTimeoutMs,
      headersTimeoutMs: options.headersTimeoutMs,
      legacyDeviceUpdates: options.legacyDeviceUpdates,
      metrics,
      metricsRoute: !separateMetrics,
      https: options.tls,
      authFailureLimit: options.authFailureLimit,
      trustProxy: options.trustProxy,
      beforeWrite: options.beforeWrite,
    });
    const host = options.host ?? DEFAULT_HOST;
    const scheme = options.tls ? 'https' : 'http';
    const sockets = trackSockets(app);
    await app.listen({ host, port: options.port ?? DEFAULT_PORT });
    const port = boundPort(app, options.port ?? DEFAULT_PORT);
    let metricsUrl: string | null = null;
    if (separateMetrics) {
      const metricsHost = options.metricsHost ?? host;
      try {
        metricsApp = await startMetricsServer(metrics, options, metricsHost, sockets);
      } catch (error) {
        await app.close();
        throw error;
      }
      metricsUrl = `${urlOf(scheme, metricsHost, boundPort(metricsApp, options.metricsPort!))}/metrics`;
    }
    let closing: Promise<void> | null = null;
    return {
      url: urlOf(scheme, host, port),
      host,
      port,
      app,
      metricsUrl,
      close() {
        closing ??= (async () => {
          // Requests in flight get until the shutdown timeout; then every connection still open
          // is closed, whatever it is doing, so a slow or stuck client cannot hold the stop.
          const force = setTimeout(() => {
            for (const socket of sockets) socket.destroy();
          }, options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
          try {
            await Promise.all([app.close(), metricsApp?.close()]);
          } finally {
            clearTimeout(force);
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
