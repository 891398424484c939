/**
 * Prometheus metrics (prom-client), one registry per server so that several servers in one
 * process (tests, benches) never mix their figures: requests by route, method and status,
 * latency histograms, objects per kind (counted by the store when scraped, so replicas agree),
 * store errors, and Node's process metrics. Labels hold route patterns, never ids or tokens.
 * The request counter and histogram, touched by every answer, are the server's own
 * (request-metrics.ts), written out by the same registry.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { RequestCounter, RequestHistogram } from './request-metrics.js';
import type { StoreReader } from './store/index.js';

export interface ServerMetrics {
  registry: Registry;
  requests: RequestCounter<'route' | 'method' | 'status'>;
  duration: RequestHistogram<'route' | 'method'>;
  storeErrors: Counter<'operation'>;
}

/** The request counter's name, help text and labels (also those of prom-client's Counter it replaces). */
const REQUESTS_METRIC = {
  name: 'netform_http_requests_total',
  help: 'HTTP requests answered, by route pattern, method and status code',
  labelNames: ['route', 'method', 'status'] as const,
};

/** The latency histogram's name, help text, labels and buckets (also those of prom-client's Histogram it replaces). */
const DURATION_METRIC = {
  name: 'netform_http_request_duration_seconds',
  help: 'Time from receiving a request to sending its answer, by route pattern and method',
  labelNames: ['route', 'method'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
};

/** The route label of a request that matched no route (so unknown paths cannot grow the label set). */
export const UNMATCHED_ROUTE = 'unmatched';

export function createMetrics(store: StoreReader): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'netform_' });
  const requests = new RequestCounter({ ...REQUESTS_METRIC, registers: [registry] });
  const duration = new RequestHistogram({ ...DURATION_METRIC, registers: [registry] });
  const storeErrors = new Counter({
    name: 'netform_store_errors_total',
    help: 'Store operations that failed (database errors, not refusals), by operation',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'netform_objects',
    help: 'Objects held by the server, by kind (users, devices, rules)',
    labelNames: ['kind'] as const,
    registers: [registry],
    // A scrape while the database is away (or slow) still answers, with the process and HTTP
    // metrics: the count is left out (no stale figures) and counted as a store error.
    async collect() {
      this.reset();
      try {
        const counts = await withTimeout(store.countObjects(), OBJECT_COUNT_TIMEOUT_MS);
        for (const [kind, n] of Object.entries(counts)) this.set({ kind }, n);
      } catch {
        storeErrors.inc({ operation: 'countObjects' });
      }
    },
  });
  return { registry, requests, duration, storeErrors };
}

/** How long a scrape waits for the object counts (well inside Prometheus's default 10 s scrape timeout). */
export const OBJECT_COUNT_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  promise.catch(() => {}); // a late failure after the timeout is not unhandled
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

type AnyMethod = (...args: unknown[]) => unknown;

/** Each store (and each transaction's writer, the same object every time) is wrapped once. */
const instrumentedWriters = new WeakMap<object, WeakMap<object, object>>();

/** The names of an object's methods, through its prototype chain (a class instance's included). */
function methodNames(target: object): string[] {
  const names = new Set<string>();
  for (let proto: object | null = target; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof (target as Record<string, unknown>)[name] === 'function') names.add(name);
    }
  }
  return [...names];
}

/**
 * The store with every failing operation counted in `storeErrors`. Errors thrown by the work a
 * transaction runs (a service refusing a request) are not store errors; a failing read or write
 * inside it is, and so is a transaction that fails on its own (BEGIN or COMMIT).
 */
export function instrumentStore<S extends StoreReader>(store: S, storeErrors: ServerMetrics['storeErrors']): S {
  let writers = instrumentedWriters.get(storeErrors);
  if (!writers) instrumentedWriters.set(storeErrors, (writers = new WeakMap()));
  const known = writers.get(store);
  if (known) return known as S;
  const wrapped: Record<string, unknown> = {};
  writers.set(store, wrapped);
  const fromWork = new WeakSet<object>();
  for (const name of methodNames(store)) {
    const method = (store as unknown as Record<string, AnyMethod>)[name]!;
    if (name === 'transaction') {
      wrapped[name] = async (fn: (tx: unknown) => Promise<unknown>) => {
        try {
          return await method.call(store, async (tx: StoreReader) => {
            try {
              return await fn(instrumentStore(tx, storeErrors));
            } catch (error) {
              if (typeof error === 'object' && error !== null) fromWork.add(error);
              throw error;
            }
          });
        } catch (error) {
          if (typeof error !== 'object' || error === null || !fromWork.has(error)) storeErrors.inc({ operation: name });
          throw error;
        }
      };
    } else if (name === 'close') {
      wrapped[name] = (...args: unknown[]) => method.apply(store, args);
    } else {
      const counted = (error: unknown) => {
        storeErrors.inc({ operation: name });
        throw error;
      };
      // One handler on the store's own promise: every request makes several of these calls.
      wrapped[name] = (...args: unknown[]) => Promise.resolve(method.apply(store, args)).then(undefined, counted);
    }
  }
  return wrapped as unknown as S;
}
