/**
 * Permission is decided inside the write transaction (review F14): the auth hook accepts a
 * request, then (through the server's test-only `beforeWrite` hook, run between the two) its
 * actor loses admin; the write transaction reads the token and its owner again, answers the 401 a
 * demoted admin gets, and writes nothing. Every write route, on both stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../../server/index.js';
import type { UserRow } from '../../../server/store/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { openSql, type SqlHandle } from '../../helpers/store.js';

const UNAUTHORIZED = { error: 'Unauthorized' };
const NO_RESOURCE = { errors: { auth: 'no_resource_found' } };
const PUBLIC_KEY = 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=';

let server: TestServer;
let db: SqlHandle;
/** What the hook does next, once: demote the actor (by SQL, or through /v0 by another admin). */
let demoteNext: ((actor: UserRow) => Promise<void>) | null = null;
let hookRuns = 0;

beforeAll(async () => {
  server = await startInProcessServer({
    beforeWrite: async (actor) => {
      hookRuns++;
      const demote = demoteNext;
      demoteNext = null;
      await demote?.(actor);
    },
  });
  db = await openSql(server.dbPath);
});

afterAll(async () => {
  await db?.close();
  await server?.stop();
});

/** Everything a write could change, to compare before and after. */
async function snapshot() {
  const users = (await server.api('GET', '/v0/users')).body.data;
  const devices = (await server.api('GET', '/v0/devices')).body.data;
  const rules = (await server.api('GET', '/v0/rules')).body.data;
  const configuration = (await server.api('GET', '/v0/configuration')).body.data;
  return { users, devices, rules, configuration };
}

describe('an admin demoted between authentication and its write transaction', () => {
  it('gets 401 on every write route, and nothing is written', async () => {
    // A second admin, whose token is demoted in the window; the test's own admin looks on.
    const actor = (await server.api('POST', '/v0/users', { user: { email: 'actor@example.com', role: 'admin' } })).body
      .data;
    const { token } = await issueToken({ dbPath: server.dbPath, email: 'actor@example.com' });
    const owner = (await server.api('POST', '/v0/users', { user: { email: 'owner@example.com' } })).body.data;
    const device = (
      await server.api('POST', '/v0/devices', { device: { user_id: owner.id, name: 'laptop', public_key: PUBLIC_KEY } })
    ).body.data;
    const rule = (await server.api('POST', '/v0/rules', { rule: { action: 'accept', destination: '10.7.0.0/16' } }))
      .body.data;
    const writes: [string, string, unknown][] = [
      ['POST', '/v0/users', { user: { email: 'new@example.com', role: 'admin' } }],
      ['PATCH', `/v0/users/${owner.id}`, { user: { role: 'admin' } }],
      ['PUT', '/v0/users/owner@example.com', { user: { email: 'renamed@example.com' } }],
      ['DELETE', `/v0/users/${owner.id}`, undefined],
      [
        'POST',
        '/v0/devices',
        { device: { user_id: owner.id, name: 'phone', public_key: PUBLIC_KEY.replace('a', 'b') } },
      ],
      ['PATCH', `/v0/devices/${device.id}`, { device: { name: 'renamed' } }],
      ['DELETE', `/v0/devices/${device.id}`, undefined],
      ['POST', '/v0/rules', { rule: { action: 'drop', destination: '10.8.0.0/16' } }],
      ['PUT', `/v0/rules/${rule.id}`, { rule: { destination: '10.6.0.0/16' } }],
      ['DELETE', `/v0/rules/${rule.id}`, undefined],
      ['PATCH', '/v0/configuration', { configuration: { default_client_mtu: 1400 } }],
    ];
    const before = await snapshot();
    for (const [method, path, body] of writes) {
      const runs = hookRuns;
      demoteNext = async (who) => {
        expect(who.id).toBe(actor.id);
        await db.run("UPDATE users SET role = 'unprivileged' WHERE id = ?", actor.id);
      };
      const res = await server.api(method, path, body, { token });
      expect(hookRuns, `${method} ${path}: the hook ran`).toBe(runs + 1);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body, `${method} ${path}`).toEqual(UNAUTHORIZED);
      // Admin again for the next route (by SQL: a demotion through /v0 would revoke the token).
      await db.run("UPDATE users SET role = 'admin' WHERE id = ?", actor.id);
    }
    expect(await snapshot()).toEqual(before);
    // Not demoted in the window, the same token writes.
    expect((await server.api('POST', '/v0/users', { user: { email: 'later@example.com' } }, { token })).status).toBe(
      201,
    );
  });

  it('demoted through /v0 by another admin in that window: 401 no_resource_found (its token is revoked)', async () => {
    await server.api('POST', '/v0/users', { user: { email: 'racer@example.com', role: 'admin' } });
    const { token } = await issueToken({ dbPath: server.dbPath, email: 'racer@example.com' });
    demoteNext = async () => {
      const demoted = await server.api('PATCH', '/v0/users/racer@example.com', { user: { role: 'unprivileged' } });
      expect(demoted.status).toBe(200);
    };
    const res = await server.api(
      'POST',
      '/v0/users',
      { user: { email: 'raced@example.com', role: 'admin' } },
      { token },
    );
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NO_RESOURCE);
    expect((await server.api('GET', '/v0/users/raced@example.com')).status).toBe(404);
  });

  it('deleted in that window: 401, nothing written', async () => {
    const made = (await server.api('POST', '/v0/users', { user: { email: 'gone@example.com', role: 'admin' } })).body
      .data;
    const { token } = await issueToken({ dbPath: server.dbPath, email: 'gone@example.com' });
    demoteNext = async () => {
      expect((await server.api('DELETE', `/v0/users/${made.id}`)).status).toBe(204);
    };
    const res = await server.api(
      'POST',
      '/v0/rules',
      { rule: { action: 'drop', destination: '10.5.0.0/16' } },
      { token },
    );
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NO_RESOURCE);
    expect((await server.api('GET', '/v0/rules')).body.data.some((r: any) => r.destination === '10.5.0.0/16')).toBe(
      false,
    );
  });
});
