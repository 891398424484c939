/**
 * A GET of a device or rule whose answer the SQLite reader keeps is answered before Fastify's
 * lifecycle (server/kept-gets.ts): the same bytes and headers as the route's answer, counted in
 * the request metrics under the route's pattern, and never once anything it depends on changed
 * (a revoked token, a changed row, a changed default: seen by the very next request, by way of
 * the one PRAGMA data_version a request reads). Real HTTP over a raw socket against a server on
 * a real database file; an `onRequest` hook counts the requests that reach Fastify.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, issueToken, revokeToken, setServerDefault } from '../../../server/index.js';
import { createMetrics } from '../../../server/metrics.js';
import { ensureSettings } from '../../../server/services/settings.js';
import { SqliteStore } from '../../../server/store/index.js';

const key = () => randomBytes(32).toString('base64');

let dir: string;
let dbPath: string;
let token: string;
let tokenId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netform-kept-gets-'));
  dbPath = join(dir, 'netform.db');
  ({ token, id: tokenId } = await issueToken({ dbPath, email: 'admin@example.com' }));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Running {
  app: FastifyInstance;
  port: number;
  /** Requests that reached Fastify. */
  routed: () => number;
  logLines: string[];
  close: () => Promise<void>;
}

let running: Running | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(level: 'warn' | 'info' = 'warn'): Promise<Running> {
  const store = SqliteStore.open(dbPath);
  await ensureSettings(store);
  const logLines: string[] = [];
  const app = await buildApp({
    store,
    metrics: createMetrics(store),
    logger: { level, stream: { write: (line: string) => (logLines.push(line), true) } },
  });
  let routed = 0;
  app.addHook('onRequest', (_request, _reply, done) => {
    routed++;
    done();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  running = {
    app,
    port: (app.server.address() as { port: number }).port,
    routed: () => routed,
    logLines,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
  return running;
}

/** One request as written, on its own connection; the answer as received, its Date header blanked. */
function raw(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head}\r\n\r\n`));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text);
      if (end !== -1 && length && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1])) {
        socket.end();
        resolve(text.replace(/\r\nDate: [^\r]*/, '\r\nDate: -'));
      }
    });
  });
}

const get = (port: number, path: string, bearer = token) =>
  raw(port, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${bearer}`);

async function api(server: Running, method: string, path: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { data: { id: string } } };
}

describe('a kept GET answered before Fastify', () => {
  it('a device and a rule: the route’s bytes and headers, counted under the route, without reaching Fastify', async () => {
    const server = await start();
    const owner = await api(server, 'POST', '/v0/users', { user: { email: 'owner@example.com' } });
    const device = await api(server, 'POST', '/v0/devices', {
      device: { user_id: owner.body.data.id, public_key: key() },
    });
    const rule = await api(server, 'POST', '/v0/rules', { rule: { destination: '10.1.0.0/16' } });
    for (const path of [`/v0/devices/${device.body.data.id}`, `/v0/rules/${rule.body.data.id}`]) {
      const first = await get(server.port, path);
      const routed = server.routed();
      const again = [await get(server.port, path), await get(server.port, path), await get(server.port, path)];
      expect(server.routed()).toBe(routed);
      expect(first).toMatch(
        /^HTTP\/1\.1 200 OK\r\ncontent-type: application\/json; charset=utf-8\r\ncontent-length: \d+\r\n/,
      );
      for (const answer of again) expect(answer).toBe(first);
    }
    const metrics = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    expect(metrics).toContain('netform_http_requests_total{route="/v0/devices/:id",method="GET",status="200"} 4\n');
    expect(metrics).toContain('netform_http_requests_total{route="/v0/rules/:id",method="GET",status="200"} 4\n');
    expect(metrics).toContain('netform_http_request_duration_seconds_count{route="/v0/rules/:id",method="GET"} 4\n');
  });

  it('a change by another connection, a changed default and a revoked token are seen by the very next GET', async () => {
    const server = await start();
    const owner = await api(server, 'POST', '/v0/users', { user: { email: 'changes@example.com' } });
    const device = await api(server, 'POST', '/v0/devices', {
      device: { user_id: owner.body.data.id, public_key: key() },
    });
    const path = `/v0/devices/${device.body.data.id}`;
    const before = (await get(server.port, path), await get(server.port, path));

    // The row, through another store on the same file (as another process would).
    const other = SqliteStore.open(dbPath);
    await other.transaction((tx) => tx.updateDevice(device.body.data.id, { name: 'renamed' }));
    await other.close();
    const renamed = await get(server.port, path);
    expect(renamed).toContain('"name":"renamed"');
    expect(await get(server.port, path)).toBe(renamed);
    expect(renamed).not.toBe(before);

    // A default the device takes, set by the CLI's function.
    await setServerDefault({ dbPath, key: 'mtu', value: '1300' });
    const defaulted = await get(server.port, path);
    expect(defaulted).toContain('"mtu":1300');

    // The token, revoked by the CLI's function: refused at once (by Fastify's auth hook).
    await revokeToken({ dbPath, id: tokenId });
    const revoked = token;
    const refused = await get(server.port, path);
    ({ token, id: tokenId } = await issueToken({ dbPath, email: 'admin@example.com' }));
    expect(refused).toMatch(/^HTTP\/1\.1 401 /);
    expect(refused).toContain('{"errors":{"auth":"no_resource_found"}}');
    // Kept again (another token's GETs), the answer is still refused to the revoked token.
    const kept = (await get(server.port, path), await get(server.port, path));
    expect(kept).toMatch(/^HTTP\/1\.1 200 /);
    expect(await get(server.port, path, revoked)).toBe(refused);
  });

  it('anything else goes to Fastify: other tokens, paths, a query, no Host, a body, access lines at info', async () => {
    let server = await start();
    const owner = await api(server, 'POST', '/v0/users', { user: { email: 'else@example.com' } });
    const device = await api(server, 'POST', '/v0/devices', {
      device: { user_id: owner.body.data.id, public_key: key() },
    });
    const path = `/v0/devices/${device.body.data.id}`;
    await get(server.port, path);
    // Refusals come from Fastify's hooks (before the counting hook): a refused token, no Host.
    const refusals = [
      await get(server.port, path, `nf_${'a'.repeat(43)}`),
      await raw(server.port, `GET ${path} HTTP/1.1\r\nAuthorization: Bearer ${token}`),
    ];
    expect(refusals.map((a) => a.slice(0, 12))).toEqual(['HTTP/1.1 401', 'HTTP/1.1 400']);
    const routed = server.routed();
    const routes = [
      await get(server.port, `${path}?x=1`),
      await get(server.port, `${path}/`),
      await get(server.port, `/v0/devices/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`),
      await raw(
        server.port,
        `GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nContent-Length: 0`,
      ),
    ];
    expect(routes.map((a) => a.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 404', 'HTTP/1.1 200']);
    expect(server.routed()).toBe(routed + routes.length);
    // An id in capitals is the same device (as on the route), answered the same way.
    const kept = await get(server.port, path);
    expect(await get(server.port, `/v0/devices/${device.body.data.id.toUpperCase()}`)).toBe(kept);
    expect(server.routed()).toBe(routed + routes.length);
    await server.close();

    server = await start('info');
    await get(server.port, path);
    const lines = server.logLines.length;
    const atInfo = [await get(server.port, path), await get(server.port, path)];
    expect(server.routed()).toBe(3);
    expect(server.logLines.length).toBe(lines + 2);
    expect(atInfo[1]).toBe(atInfo[0]);
  });
});
