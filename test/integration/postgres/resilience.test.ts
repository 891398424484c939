/**
 * The server survives its database (review F4, F16): a real `netform serve` process on
 * PostgreSQL, through a loopback TCP proxy that cuts a connection inside a write transaction or
 * drops every connection (an outage). The request in flight gets 503 with Retry-After, the
 * process stays up, the pool reconnects by itself; while the database is away /v0 answers 503,
 * /readyz says why and /metrics still answers. A last test stops the cluster itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgProxy, type PgProxy } from '../../helpers/pg-proxy.js';
import {
  createDatabase,
  outageTestsSkipReason,
  startPostgresCluster,
  type PostgresCluster,
} from '../../helpers/postgres.js';
import { startServerProcess, type TestServer } from '../../helpers/server.js';
import { testPostgresUrl } from '../../helpers/store.js';

const UNAVAILABLE = { error: 'Service Unavailable' };

/** The server's database URL, through the proxy. */
function through(proxy: PgProxy): (dbPath: string) => string {
  return (dbPath) => {
    const url = new URL(dbPath);
    url.host = new URL(proxy.url).host;
    return url.toString();
  };
}

/** Error-level lines (pino level 50 and up) of the server's log. */
function errorLines(server: TestServer): string[] {
  return server
    .stderr()
    .split('\n')
    .filter((line) => /"level":(50|60)/.test(line));
}

describe('through a proxy that fails connections', () => {
  let proxy: PgProxy;
  let server: TestServer;
  beforeAll(async () => {
    proxy = await startPgProxy(testPostgresUrl());
    server = await startServerProcess({ args: ['--log-level', 'info'], serveDb: through(proxy) });
  });
  afterAll(async () => {
    await server?.stop();
    await proxy?.close();
  });

  it('a connection cut inside a write transaction fails that request with 503 and Retry-After; the process lives on', async () => {
    const { body: ruleOwner } = await server.api('POST', '/v0/users', { user: { email: 'owner@example.com' } });
    const writes: [string, string, unknown][] = [
      ['POST', '/v0/users', { user: { email: 'cut@example.com' } }],
      ['POST', '/v0/rules', { rule: { action: 'accept', destination: '10.9.0.0/16', user_id: ruleOwner.data.id } }],
      ['PATCH', '/v0/configuration', { configuration: { default_client_mtu: 1400 } }],
      ['DELETE', '/v0/users/owner@example.com', undefined],
    ];
    for (const [method, path, body] of writes) {
      const cut = proxy.cutInNextTransaction();
      const res = await server.api(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.body).toEqual(UNAVAILABLE);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      await cut;
    }
    // Nothing of those was written, and the pool serves again with new connections.
    expect((await server.api('GET', '/v0/users/cut@example.com')).status).toBe(404);
    expect((await server.api('GET', '/v0/users/owner@example.com')).status).toBe(200);
    expect((await server.api('GET', '/v0/rules')).body.data).toEqual([]);
    expect((await server.api('GET', '/v0/configuration')).body.data.default_client_mtu).not.toBe(1400);
    expect((await server.api('POST', '/v0/users', { user: { email: 'after@example.com' } })).status).toBe(201);
    expect(server.lastExit).toBeNull();
    // A warning each, never an error with a stack.
    expect(errorLines(server)).toEqual([]);
    expect(server.stderr()).toMatch(/"level":40[^\n]*database unavailable/);
    expect(server.stderr()).not.toMatch(/"stack"/);
  });

  it('while the database is away: /v0 answers 503, /readyz says why, /metrics still answers; then it recovers', async () => {
    proxy.down();
    try {
      for (const [method, path, body] of [
        ['GET', '/v0/users', undefined],
        ['POST', '/v0/users', { user: { email: 'during@example.com' } }],
        ['GET', '/v0/devices/00000000-0000-4000-8000-000000000000', undefined],
        // Answered before routing (a bad path), after the token lookup.
        ['GET', '/v0/users/%zz', undefined],
      ] as const) {
        const res = await server.api(method, path, body);
        expect(res.status, `${method} ${path}`).toBe(503);
        expect(res.body).toEqual(UNAVAILABLE);
        expect(res.headers['retry-after']).toBe('5');
      }
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'unavailable', reason: 'database unreachable' });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const metrics = await fetch(`${server.url}/metrics`);
      expect(metrics.status).toBe(200);
      const page = await metrics.text();
      expect(page).toMatch(/^netform_process_cpu_user_seconds_total \d/m);
      expect(page).toMatch(/^netform_http_requests_total\{[^}]*route="\/v0\/users"[^}]*status="503"\} \d/m);
      // The counts are left out rather than stale, and the failure is counted (metrics are
      // collected side by side, so the count shows from the next scrape on).
      expect(page).not.toMatch(/^netform_objects\{/m);
      const next = await (await fetch(`${server.url}/metrics`)).text();
      expect(next).toMatch(/^netform_store_errors_total\{operation="countObjects"\} [1-9]/m);
    } finally {
      proxy.up();
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect((await server.api('POST', '/v0/users', { user: { email: 'back@example.com' } })).status).toBe(201);
    expect(await (await fetch(`${server.url}/metrics`)).text()).toMatch(/^netform_objects\{kind="users"\} \d/m);
    expect(server.lastExit).toBeNull();
    expect(errorLines(server)).toEqual([]);
  });

  it('documents 503 for every /v0 route', async () => {
    const doc = (await server.api('GET', '/v0/openapi.json')).body;
    expect(doc.paths['/v0/users'].post.responses['503'].content['application/json'].schema).toMatchObject({
      properties: { error: { enum: ['Service Unavailable'] } },
    });
  });
});

const skipReason = outageTestsSkipReason();

describe.skipIf(skipReason !== null)(
  `PostgreSQL itself stopped and started${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let cluster: PostgresCluster;
    let server: TestServer | undefined;
    beforeAll(async () => {
      // A cluster of its own: this test stops it.
      cluster = await startPostgresCluster();
    });
    afterAll(async () => {
      await server?.stop().catch(() => {});
      await cluster?.stop().catch(() => {});
    });

    it('an immediate stop during writes neither ends the process nor needs a restart to recover', async () => {
      const url = await createDatabase(cluster.url);
      server = await startServerProcess({ args: ['--log-level', 'info'], location: url });
      // A burst of creates, each answered 201 or 503, while PostgreSQL goes away at once.
      let stopWriting = false;
      const answers = new Set<number | string>();
      const writer = (async () => {
        for (let i = 0; !stopWriting; i++) {
          try {
            const res = await server!.api('POST', '/v0/users', { user: { email: `burst-${i}@example.com` } });
            answers.add(res.status);
          } catch (error) {
            answers.add(`no answer: ${(error as Error).message}`);
            return;
          }
        }
      })();
      await server.waitForStderr(/"statusCode":201/);
      await cluster.halt('immediate');
      await server.waitForStderr(/"statusCode":503/);
      const down = await server.api('GET', '/v0/users');
      expect(down.status).toBe(503);
      expect(down.headers['retry-after']).toBe('5');
      await cluster.resume();
      stopWriting = true;
      await writer;
      expect([...answers].filter((s) => s !== 201 && s !== 503)).toEqual([]);
      expect((await server.api('POST', '/v0/users', { user: { email: 'after-restart@example.com' } })).status).toBe(
        201,
      );
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect(server.lastExit).toBeNull();
      expect(errorLines(server)).toEqual([]);
    }, 60_000);
  },
);
