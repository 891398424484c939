/**
 * What a production deployment needs around /v0, none of it behind a token and none of it
 * showing a secret: liveness (/healthz), readiness (/readyz: the database answers and holds a
 * migrated, initialised schema), and Prometheus metrics (/metrics, on this server or another port).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UNMATCHED_ROUTE, type ServerMetrics } from './metrics.js';
import type { CounterSeries, HistogramSeries } from './request-metrics.js';
import type { StoreReader } from './store/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a token (health, readiness, metrics, the API description and its docs page). */
    public?: boolean;
  }
}

/** How long /readyz waits for the database before answering 503. */
export const READINESS_TIMEOUT_MS = 2000;

const PUBLIC = { public: true } as const;

export interface HealthOptions {
  store: StoreReader;
}

/** One read through the store, bounded in time; the answer never holds the error's text (it may name a host or user). */
async function checkDatabase(
  store: StoreReader,
): Promise<'ready' | 'database unreachable' | 'database not initialised'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'database unreachable'>((resolve) => {
    timer = setTimeout(() => resolve('database unreachable'), READINESS_TIMEOUT_MS);
  });
  const read = store.getSettings().then(
    (settings) => ('server_public_key' in settings ? ('ready' as const) : ('database not initialised' as const)),
    () => 'database unreachable' as const,
  );
  try {
    return await Promise.race([read, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(app: FastifyInstance, options: HealthOptions): void {
  const liveness = healthSchema('The process is up and serving HTTP.');
  app.get('/healthz', { config: PUBLIC, schema: liveness }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: PUBLIC, schema: readinessSchema() }, async (_request, reply) => {
    const state = await checkDatabase(options.store);
    if (state === 'ready') return { status: 'ready' };
    return reply.code(503).send({ status: 'unavailable', reason: state });
  });
}

/** `{"status": VALUE}`; enum, not const (the serialiser would write a const whatever the value). */
function statusBody(value: string) {
  return {
    type: 'object',
    properties: { status: { type: 'string', enum: [value] } },
    required: ['status'],
    additionalProperties: false,
  };
}

function healthSchema(description: string) {
  return {
    summary: 'Liveness',
    description,
    tags: ['operations'],
    security: [],
    response: {
      200: statusBody('ok'),
    },
  };
}

function readinessSchema() {
  const unavailable = {
    description: 'The database does not answer in time, or holds no initialised server (no settings).',
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['unavailable'] },
      reason: { type: 'string', enum: ['database unreachable', 'database not initialised'] },
    },
    required: ['status', 'reason'],
    additionalProperties: false,
  };
  return {
    summary: 'Readiness',
    security: [],
    description: `Ready when the database answers within ${READINESS_TIMEOUT_MS} ms and holds an initialised schema.`,
    tags: ['operations'],
    response: {
      200: statusBody('ready'),
      503: unavailable,
    },
  };
}

const METRICS_SCHEMA = {
  summary: 'Prometheus metrics',
  security: [],
  description: 'Metrics in the Prometheus text exposition format.',
  tags: ['operations'],
  response: {
    200: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } },
  },
};

/** GET /metrics on `app`, no token. */
export function metricsRoute(app: FastifyInstance, metrics: ServerMetrics): void {
  app.get('/metrics', { config: PUBLIC, schema: METRICS_SCHEMA }, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}

/** Counts and times one answer: its route pattern, method, status code and time taken in seconds. */
export type RequestRecorder = (route: string, method: string, statusCode: number, seconds: number) => void;

/** Counts and times every answer of `app` by route pattern (never the URL: ids stay out of labels). */
export function recordRequests(app: FastifyInstance, metrics: ServerMetrics): RequestRecorder {
  // Each label set's series once, looked up by route, then method, then status code: no key text
  // is built per answer, and the series only add to numbers (see request-metrics.ts).
  type Series = { timer: HistogramSeries; counters: Map<number, CounterSeries> };
  const byRoute = new Map<string, Map<string, Series>>();
  const record: RequestRecorder = (route, method, statusCode, seconds) => {
    let byMethod = byRoute.get(route);
    if (!byMethod) byRoute.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series)
      byMethod.set(method, (series = { timer: metrics.duration.series({ route, method }), counters: new Map() }));
    let counter = series.counters.get(statusCode);
    if (!counter) {
      counter = metrics.requests.series({ route, method, status: String(statusCode) });
      series.counters.set(statusCode, counter);
    }
    counter.inc();
    series.timer.observe(seconds);
  };
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    record(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  return record;
}
