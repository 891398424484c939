/**
 * Builds the Fastify instance of the /v0 server from its options: the store, limits, logging.
 * Everything answers JSON: successes in the contract's envelope, failures with the bodies of
 * docs/api-v0.md section 2, and never a stack trace.
 */
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerAuth, DEFAULT_AUTH_FAILURE_LIMIT, type AuthFailureLimit } from './auth.js';
import { createClock, type Clock } from './clock.js';
import { AuthenticationError, BadRequestError, NotFoundError, ValidationError } from './errors.js';
import { clientErrorHandler, frameworkErrorHandler, UNAVAILABLE_RETRY_AFTER_SECONDS } from './framework-errors.js';
import { keptGets } from './kept-gets.js';
import { loggingOptions, writesAccessLines, type LogLevel, type LogSettings } from './logging.js';
import { instrumentStore, type ServerMetrics } from './metrics.js';
import { openApiRoute, registerOpenApi } from './openapi.js';
import { healthRoutes, metricsRoute, recordRequests, type RequestRecorder } from './operations.js';
import { appliedPlanRoutes } from './routes/applied-plans.js';
import { v0Routes } from './routes/index.js';
import { acceptingValidators, cachedSerializers } from './serializers.js';
import type { ServiceContext } from './services/context.js';
import { StoreUnavailableError } from './store/errors.js';
import type { Store, UserRow } from './store/types.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Longest time a request (headers and body) may take to arrive; then 408 and the connection closes. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Longest time the headers of a request may take to arrive (never more than the request timeout). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;
/** Longest path parameter (an id, or a user's email): longer ones are 404, as no object has one. */
export const MAX_PARAM_LENGTH = 1000;

export interface AppOptions {
  store: Store;
  clock?: Clock;
  /** Request logs (pino, JSON lines); off when false or omitted. */
  logger?: boolean | LogSettings;
  /** Largest request body in bytes; larger ones get 413. Default 1 MiB. */
  bodyLimit?: number;
  /** Longest time a whole request may take to arrive, in ms (then 408). Default 60 s. */
  requestTimeoutMs?: number;
  /** Longest time its headers may take, in ms (then 408). Default 30 s, at most `requestTimeoutMs`. */
  headersTimeoutMs?: number;
  /** Emulate upstream 0.7.26+, where device updates change only name and description. */
  legacyDeviceUpdates?: boolean;
  /** Record requests and store errors here (see createMetrics); none when omitted. */
  metrics?: ServerMetrics;
  /** Serve GET /metrics on this app (default true when `metrics` is given; false when another port serves it). */
  metricsRoute?: boolean;
  /** Rate limit of failed authentications per client address; false turns it off. */
  authFailureLimit?: AuthFailureLimit | false;
  /** Serve HTTPS with this certificate chain and key (PEM). */
  https?: { cert: string | Buffer; key: string | Buffer };
  /**
   * The proxies whose X-Forwarded-For is believed: addresses/CIDRs (comma-separated), or a hop
   * count N (the client is the address N hops back: the socket's peer and the last N - 1
   * X-Forwarded-For entries are proxies), or true (any).
   */
  trustProxy?: string | number | boolean;
  /** For tests only: runs between a write request's authentication and its transaction (ServiceContext.beforeWrite). */
  beforeWrite?: (actor: UserRow) => Promise<void>;
}

const BAD_REQUEST = { error: 'Bad Request' };
const NOT_FOUND = { error: 'not_found' };
const TOO_LARGE = { error: 'Payload Too Large' };
const INTERNAL = { error: 'Internal Server Error' };
const UNAVAILABLE = { error: 'Service Unavailable' };

function isClientError(error: FastifyError): boolean {
  return typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500;
}

/**
 * Node's timeouts of slow clients. A request (its headers, then its body) that has not arrived in
 * time gets 408 and its connection is closed, so a client dripping bytes holds a connection for
 * at most the request timeout, token or not. Node looks for such requests every
 * `connectionsCheckingInterval` (30 s by default, which would add up to 30 s to every bound);
 * once a second at most here. No `Host` required by Node: its own answer to a request without one
 * has no body, so the app answers it (the Host hook below).
 */
export function httpServerOptions(options: Pick<AppOptions, 'requestTimeoutMs' | 'headersTimeoutMs'>) {
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout);
  const connectionsCheckingInterval = Math.max(100, Math.min(1000, Math.floor(headersTimeout / 4)));
  return {
    requestTimeout,
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval, requireHostHeader: false },
  };
}

/**
 * Fastify's trustProxy for ours. Fastify 5 ignores a number (it trusts no hop), so a hop count is
 * given as proxy-addr's function of (address, hop index): the first `hops` hops are proxies.
 */
function trustProxyOption(trust: string | number | boolean) {
  if (typeof trust !== 'number') return trust;
  return (_address: string, hop: number) => hop < trust;
}

