/**
 * Two `netform serve` processes on one PostgreSQL database behave as one server: the invariants
 * hold across them under concurrent writes, a write on one is read on the other at once, and an
 * apply interrupted by one replica dying (SIGKILL) converges through the other.
 */
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netform, workspace, type Workspace } from '../../helpers/workspace.js';
import { runCli } from '../../helpers/cli.js';
import { startReplica, startServerProcess, type TestServer } from '../../helpers/server.js';

const key = () => randomBytes(32).toString('base64');

/**
 * A load balancer in miniature: a loopback TCP proxy that sends each new connection to
 * `first`, or to `second` when `first` refuses it (dead).
 */
async function startFailoverProxy(first: TestServer, second: TestServer) {
  const counts = new Map<TestServer, number>();
  const sockets = new Set<Socket>();
  const portOf = (server: TestServer) => Number(new URL(server.url).port);
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const open = (targets: TestServer[]) => {
      const target = targets[0]!;
      const upstream = connect(portOf(target), '127.0.0.1');
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        counts.set(target, (counts.get(target) ?? 0) + 1);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
      upstream.once('error', () => {
        if (!connected && targets.length > 1) open(targets.slice(1));
        else client.destroy();
      });
    };
    open([first, second]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    connectionsTo: (target: TestServer) => counts.get(target) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let a: TestServer;
let b: TestServer & { kill(): Promise<void> };
let ws: Workspace;

beforeAll(async () => {
  a = await startServerProcess({ args: ['--log-level', 'info'] });
  b = await startReplica(a, { args: ['--log-level', 'info'] });
  ws = workspace();
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  ws?.cleanup();
});

/** The block of prefix `prefix` holding the IPv4 address `address`: all such blocks pairwise overlap. */
function blockAround(address: number, prefix: number): string {
  const start = prefix === 0 ? 0 : ((address >>> (32 - prefix)) << (32 - prefix)) >>> 0;
  return `${[24, 16, 8, 0].map((shift) => (start >>> shift) & 255).join('.')}/${prefix}`;
}

/** Alternates the replicas: request i goes to a when even, b when odd. */
const replica = (i: number) => (i % 2 === 0 ? a : b);

describe('two replicas on one database', () => {
  it("see each other's writes at once", async () => {
    for (let i = 0; i < 20; i++) {
      const created = await replica(i).api('POST', '/v0/users', { user: { email: `seen-${i}@example.com` } });
      expect(created.status).toBe(201);
      const read = await replica(i + 1).api('GET', `/v0/users/${created.body.data.id}`);
      expect(read.status).toBe(200);
      expect(read.body.data).toEqual(created.body.data);
    }
  });

  it('100 concurrent overlapping rule creates split between them: exactly one 201', async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        replica(i).api('POST', '/v0/rules', {
          rule: { action: 'drop', destination: blockAround(0xac140001, 8 + (i % 25)) },
        }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 422)).toHaveLength(99);
    for (const refused of answers.filter((r) => r.status === 422))
      expect(refused.body.errors.destination).toBeDefined();
    const rules = (await a.api('GET', '/v0/rules')).body.data.filter((r: { destination: string }) =>
      /^172\./.test(r.destination),
    );
    expect(rules).toHaveLength(1);
  });

  it('concurrent device creates on both get distinct addresses', async () => {
    // Four owners, as the default device limit is 10 per user.
    const owners = await Promise.all(
      [0, 1, 2, 3].map(
        async (n) => (await a.api('POST', '/v0/users', { user: { email: `owner-${n}@example.com` } })).body.data,
      ),
    );
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        replica(i).api('POST', '/v0/devices', { device: { user_id: owners[i % 4].id, public_key: key() } }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 201));
    const devices = answers.map((r) => r.body.data as { ipv4: string; ipv6: string });
    expect(new Set(devices.map((d) => d.ipv4)).size).toBe(24);
    expect(new Set(devices.map((d) => d.ipv6)).size).toBe(24);
  });

  it('an apply through a load balancer whose replica is killed with SIGKILL midway converges through the other', async () => {
    const users = Array.from({ length: 30 }, (_, i) =>
      [
        `  - email: person-${i}@apply.test`,
        '    devices:',
        `      - { name: laptop, public_key: "${key()}" }`,
        '    rules:',
        `      - { action: accept, destination: 10.77.${i}.0/24 }`,
      ].join('\n'),
    );
    const file = ws.write(
      'network.yaml',
      `version: 1\nsettings:\n  manage: { users: ["*@apply.test"], rules: ["10.77.0.0/16"] }\nusers:\n${users.join('\n')}\n`,
    );
    const balancer = await startFailoverProxy(b, a);
    try {
      const createdSoFar = b.stderr().split('"statusCode":201').length - 1;
      const applying = runCli(['apply', '-f', file, '--yes', '--parallelism', '2'], {
        env: { NETFORM_URL: balancer.url, NETFORM_TOKEN: a.token, NETFORM_TOKEN_USER: 'admin@example.com' },
        timeoutMs: 100_000,
      });
      // Killed once it has acknowledged 10 creates of this apply. (Anchored, and each group runs up
      // to exactly the next 201: no backtracking over the growing log.)
      await b.waitForStderr(
        new RegExp(`^(?:(?:(?!"statusCode":201)[^])*"statusCode":201){${createdSoFar + 10}}`),
        15_000,
      );
      await b.kill();
      const applied = await applying;
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(balancer.connectionsTo(a)).toBeGreaterThan(0);
    } finally {
      await balancer.close();
    }
    const again = await netform(a, ['plan', '-f', file]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('No changes: the server matches the desired state.');
    const devices = (await a.api('GET', '/v0/devices')).body.data.filter((d: { name: string }) => d.name === 'laptop');
    expect(devices).toHaveLength(30);
    // The dead replica comes back on the same database and answers the same.
    await b.restart();
    expect((await b.api('GET', '/v0/devices')).body.data).toEqual((await a.api('GET', '/v0/devices')).body.data);
  }, 60_000);

  it('concurrent deletes of the last two admins, each through the other replica, leave one, every time', async () => {
    const admins = async (token: string) =>
      ((await b.api('GET', '/v0/users', undefined, { token })).body.data as { email: string; role: string }[]).filter(
        (u) => u.role === 'admin',
      );
    let survivor = { email: 'admin@example.com', token: a.token };
    // Everyone else is made unprivileged, so that each round starts with exactly one admin.
    for (const user of (await a.api('GET', '/v0/users')).body.data as { id: string; email: string; role: string }[]) {
      if (user.role === 'admin' && user.email !== survivor.email)
        await a.api('PATCH', `/v0/users/${user.id}`, { user: { role: 'unprivileged' } });
    }
    for (let round = 0; round < 5; round++) {
      // `server token create` makes the new admin and its token.
      const email = `admin-${round}@example.com`;
      const issued = await runCli(['server', 'token', 'create', '--email', email, '--db', a.dbPath]);
      expect(issued.code, issued.stderr).toBe(0);
      const newcomer = { email, token: issued.stdout.trim() };
      expect(await admins(survivor.token)).toHaveLength(2);
      const deletes = await Promise.all([
        a.api('DELETE', `/v0/users/${survivor.email}`, undefined, { token: newcomer.token }),
        b.api('DELETE', `/v0/users/${newcomer.email}`, undefined, { token: survivor.token }),
      ]);
      expect(
        deletes.filter((r) => r.status >= 200 && r.status < 300),
        JSON.stringify(deletes.map((r) => r.status)),
      ).toHaveLength(1);
      if (deletes[0]!.status < 300) survivor = newcomer;
      const left = await admins(survivor.token);
      expect(left.map((u) => u.email)).toEqual([survivor.email]);
    }
  });
});
