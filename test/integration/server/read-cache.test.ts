/**
 * What a server process keeps between requests never hides a change (W3.9): on SQLite the reader
 * connection keeps tokens, settings, devices and rules until PRAGMA data_version says something
 * committed, and reads that number once per turn of the event loop. Each test reads an object
 * through server A first (so that it is kept), changes it through another process on the same
 * database (server B, or the `netform server token` CLI), and expects A's very next request to
 * see the change. On PostgreSQL nothing is kept; the same tests hold.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startReplica, startServerProcess, type TestServer } from '../../helpers/server.js';

const key = () => randomBytes(32).toString('base64');

let a: TestServer;
let b: TestServer & { kill(): Promise<void> };
let ownerId: string;

beforeAll(async () => {
  a = await startServerProcess();
  b = await startReplica(a);
  ownerId = (await a.api('POST', '/v0/users', { user: { email: 'owner@example.com' } })).body.data.id;
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

/** GETs `path` on A twice (the second answer from what A kept, on SQLite) and returns the answer. */
async function readTwice(path: string, token?: string) {
  const first = await a.api('GET', path, undefined, token ? { token } : {});
  const second = await a.api('GET', path, undefined, token ? { token } : {});
  // The same answer, but for the Date header (the two may fall in different seconds).
  const undated = ({ headers: { date: _date, ...headers }, ...rest }: typeof first) => ({ ...rest, headers });
  expect(undated(second)).toEqual(undated(first));
  return second;
}

describe('a server process sees at once what another process changed', () => {
  it('a device updated, then deleted, through another server', async () => {
    const made = await a.api('POST', '/v0/devices', {
      device: { user_id: ownerId, name: 'laptop', public_key: key() },
    });
    expect(made.status).toBe(201);
    const path = `/v0/devices/${made.body.data.id}`;
    expect((await readTwice(path)).body.data.name).toBe('laptop');

    expect((await b.api('PATCH', path, { device: { name: 'desktop', description: 'moved' } })).status).toBe(200);
    const after = await a.api('GET', path);
    expect(after.body.data).toMatchObject({ name: 'desktop', description: 'moved' });

    expect((await b.api('DELETE', path)).status).toBe(204);
    expect((await a.api('GET', path)).status).toBe(404);
  });

  it('a device created through another server, then changed through this one', async () => {
    const made = await b.api('POST', '/v0/devices', { device: { user_id: ownerId, name: 'phone', public_key: key() } });
    const path = `/v0/devices/${made.body.data.id}`;
    expect((await a.api('GET', path)).body.data.name).toBe('phone');
    // A's own write: seen by A's next read, too.
    expect((await a.api('PATCH', path, { device: { name: 'tablet' } })).status).toBe(200);
    expect((await a.api('GET', path)).body.data.name).toBe('tablet');
  });

  it('a rule updated through another server', async () => {
    const made = await a.api('POST', '/v0/rules', { rule: { destination: '10.9.8.7', action: 'accept' } });
    const path = `/v0/rules/${made.body.data.id}`;
    expect((await readTwice(path)).body.data.action).toBe('accept');
    expect((await b.api('PATCH', path, { rule: { action: 'drop' } })).status).toBe(200);
    expect((await a.api('GET', path)).body.data.action).toBe('drop');
  });

  it('a default changed through the CLI shows in the next device answer', async () => {
    const made = await a.api('POST', '/v0/devices', {
      device: { user_id: ownerId, name: 'router', public_key: key() },
    });
    const path = `/v0/devices/${made.body.data.id}`;
    expect((await readTwice(path)).body.data.mtu).not.toBe(1380);
    const set = await runCli(['server', 'defaults', 'set', 'mtu', '1380', '--db', a.dbPath]);
    expect(set.code, set.stderr).toBe(0);
    expect((await a.api('GET', path)).body.data.mtu).toBe(1380);
  });
});

describe('a token stops working on the next request after another process ends it', () => {
  it('revoked with `netform server token revoke` on the same database', async () => {
    const made = await runCli(['server', 'token', 'create', '--email', 'admin@example.com', '--db', a.dbPath]);
    expect(made.code, made.stderr).toBe(0);
    const token = made.stdout.trim();
    const device = await a.api('POST', '/v0/devices', {
      device: { user_id: ownerId, name: 'kept', public_key: key() },
    });
    const path = `/v0/devices/${device.body.data.id}`;
    expect((await readTwice(path, token)).status).toBe(200);

    const listed = JSON.parse((await runCli(['server', 'token', 'list', '--json', '--db', a.dbPath])).stdout) as {
      id: string;
    }[];
    const revoked = await runCli(['server', 'token', 'revoke', listed.at(-1)!.id, '--db', a.dbPath]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const refused = await a.api('GET', path, undefined, { token });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ errors: { auth: 'no_resource_found' } });
    expect((await a.api('GET', path)).status).toBe(200);
  });

  it("its owner demoted through another server (which revokes the owner's tokens)", async () => {
    const admin = await a.api('POST', '/v0/users', { user: { email: 'second-admin@example.com', role: 'admin' } });
    expect(admin.status).toBe(201);
    const made = await runCli(['server', 'token', 'create', '--email', 'second-admin@example.com', '--db', a.dbPath]);
    expect(made.code, made.stderr).toBe(0);
    const token = made.stdout.trim();
    const device = await a.api('POST', '/v0/devices', {
      device: { user_id: ownerId, name: 'seen', public_key: key() },
    });
    const path = `/v0/devices/${device.body.data.id}`;
    expect((await readTwice(path, token)).status).toBe(200);

    const demoted = await b.api('PATCH', `/v0/users/${admin.body.data.id}`, { user: { role: 'unprivileged' } });
    expect(demoted.status).toBe(200);
    expect((await a.api('GET', path, undefined, { token })).status).toBe(401);
  });
});
