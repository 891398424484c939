/**
 * The real `netform serve` process: start, restart on the same file, signals, logs, options. What
 * serve makes of an environment variable that only switches a server option is tested in-process
 * (test/helpers/serve-in-process.ts); the process's own reading of its environment is the test
 * "reads NETFORM_DB, NETFORM_HOST and NETFORM_PORT ...".
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtCli } from '../../helpers/cli.js';
import { startServeInProcess, type ServeInProcess } from '../../helpers/serve-in-process.js';
import { startServerProcess, type TestServer } from '../../helpers/server.js';
import { testStoreKind } from '../../helpers/store.js';

const started: Array<TestServer | ServeInProcess> = [];
async function start(options?: Parameters<typeof startServerProcess>[0]): Promise<TestServer> {
  const server = await startServerProcess(options);
  started.push(server);
  return server;
}
async function startInProcess(options?: Parameters<typeof startServeInProcess>[0]): Promise<ServeInProcess> {
  const server = await startServeInProcess(options);
  started.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

const key = () => randomBytes(32).toString('base64');

describe('netform serve', () => {
  it('keeps every row across a restart of the process on the same file', async () => {
    const server = await start();
    const user = (await server.api('POST', '/v0/users', { user: { email: 'kept@example.com', role: 'admin' } })).body
      .data;
    const device = (
      await server.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: key(), name: 'kept' } })
    ).body.data;
    const rule = (
      await server.api('POST', '/v0/rules', { rule: { destination: '10.0.0.0/8', action: 'accept', user_id: user.id } })
    ).body.data;
    const before = await Promise.all(
      ['/v0/users', '/v0/devices', '/v0/rules'].map(async (p) => (await server.api('GET', p)).body),
    );
    const pid = server.pid();

    await server.restart();
    expect(server.lastExit).toEqual({ code: 0, signal: null });
    expect(server.pid()).not.toBe(pid);
    const after = await Promise.all(
      ['/v0/users', '/v0/devices', '/v0/rules'].map(async (p) => (await server.api('GET', p)).body),
    );
    expect(after).toEqual(before);
    expect((await server.api('GET', `/v0/devices/${device.id}`)).body.data.server_public_key).toBe(
      device.server_public_key,
    );
    expect((await server.api('GET', `/v0/rules/${rule.id}`)).body.data).toEqual(rule);
    // The next address continues after the kept device's.
    const next = (await server.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: key() } })).body
      .data;
    expect(next.ipv4).toBe('10.3.2.3');
  });

  it('SIGTERM lets a request in flight finish, then exits 0 with the write kept', async () => {
    const server = await start();
    const url = new URL(server.url);
    const body = JSON.stringify({ user: { email: 'in-flight@example.com' } });
    let inFlight!: () => void;
    const received = new Promise<void>((resolve) => (inFlight = resolve));
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/v0/users',
          method: 'POST',
          headers: {
            authorization: `Bearer ${server.token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            // The server answers `100 Continue` once it has the request: then it is in flight.
            expect: '100-continue',
          },
        },
        (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (c: string) => (text += c))
            .on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.on('continue', () => inFlight());
      req.write(body.slice(0, 10));
      // The rest of the body goes only once the server is shutting down.
      server.waitForStderr('SIGTERM: finishing requests in flight').then(() => req.end(body.slice(10)), reject);
    });
    await received;
    process.kill(server.pid()!, 'SIGTERM');
    const res = await response;
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text).data.email).toBe('in-flight@example.com');
    expect(await server.exited()).toEqual({ code: 0, signal: null });
    await server.restart();
    expect((await server.api('GET', '/v0/users/in-flight@example.com')).status).toBe(200);
  });

  it('SIGINT stops it too, with exit code 0', async () => {
    const server = await start();
    process.kill(server.pid()!, 'SIGINT');
    await server.waitForStderr('SIGINT: finishing requests in flight');
    expect(await server.exited()).toEqual({ code: 0, signal: null });
  });

  it('stdout carries only the listening line; stderr logs hold no token, password or preshared key', async () => {
    const server = await start();
    const password = `secret-${randomBytes(6).toString('hex')}-pass`;
    const psk = key();
    const user = (
      await server.api('POST', '/v0/users', {
        user: { email: 'log@example.com', password, password_confirmation: password },
      })
    ).body.data;
    await server.api('POST', '/v0/users', `{"user":{"email":"bad@example.com","password":"${password}"`);
    await server.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: key(), preshared_key: psk } });
    await server.api('GET', '/v0/users', undefined, { headers: { authorization: `Bearer ${server.token}x` } });
    await server.waitForStderr(/"statusCode":401/);
    expect(server.stdout()).toBe(`listening on ${server.url}\n`);
    const logs = server.stderr();
    const lines = logs
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    // One line per request, when it is answered: what, for whom, how it ended, how long it took.
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed');
    expect(requests.map((l) => `${l.req.method} ${l.req.url} ${l.res.statusCode}`)).toEqual([
      'POST /v0/users 201',
      'POST /v0/users 400',
      'POST /v0/devices 201',
      'GET /v0/users 401',
    ]);
    for (const l of requests) {
      expect(l).toMatchObject({ level: 30, reqId: expect.any(String), req: { remoteAddress: '127.0.0.1' } });
      expect(l.responseTime).toBeGreaterThan(0);
    }
    expect(logs).not.toContain('incoming request');
    for (const secret of [server.token, server.token.slice(3, 30), password, psk]) expect(logs).not.toContain(secret);
    expect(logs.toLowerCase()).not.toContain('bearer');
  });

  it('--log-level silent writes no request logs; --legacy-device-updates and its env var switch the emulation', async () => {
    const quiet = await start({ args: ['--log-level', 'silent', '--legacy-device-updates'] });
    const user = (await quiet.api('POST', '/v0/users', { user: { email: 'q@example.com' } })).body.data;
    const device = (await quiet.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: key() } })).body
      .data;
    const res = await quiet.api('PATCH', `/v0/devices/${device.id}`, {
      device: { use_default_mtu: false, mtu: 1400, name: 'legacy' },
    });
    expect(res.body.data).toMatchObject({ name: 'legacy', mtu: 1280, use_default_mtu: true });
    expect(quiet.stderr()).not.toContain('"statusCode"');

    for (const [value, legacy] of [
      ['1', true],
      ['0', false],
    ] as const) {
      const server = await startInProcess({ env: { NETFORM_LEGACY_DEVICE_UPDATES: value } });
      const u = (await server.api('POST', '/v0/users', { user: { email: 'e@example.com' } })).body.data;
      const d = (await server.api('POST', '/v0/devices', { device: { user_id: u.id, public_key: key() } })).body.data;
      const r = await server.api('PATCH', `/v0/devices/${d.id}`, { device: { use_default_mtu: false, mtu: 1400 } });
      expect(r.body.data.mtu, `NETFORM_LEGACY_DEVICE_UPDATES=${value}`).toBe(legacy ? 1280 : 1400);
    }
  });

  it('reads NETFORM_DB, NETFORM_HOST and NETFORM_PORT, defaults the file to ./netform.db, refuses a busy port', async ({
    skip,
  }) => {
    // Its own SQLite files, whatever the run's store: on PostgreSQL it would run the very same test again.
    skip(testStoreKind() === 'postgres', 'the same test as on SQLite');
    const dir = mkdtempSync(join(tmpdir(), 'netform-env-'));
    const children: ReturnType<typeof spawn>[] = [];
    const serve = (env: Record<string, string>, args: string[] = []) =>
      new Promise<{ firstLine: string; code: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [builtCli(), 'serve', ...args], {
          cwd: dir,
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        children.push(child);
        let stdout = '';
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        child.stdout.setEncoding('utf8').on('data', (c: string) => {
          stdout += c;
          if (stdout.includes('\n')) resolve({ firstLine: stdout.split('\n')[0]!, code: null, stderr });
        });
        child.on('exit', (code) => resolve({ firstLine: stdout.split('\n')[0]!, code, stderr }));
        child.on('error', reject);
      });
    try {
      const fromEnv = await serve({ NETFORM_DB: join(dir, 'env.db'), NETFORM_HOST: '127.0.0.1', NETFORM_PORT: '0' });
      expect(fromEnv.firstLine).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
      expect(existsSync(join(dir, 'env.db'))).toBe(true);

      const port = new URL(fromEnv.firstLine.slice('listening on '.length)).port;
      const busy = await serve({ NETFORM_PORT: port });
      expect(busy.code).toBe(1);
      expect(busy.stderr).toContain(`error: cannot start the server: port ${port} on 127.0.0.1 is already in use`);
      expect(busy.stderr).not.toMatch(/\n\s+at /);

      const flags = await serve({ NETFORM_PORT: '1' }, ['--port', '0']);
      expect(flags.firstLine).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
      expect(existsSync(join(dir, 'netform.db'))).toBe(true);

      const badPort = await serve({}, ['--port', '99999']);
      expect(badPort.code).toBe(1);
      expect(badPort.stderr).toContain('port');
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.all(
        children.map((c) =>
          c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r)),
        ),
      );
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
