/**
 * The server keeps its request counter and latency histogram itself (server/request-metrics.ts);
 * /metrics must read exactly as it did when prom-client's Counter and Histogram kept them. The
 * same observations go into both, and the text expositions are compared byte for byte: fed
 * directly (bucket bounds, values past the last bucket, label values that need escaping, a reset),
 * and fed by real requests to a real server (each answer's figures teed into prom-client's).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Histogram, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, issueToken } from '../../../server/index.js';
import { createMetrics } from '../../../server/metrics.js';
import { RequestCounter, RequestHistogram } from '../../../server/request-metrics.js';
import { ensureSettings } from '../../../server/services/settings.js';
import { SqliteStore } from '../../../server/store/index.js';

/** prom-client's request metrics, configured as the server configured them before it kept its own. */
function promClientMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'netform_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'netform_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by route pattern and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return { requests, duration };
}

/** The lines of the two request metrics in a page (HELP, TYPE and samples), in the page's order. */
function requestFamilies(page: string): string {
  return page
    .split('\n')
    .filter((line) => /(^# (HELP|TYPE) |^)netform_http_request(s_total|_duration_seconds)/.test(line))
    .join('\n');
}

/** A fixed stream of pseudo-random numbers in [0, 1): the same run every time. */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('the request metrics against prom-client', () => {
  it('the same observations give the same text: bounds, past the last bucket, escaped labels, series asked for twice, a reset', async () => {
    const oursOnly = new Registry();
    const requests = new RequestCounter({
      name: 'netform_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status code',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [oursOnly],
    });
    const duration = new RequestHistogram({
      name: 'netform_http_request_duration_seconds',
      help: 'Time from receiving a request to sending its answer, by route pattern and method',
      labelNames: ['route', 'method'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [oursOnly],
    });
    const theirs = new Registry();
    const prom = promClientMetrics(theirs);
    const routes = ['/v0/devices/:id', '/v0/users', 'unmatched', 'a "quoted" \\ route\nwith a newline'];
    const methods = ['GET', 'POST', 'PATCH'];
    const statuses = ['200', '201', '401', '404', '422', '500'];
    const values = [0, 0.001, 0.0025, 0.01, 10, 10.000001, 123, 1e-9, 0.1 + 0.2];
    const next = numbers(7);
    const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)]!;
    const feed = (n: number) => {
      for (let i = 0; i < n; i++) {
        const route = pick(routes);
        const method = pick(methods);
        const status = pick(statuses);
        const value = i % 5 === 0 ? pick(values) : next() * (i % 2 ? 0.02 : 3);
        // Series asked for on every observation here: the same label set must stay one series.
        requests.series({ route, method, status }).inc();
        duration.series({ method, route }).observe(value);
        prom.requests.labels({ route, method, status }).inc();
        prom.duration.labels({ route, method }).observe(value);
      }
    };
    feed(5000);
    const before = await theirs.metrics();
    expect(before).toContain('le="+Inf"');
    expect(before).toContain('\\"quoted\\" \\\\ route\\nwith');
    expect(await oursOnly.metrics()).toBe(before);
    expect(await oursOnly.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());

    oursOnly.resetMetrics();
    theirs.resetMetrics();
    expect(await oursOnly.metrics()).toBe(await theirs.metrics());
    feed(500);
    expect(await oursOnly.metrics()).toBe(await theirs.metrics());
  });

  describe('fed by real requests', () => {
    let dir: string;
    let close: () => Promise<void>;
    let url: string;
    let token: string;
    let ours: ReturnType<typeof createMetrics>;
    const theirs = new Registry();

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'netform-request-metrics-'));
      const dbPath = join(dir, 'netform.db');
      token = (await issueToken({ dbPath, email: 'admin@example.com' })).token;
      const store = SqliteStore.open(dbPath);
      await ensureSettings(store);
      ours = createMetrics(store);
      // Every answer's figures also go to prom-client's metrics, as they did before.
      const prom = promClientMetrics(theirs);
      const counterSeries = ours.requests.series.bind(ours.requests);
      const histogramSeries = ours.duration.series.bind(ours.duration);
      ours.requests.series = (labels) => {
        const series = counterSeries(labels);
        const teed = prom.requests.labels(labels);
        return { inc: () => (series.inc(), teed.inc()) };
      };
      ours.duration.series = (labels) => {
        const series = histogramSeries(labels);
        const teed = prom.duration.labels(labels);
        return { observe: (value) => (series.observe(value), teed.observe(value)) };
      };
      const app = await buildApp({ store, metrics: ours });
      await app.listen({ host: '127.0.0.1', port: 0 });
      url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      close = async () => {
        await app.close();
        await store.close();
      };
    });
    afterAll(async () => {
      await close?.();
      rmSync(dir, { recursive: true, force: true });
    });

    it('/metrics after GETs (kept ones too), creates, refusals and unknown paths reads as prom-client would have written it', async () => {
      const call = async (method: string, path: string, body?: unknown, bearer: string | null = token) => {
        const res = await fetch(`${url}${path}`, {
          method,
          headers: {
            ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: await res.text() };
      };
      const user = await call('POST', '/v0/users', { user: { email: 'metrics@example.com' } });
      expect(user.status).toBe(201);
      const id = JSON.parse(user.body).data.id as string;
      for (let i = 0; i < 20; i++) expect((await call('GET', `/v0/users/${id}`)).status).toBe(200);
      // GETs of a kept device and rule, answered before Fastify after the first (server/kept-gets.ts).
      const owner = JSON.parse((await call('POST', '/v0/users', { user: { email: 'owner@example.com' } })).body);
      const publicKey = Buffer.alloc(32, 9).toString('base64');
      const device = await call('POST', '/v0/devices', { device: { user_id: owner.data.id, public_key: publicKey } });
      const rule = await call('POST', '/v0/rules', { rule: { destination: '10.9.0.0/16' } });
      for (const made of [device, rule]) {
        const path = `/v0/${made === device ? 'devices' : 'rules'}/${JSON.parse(made.body).data.id}`;
        for (let i = 0; i < 20; i++) expect((await call('GET', path)).status).toBe(200);
      }
      expect((await call('GET', '/v0/users')).status).toBe(200);
      expect((await call('POST', '/v0/users', { user: { email: 'not an email' } })).status).toBe(422);
      expect((await call('GET', '/v0/users', undefined, 'nf_wrong')).status).toBe(401);
      expect((await call('GET', '/v0/nothing-here')).status).toBe(404);
      expect((await call('DELETE', `/v0/users/${id}`)).status).toBe(204);
      expect((await call('GET', `/v0/users/${id}`)).status).toBe(404);
      const page = await call('GET', '/metrics', undefined, null);
      expect(page.status).toBe(200);
      expect(requestFamilies(page.body)).toContain(
        'netform_http_requests_total{route="/v0/users/:id",method="GET",status="200"} 20',
      );
      expect(requestFamilies(page.body)).toContain(
        'netform_http_requests_total{route="/v0/devices/:id",method="GET",status="200"} 20',
      );

      // Read at one instant on both sides (the scrape above has been counted by now, on both).
      const expected = requestFamilies(await theirs.metrics());
      expect(expected.split('\n').length).toBeGreaterThan(40);
      expect(requestFamilies(await ours.registry.metrics())).toBe(expected);
    });
  });
});
