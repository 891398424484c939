/**
 * Failed authentications are rate limited per client address; valid tokens never are. The limit
 * itself is tested on the server in-process; `serve`'s flags and variables on real processes; the
 * refused values through run(argv, io) in-process (the bin's path of a refused `serve` stays
 * covered by process.test.ts, "reads NETFORM_DB, ... refuses a busy port").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
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

const BAD = 'nf_' + 'A'.repeat(43);
const limit = (max: number, windowMs = 60_000) => ({ authFailureLimit: { max, windowMs, exempt: [] } });

describe('failed authentication limit', () => {
  it('after the burst a failing client gets 429 with Retry-After; valid tokens from it still pass, and never count', async () => {
    const server = await track(startInProcessServer(limit(5)));
    // Many successes first: they do not use up the allowance.
    for (let i = 0; i < 30; i++) expect((await server.api('GET', '/v0/users')).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const res = await server.api('GET', '/v0/users', undefined, { token: BAD });
      expect(res.status, `failure ${i + 1}`).toBe(401);
      expect(res.body).toEqual({ errors: { auth: 'no_resource_found' } });
    }
    const limited = await server.api('GET', '/v0/users', undefined, { token: BAD });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'Too Many Requests' });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Every kind of failure is held back, with or without a token, on any path.
    expect((await server.api('POST', '/v0/rules', { rule: {} }, { token: null })).status).toBe(429);
    expect((await server.api('GET', '/v0/nothing', undefined, { token: 'abc' })).status).toBe(429);
    // The valid token is not slowed.
    expect((await server.api('GET', '/v0/users')).status).toBe(200);
    expect((await server.api('POST', '/v0/users', { user: { email: 'still@example.com' } })).status).toBe(201);
    // Health and metrics need no token, so are never limited.
    expect((await server.api('GET', '/healthz', undefined, { token: null })).status).toBe(200);
    expect(server.stderr()).toContain('too many failed authentications from this address');
    expect(server.stderr()).not.toContain(BAD.slice(3));
  });

  it("the warning goes through the request's logger: bound to its id, and not written below the log level", async () => {
    const warned = await track(startInProcessServer(limit(1)));
    const quiet = await track(startInProcessServer({ ...limit(1), logLevel: 'error' }));
    for (const server of [warned, quiet]) {
      expect((await server.api('GET', '/v0/users', undefined, { token: BAD })).status).toBe(401);
      expect((await server.api('GET', '/v0/users', undefined, { token: BAD })).status).toBe(429);
    }
    const warning = warned
      .stderr()
      .split('\n')
      .filter((l) => l.includes('too many failed authentications'))
      .map((l) => JSON.parse(l));
    expect(warning).toEqual([expect.objectContaining({ level: 40, reqId: expect.any(String) })]);
    expect(quiet.stderr()).not.toContain('too many failed authentications');
  });

  it('failures answered before routing (a malformed path) count too, and are held back alike', async () => {
    const server = await track(startInProcessServer(limit(2)));
    for (let i = 0; i < 2; i++)
      expect((await server.api('GET', '/v0/users/%zz', undefined, { token: BAD })).status).toBe(401);
    expect((await server.api('GET', '/v0/users/%zz', undefined, { token: BAD })).status).toBe(429);
    expect((await server.api('GET', '/v0/users', undefined, { token: BAD })).status).toBe(429);
    expect((await server.api('GET', '/v0/users/%zz')).status).toBe(400);
  });

  it('the window ends: failures are answered 401 again', async () => {
    const server = await track(startInProcessServer(limit(2, 1000)));
    for (let i = 0; i < 2; i++)
      expect((await server.api('GET', '/v0/users', undefined, { token: BAD })).status).toBe(401);
    const limited = await server.api('GET', '/v0/users', undefined, { token: BAD });
    expect(limited.status).toBe(429);
    // Retry-After tells the client when: waiting it out is the behaviour under test.
    await new Promise((resolve) => setTimeout(resolve, Number(limited.headers['retry-after']) * 1000 + 50));
    expect((await server.api('GET', '/v0/users', undefined, { token: BAD })).status).toBe(401);
  });

  it('counts per client address (IPv6 per /64): behind a trusted proxy, each X-Forwarded-For address has its own allowance', async () => {
    const server = await track(startInProcessServer({ ...limit(3), trustProxy: '127.0.0.1' }));
    const from = (address: string) => ({ token: BAD, headers: { 'x-forwarded-for': address } });
    for (let i = 0; i < 3; i++)
      expect((await server.api('GET', '/v0/users', undefined, from('192.0.2.10'))).status).toBe(401);
    expect((await server.api('GET', '/v0/users', undefined, from('192.0.2.10'))).status).toBe(429);
    expect((await server.api('GET', '/v0/users', undefined, from('192.0.2.11'))).status).toBe(401);
    // IPv6 clients are counted per /64: a host cannot escape by changing its address within it.
    for (let i = 1; i <= 3; i++)
      expect((await server.api('GET', '/v0/users', undefined, from(`2001:db8:1:2::${i}`))).status).toBe(401);
    expect((await server.api('GET', '/v0/users', undefined, from('2001:db8:1:2:ffff::9'))).status).toBe(429);
    expect((await server.api('GET', '/v0/users', undefined, from('2001:db8:1:3::1'))).status).toBe(401);
  });

  it('netform serve --trust-proxy: a hop count (1 is not the address 0.0.0.1) or addresses; bad values refused', async () => {
    let probes = 0;
    /** The client address the server logs for a request forwarded for `forwardedFor`. */
    const clientOf = async (server: TestServer, forwardedFor: string) => {
      const path = `/probe-${++probes}`;
      await server.api('GET', path, undefined, { headers: { 'x-forwarded-for': forwardedFor } });
      await server.waitForStderr(`"url":"${path}"`);
      const line = server
        .stderr()
        .split('\n')
        .find((l) => l.includes(`"url":"${path}"`))!;
      return JSON.parse(line).req.remoteAddress as string;
    };
    // One proxy in front: the client is the last X-Forwarded-For entry.
    const one = await track(startServerProcess({ args: ['--log-level', 'info', '--trust-proxy', '1'] }));
    expect(await clientOf(one, '203.0.113.7')).toBe('203.0.113.7');
    expect(await clientOf(one, '198.51.100.1, 203.0.113.7')).toBe('203.0.113.7');
    // Two: the entry before the last.
    const two = await track(startServerProcess({ args: ['--log-level', 'info'], env: { NETFORM_TRUST_PROXY: '2' } }));
    expect(await clientOf(two, '198.51.100.1, 203.0.113.7')).toBe('198.51.100.1');
    // Addresses: believed only from those (here not from loopback, where the test's request comes from).
    const other = await track(
      startServerProcess({ args: ['--log-level', 'info', '--trust-proxy', '10.0.0.0/8,10.1.2.3'] }),
    );
    expect(await clientOf(other, '203.0.113.7')).toBe('127.0.0.1');

    for (const [value, message] of [
      ['0', 'error: --trust-proxy 0: a hop count is from 1 to 100 (leave the flag out to trust no proxy)'],
      [
        'garbage',
        'error: --trust-proxy: "garbage" is not a hop count, an IP address, a CIDR block, or one of loopback, linklocal, uniquelocal',
      ],
      ['true', 'error: --trust-proxy: "true" is not a hop count'],
      ['10.0.0.0/8,10.0.0.0/33', 'error: --trust-proxy: "10.0.0.0/33" is not a hop count'],
      ['0.0.0.0/0', 'error: --trust-proxy: "0.0.0.0/0" would trust every address'],
      ['::/0', 'error: --trust-proxy: "::/0" would trust every address'],
    ]) {
      const res = await runCli(['serve', '--port', '0', '--db', `${one.dir}/x.db`, '--trust-proxy', value!]);
      expect(res.code, value).toBe(1);
      expect(res.stderr, value).toContain(message);
      expect(res.stderr.trim().split('\n'), value).toHaveLength(1);
    }
  }, 120_000);

  it('by default loopback is exempt (a local proxy would put every client on one address); 0 turns the limit off', async () => {
    const defaults = await track(startInProcessServer());
    for (let i = 0; i < 40; i++)
      expect((await defaults.api('GET', '/v0/users', undefined, { token: BAD })).status).toBe(401);
    const off = await track(startInProcessServer({ authFailureLimit: false }));
    for (let i = 0; i < 40; i++)
      expect((await off.api('GET', '/v0/users', undefined, { token: BAD })).status).toBe(401);
  });

  it('netform serve takes the limit from flags and environment variables, and refuses bad values', async () => {
    const server = await track(
      startServerProcess({
        args: ['--auth-failure-limit', '2', '--auth-failure-exempt', ''],
        env: { NETFORM_AUTH_FAILURE_WINDOW: '120' },
      }),
    );
    for (let i = 0; i < 2; i++)
      expect((await server.api('GET', '/v0/rules', undefined, { token: BAD })).status).toBe(401);
    const limited = await server.api('GET', '/v0/rules', undefined, { token: BAD });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(60);
    expect((await server.api('GET', '/v0/rules')).status).toBe(200);

    const bad = await runCli([
      'serve',
      '--port',
      '0',
      '--db',
      `${server.dir}/x.db`,
      '--auth-failure-exempt',
      '10.0.0.0/33',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('error: --auth-failure-exempt: "10.0.0.0/33" is not an IP address or CIDR block\n');
    const badEnv = await runCli(['serve', '--port', '0', '--db', `${server.dir}/x.db`], {
      env: { NETFORM_AUTH_FAILURE_LIMIT: 'many' },
    });
    expect(badEnv.code).toBe(1);
    expect(badEnv.stderr).toContain(
      "error: option '--auth-failure-limit <n>' value 'many' from env 'NETFORM_AUTH_FAILURE_LIMIT' is invalid",
    );
  });
});
