/**
 * Builds the Fastify instance of the /v0 server from its options: the store, limits, logging.
 * Everything answers JSON: successes in the contract's envelope, failures with the bodies of
 * spec section 2, and never a stack trace.
 */
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyError,
  type FastifyInstance,
  type FastifyServerOptions,
} from 'fastify';
import type { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { bearerAuth, DEFAULT_AUTH_FAILURE_LIMIT, type AuthFailureLimit } from './auth.js';
import { createClock, type Clock } from './clock.js';
import { BadRequestError, NotFoundError, ValidationError } from './errors.js';
import { clientErrorHandler, frameworkErrorHandler } from './framework-errors.js';
import { instrumentStore, type ServerMetrics } from './metrics.js';
import { openApiRoute, registerOpenApi } from './openapi.js';
import { healthRoutes, metricsRoute, recordRequests } from './operations.js';
import { v0Routes } from './routes/index.js';
import type { ServiceContext } from './services/context.js';
import type { Store } from './store/index.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Longest path parameter (an id, or a user's email): longer ones are 404, as no object has one. */
export const MAX_PARAM_LENGTH = 1000;

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface AppOptions {
  store: Store;
  clock?: Clock;
  /** Request logs (pino, JSON lines); off when false or omitted. */
  logger?: boolean | { level?: LogLevel; stream?: Pick<Writable, 'write'> };
  /** Largest request body in bytes; larger ones get 413. Default 1 MiB. */
  bodyLimit?: number;
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
  /** Fastify's trustProxy: the proxies (addresses/CIDRs, comma-separated) whose X-Forwarded-For is believed. */
  trustProxy?: string | boolean;
}

/**
 * What must never reach a log line. Fastify's request serializer already leaves out headers and
 * bodies; these paths keep them out should anything log a request or body object directly.
 */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'req.body',
  'body',
  'password',
  'password_confirmation',
  'preshared_key',
  '*.password',
  '*.password_confirmation',
  '*.preshared_key',
  'client_secret',
  '*.client_secret',
  'token',
];

/** Method, path (never the query string: a client might put a token there) and client address. */
function requestFacts(request: { method?: string; url?: string; ip?: string }) {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? request.url.split('?')[0] : undefined,
    remoteAddress: request.ip,
  };
}

/**
 * The request log: one line per request, `request completed`, when it is answered, with the
 * request id, method, path and client address, status code and response time (ms); a request that
 * failed is logged by Fastify as before (`request errored`, through the redacting logger). The
 * line is built here from those facts only, so it needs no redaction pass (about a tenth of a
 * GET's cost); Fastify's default of a second line when the request arrives is not written.
 */
class AccessLog extends LogController {
  constructor(private readonly access: Logger) {
    super({});
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) return super.requestCompleted(error, request, reply);
    this.access.info(
      {
        reqId: request.id,
        req: requestFacts(request),
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
  }
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger, made only when something is logged through it. Fastify gives every request
 * a child logger bound to its request id, and pino's child() runs the redaction over the bindings.
 * Answered requests log through AccessLog instead, so nearly every request would make a child for
 * nothing; a message below the level makes none either (bench/RESULTS.md, fourth pass).
 */
class LazyRequestLogger {
  #made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: pino.ChildLoggerOptions,
  ) {}

  get #logger(): Logger {
    return (this.#made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#logger.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.#made || this.options.level ? this.#logger.isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }

  #log(method: LogMethod, args: unknown[]): void {
    if (!this.isLevelEnabled(method)) return;
    (this.#logger[method] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}

  child(bindings: Record<string, unknown>, options?: pino.ChildLoggerOptions): Logger {
    return this.#logger.child(bindings, options);
  }
}

function lazyRequestLogger(
  logger: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: pino.ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger;
}

/** The access log's own pino logger: same level and stream as the server's, no redaction (see AccessLog). */
function accessLogger(logger: true | { level?: LogLevel; stream?: Pick<Writable, 'write'> }): Logger {
  const settings = logger === true ? {} : logger;
  return pino({ level: settings.level ?? 'info' }, (settings.stream ?? process.stderr) as pino.DestinationStream);
}

function loggerOptions(logger: AppOptions['logger']): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const settings = logger === true ? {} : logger;
  return {
    level: settings.level ?? 'info',
    stream: settings.stream ?? process.stderr,
    redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
    serializers: {
      // Method and path only: no headers, and no query string (a client might put a token there).
      req: requestFacts,
    },
  } as FastifyServerOptions['logger'];
}

const BAD_REQUEST = { error: 'Bad Request' };
const NOT_FOUND = { error: 'not_found' };
const TOO_LARGE = { error: 'Payload Too Large' };
const INTERNAL = { error: 'Internal Server Error' };

function isClientError(error: FastifyError): boolean {
  return typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const metrics = options.metrics;
  const ctx: ServiceContext = {
    store: metrics ? instrumentStore(options.store, metrics.storeErrors) : options.store,
    clock: options.clock ?? createClock(),
    legacyDeviceUpdates: options.legacyDeviceUpdates ?? false,
  };
  const app = Fastify(<FastifyServerOptions & { https?: object }>{
    logger: loggerOptions(options.logger),
    // One log line per request, written when it is answered (see AccessLog).
    ...(options.logger
      ? { logController: new AccessLog(accessLogger(options.logger)), childLoggerFactory: lazyRequestLogger }
      : {}),
    bodyLimit,
    exposeHeadRoutes: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Failures before our routes run, answered with the contract's bodies (see framework-errors.ts).
    frameworkErrors: frameworkErrorHandler(ctx.store, ctx.clock),
    clientErrorHandler,
    ...(options.trustProxy !== undefined ? { trustProxy: options.trustProxy } : {}),
    ...(options.https ? { https: { cert: options.https.cert, key: options.https.key } } : {}),
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
    if (error instanceof NotFoundError) return reply.code(404).send(NOT_FOUND);
    if (error instanceof BadRequestError) return reply.code(400).send(BAD_REQUEST);
    if (error.statusCode === 413) return reply.code(413).send(TOO_LARGE);
    // Malformed JSON, bad encodings, bad URLs: the client's fault, said without details, since
    // parser messages quote the body (which may hold a password).
    if (isClientError(error) || error instanceof SyntaxError) return reply.code(400).send(BAD_REQUEST);
    request.log.error({ err: { type: error.name, message: error.message, stack: error.stack } }, 'request failed');
    return reply.code(500).send(INTERNAL);
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(NOT_FOUND));

  // Once closing, answers in flight say `Connection: close`, so a keep-alive client does not
  // hold the process open until its idle timeout after the last response.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback style, not async: it runs on every answer, and a promise each is measurable.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  await registerOpenApi(app);
  const failureLimit =
    options.authFailureLimit === false ? undefined : (options.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT);
  await app.register(bearerAuth, { ctx, failureLimit });
  if (metrics) {
    recordRequests(app, metrics);
    if (options.metricsRoute ?? true) metricsRoute(app, metrics);
  }
  healthRoutes(app, { store: ctx.store });
  openApiRoute(app);
  v0Routes(app, ctx);
  return app;
}

export type { FastifyBaseLogger };
