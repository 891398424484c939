/**
 * The server's logs (pino through Fastify): one line per answered request, written by AccessLog
 * from facts that need no redaction; every other line through a redacting logger, by way of a
 * request's child logger made only when something is logged through it.
 */
import {
  LogController,
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Where and from which level the server logs (default: info, to stderr). */
export interface LogSettings {
  level?: LogLevel;
  stream?: Pick<Writable, 'write'>;
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
    // Below the level (--log-level warn), nothing to build: the line's objects cost every request.
    if (!this.access.isLevelEnabled('info')) return;
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

/** Whether `logging` writes an access line per answered request (at info, the default, and below). */
export function writesAccessLines(logging: boolean | LogSettings | undefined): boolean {
  if (!logging) return false;
  const level = logging === true ? 'info' : (logging.level ?? 'info');
  return level !== 'warn' && level !== 'error' && level !== 'fatal' && level !== 'silent';
}

/** The access log's own pino logger: same level and stream as the server's, no redaction (see AccessLog). */
function accessLogger(logger: true | LogSettings): Logger {
  const settings = logger === true ? {} : logger;
  return pino({ level: settings.level ?? 'info' }, (settings.stream ?? process.stderr) as pino.DestinationStream);
}

function loggerOptions(logger: true | LogSettings): FastifyServerOptions['logger'] {
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

/** Fastify's options for `logging`: the redacting logger, the access log and the lazy child loggers. */
export function loggingOptions(
  logging: boolean | LogSettings | undefined,
): Pick<FastifyServerOptions, 'logger' | 'logController' | 'childLoggerFactory'> {
  if (!logging) return { logger: false };
  return {
    logger: loggerOptions(logging),
    // One log line per request, written when it is answered (see AccessLog).
    logController: new AccessLog(accessLogger(logging)),
    childLoggerFactory: lazyRequestLogger,
  };
}
