/** Health, readiness and Prometheus metrics of the bundled server, over real HTTP. */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import { startServerProcess, type TestServer } from '../../helpers/server.js';

const started: TestServer[] = [];
async function track(server: Promise<TestServer>): Promise<TestServer> {
  const s = await server;
  started.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

/** The value of one sample of a Prometheus text page (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? '').split(/,(?=[a-zA-Z_]\w*=")/).filter((s) => s !== '');
    if (wanted.every((w) => have.includes(w))) return Number(match[3]);
  }
  return 0;
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

describe('health and readiness', () => {
  it('/healthz and /readyz answer without a token (and with a bad one), holding nothing secret', async () => {
    const server = await track(startInProcessServer());
    for (const token of [null, 'nf_wrong']) {
      const health = await server.api('GET', '/healthz', undefined, { token });
      expect(health.status).toBe(200);
      expect(health.body).toEqual({ status: 'ok' });
      const ready = await server.api('GET', '/readyz', undefined, { token });
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready' });
    }
    // Only these are public: the API itself still needs a token.
    expect((await server.api('GET', '/v0/users', undefined, { token: null })).status).toBe(401);
    expect((await server.api('GET', '/healthz/x', undefined, { token: null })).status).toBe(401);
  });

  it('/readyz is 503 while the database holds no initialised server, and ready again once it does', async () => {
    const server = await track(startInProcessServer());
    const db = new Database(server.dbPath);
    try {
      const saved = db.prepare("SELECT value FROM settings WHERE key = 'server_public_key'").get() as { value: string };
      db.prepare("DELETE FROM settings WHERE key = 'server_public_key'").run();
      const res = await server.api('GET', '/readyz', undefined, { token: null });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'unavailable', reason: 'database not initialised' });
      expect((await server.api('GET', '/healthz', undefined, { token: null })).status).toBe(200);
      db.prepare("INSERT INTO settings (key, value) VALUES ('server_public_key', ?)").run(saved.value);
      expect((await server.api('GET', '/readyz', undefined, { token: null })).status).toBe(200);
    } finally {
      db.close();
    }
  });
});

describe('metrics', () => {
  it('counts requests by route pattern, method and status; times them; counts objects; no token or id in the page', async () => {
    const server = await track(startInProcessServer());
    const metricsUrl = `${server.url}/metrics`;
    const before = await scrape(metricsUrl);
    const usersOk = { route: '/v0/users', method: 'GET', status: '200' };
    const created = await server.api('POST', '/v0/users', { user: { email: 'counted@example.com' } });
    expect(created.status).toBe(201);
    for (let i = 0; i < 3; i++) await server.api('GET', '/v0/users');
    await server.api('GET', `/v0/users/${created.body.data.id}`);
    await server.api('GET', '/v0/users', undefined, { token: 'nf_wrong' });
    await server.api('GET', '/v0/nothing-here');

    const after = await scrape(metricsUrl);
    expect(
      sample(after, 'netform_http_requests_total', usersOk) - sample(before, 'netform_http_requests_total', usersOk),
    ).toBe(3);
    expect(sample(after, 'netform_http_requests_total', { route: '/v0/users', method: 'POST', status: '201' })).toBe(1);
    expect(sample(after, 'netform_http_requests_total', { route: '/v0/users/:id', method: 'GET', status: '200' })).toBe(
      1,
    );
    expect(sample(after, 'netform_http_requests_total', { route: '/v0/users', method: 'GET', status: '401' })).toBe(1);
    expect(sample(after, 'netform_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    const count = (text: string) =>
      sample(text, 'netform_http_request_duration_seconds_count', { route: '/v0/users', method: 'GET' });
    expect(count(after) - count(before)).toBe(4);
    expect(
      sample(after, 'netform_http_request_duration_seconds_bucket', { route: '/v0/users', method: 'GET', le: '+Inf' }),
    ).toBe(count(after));
    expect(
      sample(after, 'netform_objects', { kind: 'users' }) - sample(before, 'netform_objects', { kind: 'users' }),
    ).toBe(1);
    expect(sample(after, 'netform_objects', { kind: 'devices' })).toBe(0);
    expect(after).toContain('netform_store_errors_total');
    expect(after).toContain('netform_process_resident_memory_bytes');
    expect(after).not.toContain(created.body.data.id);
    expect(after).not.toContain(server.token.slice(3));
    expect(after).not.toContain('nf_wrong');
  });

  it('counts store errors: writes that fail because another process holds the write lock', async () => {
    const server = await track(startInProcessServer());
    const locker = new Database(server.dbPath);
    try {
      locker.exec('BEGIN IMMEDIATE');
      // The server waits out its busy timeout (5 s), then fails the write with 500.
      const res = await server.api('POST', '/v0/users', { user: { email: 'blocked@example.com' } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Internal Server Error' });
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    const page = await scrape(`${server.url}/metrics`);
    expect(sample(page, 'netform_store_errors_total', { operation: 'transaction' })).toBe(1);
    expect(sample(page, 'netform_http_requests_total', { route: '/v0/users', method: 'POST', status: '500' })).toBe(1);
    // Refusals are not store errors.
    expect((await server.api('POST', '/v0/users', { user: { email: 'nope' } })).status).toBe(422);
    expect(
      sample(await scrape(`${server.url}/metrics`), 'netform_store_errors_total', { operation: 'transaction' }),
    ).toBe(1);
  });

  it('--no-metrics: nothing recorded or served', async () => {
    const server = await track(startServerProcess({ args: ['--no-metrics'] }));
    expect((await server.api('GET', '/metrics', undefined, { token: null })).status).toBe(401);
    expect((await server.api('GET', '/metrics')).status).toBe(404);
    expect((await server.api('GET', '/healthz', undefined, { token: null })).status).toBe(200);
  });

  it('--metrics-port: /metrics on its own port (said on stdout), not on the API port', async () => {
    const server = await track(startServerProcess({ args: ['--metrics-port', '0'] }));
    const line = server.stdout().split('\n')[1] ?? '';
    const match = /^metrics on (http:\/\/127\.0\.0\.1:(\d+)\/metrics)$/.exec(line);
    expect(match, server.stdout()).not.toBeNull();
    expect(Number(match![2])).not.toBe(Number(new URL(server.url).port));
    await server.api('GET', '/v0/rules');
    const page = await scrape(match![1]!);
    expect(sample(page, 'netform_http_requests_total', { route: '/v0/rules', method: 'GET', status: '200' })).toBe(1);
    expect((await server.api('GET', '/metrics')).status).toBe(404);
    expect((await fetch(match![1]!.replace('/metrics', '/v0/users'))).status).toBe(404);
  });
});
