/**
 * Failed runs do not stop the schedule: the server stopped and restarted (reached through a
 * loopback proxy, since the restarted test server listens on a new port), and a token that the
 * server refuses, renewed in the token file without restarting drift.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { startDrift, type DriftProcess } from '../../helpers/drift.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';

let server: TestServer;
let proxy: TcpProxy;
let dir: string;
let drift: DriftProcess | undefined;

beforeEach(async () => {
  [server, dir] = await Promise.all([startTestServer(), mkdtemp(join(tmpdir(), 'netform-drift-'))]);
  proxy = await startTcpProxy(server.url);
  await writeFile(
    join(dir, 'netform.yaml'),
    'version: 1\nusers:\n  - email: admin@example.com\n    role: admin\nrules:\n  - { action: drop, destination: 10.9.0.0/16 }\n',
  );
  expect((await server.api('POST', '/v0/rules', { rule: { action: 'drop', destination: '10.9.0.0/16' } })).status).toBe(
    201,
  );
});

afterEach(async () => {
  drift?.kill();
  drift = undefined;
  await Promise.all([server.stop(), proxy.close(), rm(dir, { recursive: true, force: true })]);
});

describe('netform drift --every, when runs fail', () => {
  it('reports failed runs while the server is down and recovers once it is back on the same URL', async () => {
    drift = startDrift(['-f', join(dir, 'netform.yaml'), '--every', '*/1 * * * * *', '--timeout', '2'], {
      NETFORM_URL: proxy.url,
      NETFORM_TOKEN: server.token,
    });
    await drift.waitForReport((r) => r.status === 'clean');

    // The server process stops and starts again on a new port; until the proxy points at it,
    // the URL drift uses answers nothing.
    await server.restart();
    const downAt = drift.reports.length;
    const failed = await drift.waitForReport((r) => r.status === 'failed', { from: downAt });
    expect(failed.error).toMatch(/dropped the connection|connection refused by|no answer from/);
    expect(failed).toMatchObject({
      server: proxy.url,
      changes: [],
      counts: { create: 0, update: 0, delete: 0, replace: 0 },
    });

    proxy.setTarget(server.url);
    const upAt = drift.reports.length;
    const recovered = await drift.waitForReport((r) => r.status === 'clean', { from: upAt });
    expect(recovered.server).toBe(proxy.url);
    expect(drift.child.exitCode).toBeNull();

    drift.child.kill('SIGTERM');
    expect((await drift.exited).code).toBe(0);
    expect(JSON.stringify(drift.reports) + drift.stderr()).not.toContain(server.token);
  });

  it('reports a refused token as a failed run and picks up a renewed token file at the next run', async () => {
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, `${server.token}\n`);
    drift = startDrift(['-f', join(dir, 'netform.yaml'), '--every', '*/1 * * * * *', '--token-file', tokenFile], {
      NETFORM_URL: server.url,
    });
    await drift.waitForReport((r) => r.status === 'clean');

    const wrongToken = `${server.token.slice(0, -4)}AAAA`;
    await writeFile(tokenFile, `${wrongToken}\n`);
    const refusedAt = drift.reports.length;
    const refused = await drift.waitForReport((r) => r.status === 'failed', { from: refusedAt });
    expect(refused.error).toMatch(/401 the token is unknown, revoked or expired/);

    await writeFile(tokenFile, `${server.token}\n`);
    const renewedAt = drift.reports.length;
    await drift.waitForReport((r) => r.status === 'clean', { from: renewedAt });

    drift.child.kill('SIGINT');
    expect((await drift.exited).code).toBe(0);
    expect(drift.stderr()).toMatch(/drift: SIGINT: stopping/);
    const everything = JSON.stringify(drift.reports) + drift.stderr();
    expect(everything).not.toContain(server.token);
    expect(everything).not.toContain(wrongToken);
  });
});
