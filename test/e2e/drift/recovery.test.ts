/**
 * Failed runs do not stop the schedule: the server stopped and restarted (reached through a
 * loopback proxy, since the restarted test server listens on a new port), and a token that the
 * server refuses, renewed in the token file without restarting drift. In this process on a clock
 * the test moves, one run per tick; the real process's stop is schedule.test.ts's smoke test
 * (SIGTERM) and safety-net.test.ts's drift --every row (SIGINT).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { startScheduledDrift, type ScheduledDrift } from '../../helpers/drift-in-process.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';

let server: TestServer;
let proxy: TcpProxy;
let dir: string;
let drift: ScheduledDrift | undefined;

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
  drift?.stop();
  await drift?.done;
  drift = undefined;
  await Promise.all([server.stop(), proxy.close(), rm(dir, { recursive: true, force: true })]);
});

describe('netform drift --every, when runs fail', () => {
  it('reports failed runs while the server is down and recovers once it is back on the same URL', async () => {
    drift = startScheduledDrift(['-f', join(dir, 'netform.yaml'), '--every', '*/1 * * * * *', '--timeout', '2'], {
      NETFORM_URL: proxy.url,
      NETFORM_TOKEN: server.token,
    });
    expect((await drift.runOnce()).status).toBe('clean');

    // The server stops and starts again on a new port; until the proxy points at it, the URL
    // drift uses answers nothing.
    await server.restart();
    const failed = await drift.runOnce();
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/dropped the connection|connection refused by|no answer from/);
    expect(failed).toMatchObject({
      server: proxy.url,
      changes: [],
      counts: { create: 0, update: 0, delete: 0, replace: 0 },
    });

    proxy.setTarget(server.url);
    const recovered = await drift.runOnce();
    expect(recovered.status).toBe('clean');
    expect(recovered.server).toBe(proxy.url);
    expect(drift.ended).toBe(false);

    drift.stop('SIGTERM');
    expect((await drift.done).code).toBe(0);
    expect(drift.reports.map((r) => r.status)).toEqual(['clean', 'failed', 'clean']);
    expect(JSON.stringify(drift.reports) + drift.stderr()).not.toContain(server.token);
  });

  it('reports a refused token as a failed run and picks up a renewed token file at the next run', async () => {
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, `${server.token}\n`);
    drift = startScheduledDrift(
      ['-f', join(dir, 'netform.yaml'), '--every', '*/1 * * * * *', '--token-file', tokenFile],
      {
        NETFORM_URL: server.url,
      },
    );
    expect((await drift.runOnce()).status).toBe('clean');

    const wrongToken = `${server.token.slice(0, -4)}AAAA`;
    await writeFile(tokenFile, `${wrongToken}\n`);
    const refused = await drift.runOnce();
    expect(refused.status).toBe('failed');
    expect(refused.error).toMatch(/401 the token is unknown, revoked or expired/);

    await writeFile(tokenFile, `${server.token}\n`);
    expect((await drift.runOnce()).status).toBe('clean');

    drift.stop('SIGINT');
    expect((await drift.done).code).toBe(0);
    expect(drift.stderr()).toMatch(/drift: SIGINT: stopping/);
    const everything = JSON.stringify(drift.reports) + drift.stderr();
    expect(everything).not.toContain(server.token);
    expect(everything).not.toContain(wrongToken);
  });
});