/** Whether a request declared a body (a length other than 0, or chunks) that has not arrived in full. */
function bodyStillComing(raw: FastifyRequest['raw']): boolean {
  if (raw.complete) return false;
  const length = raw.headers['content-length'];
  return (length !== undefined && length !== '0') || raw.headers['transfer-encoding'] !== undefined;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const { requestTimeout, http } = httpServerOptions(options);
  const metrics = options.metrics;
  const ctx: ServiceContext = {
    store: metrics ? instrumentStore(options.store, metrics.storeErrors) : options.store,
    clock: options.clock ?? createClock(),
    legacyDeviceUpdates: options.legacyDeviceUpdates ?? false,
    ...(options.beforeWrite ? { beforeWrite: options.beforeWrite } : {}),
  };
  const app = Fastify(<FastifyServerOptions & { https?: object }>{
    ...loggingOptions(options.logger),
    bodyLimit,
    requestTimeout,
    ...(options.https ? {} : { http }),
    exposeHeadRoutes: false,
    schemaController: { compilersFactory: { buildSerializer: cachedSerializers, buildValidator: acceptingValidators } },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Failures before our routes run, answered with the contract's bodies (see framework-errors.ts).
    frameworkErrors: frameworkErrorHandler(ctx.store, ctx.clock),
    clientErrorHandler,
    ...(options.trustProxy !== undefined ? { trustProxy: trustProxyOption(options.trustProxy) } : {}),
    ...(options.https ? { https: { ...http, cert: options.https.cert, key: options.https.key } } : {}),
  }) as unknown as FastifyInstance;

  // JSON whatever the Content-Type says (clients that send none still work); an empty body is
  // no body, so DELETE with a JSON content type and nothing in it is fine.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (request, body, done) => {
    if (typeof body !== 'string' || body.trim() === '') return done(null, undefined);
    parseJson(request, body, done);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ValidationError) return reply.code(422).send({ errors: error.errors });
    // The token stopped authenticating between the auth hook and the write transaction.
    if (error instanceof AuthenticationError) return request.server.refuseAuthentication(request, reply, error.body);
    if (error instanceof NotFoundError) return reply.code(404).send(NOT_FOUND);
    if (error instanceof BadRequestError) return reply.code(400).send(BAD_REQUEST);
    if (error.statusCode === 413) return reply.code(413).send(TOO_LARGE);
    // Malformed JSON, bad encodings, bad URLs: the client's fault, said without details, since
    // parser messages quote the body (which may hold a password).
    if (isClientError(error) || error instanceof SyntaxError) return reply.code(400).send(BAD_REQUEST);
    // The database is away (restart, failover, outage): expected in operation, worth a retry, and
    // no bug, so a warning without a stack.
    if (error instanceof StoreUnavailableError) {
      request.log.warn({ reason: error.message }, 'database unavailable: answered 503');
      return reply.code(503).header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS)).send(UNAVAILABLE);
    }
    request.log.error({ err: { type: error.name, message: error.message, stack: error.stack } }, 'request failed');
    return reply.code(500).send(INTERNAL);
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(NOT_FOUND));

  // Once closing, answers in flight say `Connection: close`, so a keep-alive client does not
  // hold the process open until its idle timeout after the last response. An answer given before
  // the request's body arrived in full (401 before reading it, 413, 429) closes the connection
  // too, instead of reading the rest of a body nobody wants (Node would drain it, at whatever pace
  // and length the client chose).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback style, not async: it runs on every answer, and a promise each is measurable.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    // (Fastify itself closes after a body it refused: a 413.)
    if (closing || reply.getHeader('connection') === 'close' || !bodyStillComing(request.raw))
      return done(null, payload);
    // An answer before the body was read (the auth hook's 401, say) can come while the rest of
    // the packet holding the headers is still being parsed: decide once that is done.
    setImmediate(() => {
      if (bodyStillComing(request.raw)) reply.header('connection', 'close');
      done(null, payload);
    });
  });
  await registerOpenApi(app);
  const failureLimit =
    options.authFailureLimit === false ? undefined : (options.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT);
  // HTTP/1.1 requires Host; a request without one is malformed: the contract's 400, before any
  // token is looked at (as for every request the HTTP parser refuses), and the connection closes.
  // Checked by the auth hook (one onRequest hook a request instead of two).
  const refuseRequest = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const raw = request.raw;
    if (raw.headers.host !== undefined || raw.httpVersionMajor !== 1 || raw.httpVersionMinor < 1) return false;
    void reply.code(400).header('connection', 'close').send(BAD_REQUEST);
    return true;
  };
  await app.register(bearerAuth, { ctx, failureLimit, refuseRequest });
  let record: RequestRecorder | undefined;
  if (metrics) {
    record = recordRequests(app, metrics);
    if (options.metricsRoute ?? true) metricsRoute(app, metrics);
  }
  healthRoutes(app, { store: ctx.store });
  openApiRoute(app);
  v0Routes(app, ctx);
  appliedPlanRoutes(app, ctx);
  // A GET by id whose answer the store keeps is answered before Fastify's lifecycle (kept-gets.ts).
  const reads = options.store.syncReads;
  const listeners = app.server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (reads && !writesAccessLines(options.logger) && listeners.length === 1) {
    const route = listeners[0]!;
    const answer = keptGets({ reads, clock: ctx.clock, record, closing: () => closing });
    app.server.removeListener('request', route);
    app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!answer(req, res)) route(req, res);
    });
  }
  return app;
}

export type { LogLevel };
