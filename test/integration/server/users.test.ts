import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const USER_KEYS = [
  'id',
  'email',
  'role',
  'last_signed_in_at',
  'last_signed_in_method',
  'disabled_at',
  'inserted_at',
  'updated_at',
];

let server: TestServer;
beforeAll(async () => {
  server = await startInProcessServer();
});
afterAll(async () => {
  await server?.stop();
});

let counter = 0;
function email(prefix = 'user'): string {
  return `${prefix}${++counter}@example.com`;
}

describe('users: create', () => {
  it('creates an unprivileged user by default, answering 201 with Location of the UUID', async () => {
    const address = email();
    const res = await server.api('POST', '/v0/users', { user: { email: address } });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(res.body.data)).toEqual(USER_KEYS);
    expect(res.body.data).toMatchObject({
      email: address,
      role: 'unprivileged',
      disabled_at: null,
      last_signed_in_at: null,
      last_signed_in_method: null,
    });
    expect(res.body.data.id).toMatch(UUID);
    expect(res.body.data.inserted_at).toMatch(TIMESTAMP);
    expect(res.body.data.updated_at).toBe(res.body.data.inserted_at);
    expect(res.headers.location).toBe(`/v0/users/${res.body.data.id}`);
  });

  it('seed example: a short password without confirmation gets both errors together', async () => {
    const res = await server.api('POST', '/v0/users', { user: { email: email(), password: 'short' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      errors: { password: ['should be at least 12 character(s)'], password_confirmation: ["can't be blank"] },
    });
  });

  it('accepts a password with its confirmation and never returns password data', async () => {
    const res = await server.api('POST', '/v0/users', {
      user: { email: email(), password: 'correct horse battery', password_confirmation: 'correct horse battery' },
    });
    expect(res.status).toBe(201);
    expect(JSON.stringify(res.body)).not.toContain('correct horse');
    expect(Object.keys(res.body.data)).toEqual(USER_KEYS);
  });

  it.each([
    [
      { password: 'a'.repeat(65), password_confirmation: 'a'.repeat(65) },
      { password: ['should be at most 64 character(s)'] },
    ],
    [
      { password: 'long enough pass', password_confirmation: 'something else!' },
      { password_confirmation: ['does not match confirmation'] },
    ],
    [{ password: 'long enough pass', password_confirmation: '' }, { password_confirmation: ["can't be blank"] }],
  ])('password rules %#', async (fields, errors) => {
    const res = await server.api('POST', '/v0/users', { user: { email: email(), ...fields } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors });
  });

  it('makes an admin when asked', async () => {
    const res = await server.api('POST', '/v0/users', { user: { email: email(), role: 'admin' } });
    expect(res.status).toBe(201);
    expect(res.body.data.role).toBe('admin');
  });

  it.each([
    [{}, { email: ["can't be blank"] }],
    [{ email: '' }, { email: ["can't be blank"] }],
    [{ email: null }, { email: ["can't be blank"] }],
    [{ email: 'no-at-sign' }, { email: ['is invalid'] }],
    [{ email: 'two words@example.com' }, { email: ['is invalid'] }],
    [{ email: `${'a'.repeat(250)}@example.com` }, { email: ['is invalid'] }],
    [{ email: 'x@example.com', role: 'superuser' }, { role: ['is invalid'] }],
  ])('rejects %j', async (fields, errors) => {
    const res = await server.api('POST', '/v0/users', { user: fields });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors });
  });

  it('trims the email, keeps its case, and refuses the same email in another case', async () => {
    const res = await server.api('POST', '/v0/users', { user: { email: '  Mixed.Case@Example.com ' } });
    expect(res.status).toBe(201);
    expect(res.body.data.email).toBe('Mixed.Case@Example.com');
    const again = await server.api('POST', '/v0/users', { user: { email: 'mixed.case@example.COM' } });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ errors: { email: ['has already been taken'] } });
  });

  it('ignores read-only and unknown keys', async () => {
    const res = await server.api('POST', '/v0/users', {
      user: {
        email: email(),
        disabled_at: '2020-01-01T00:00:00.000000Z',
        last_signed_in_at: '2020-01-01T00:00:00.000000Z',
        last_signed_in_method: 'x',
        id: 'mine',
        colour: 'blue',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ disabled_at: null, last_signed_in_at: null, last_signed_in_method: null });
    expect(res.body.data.id).toMatch(UUID);
    expect(res.body.data).not.toHaveProperty('colour');
  });
});

describe('users: show, list, update', () => {
  it('finds a user by id and by email in any case', async () => {
    const address = email('Finder');
    const created = (await server.api('POST', '/v0/users', { user: { email: address } })).body.data;
    for (const key of [
      created.id,
      created.id.toUpperCase(),
      address,
      address.toUpperCase(),
      encodeURIComponent(address),
    ]) {
      const res = await server.api('GET', `/v0/users/${key}`);
      expect(res.status, key).toBe(200);
      expect(res.body.data).toEqual(created);
    }
    expect((await server.api('GET', '/v0/users/nobody@example.com')).body).toEqual({ error: 'not_found' });
    expect((await server.api('GET', '/v0/users/7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70')).status).toBe(404);
  });

  it('lists every user ordered by inserted_at then id', async () => {
    const res = await server.api('GET', '/v0/users');
    expect(res.status).toBe(200);
    const users = res.body.data as { inserted_at: string; id: string }[];
    expect(users.length).toBeGreaterThan(3);
    const sorted = [...users].sort((a, b) =>
      a.inserted_at === b.inserted_at ? (a.id < b.id ? -1 : 1) : a.inserted_at < b.inserted_at ? -1 : 1,
    );
    expect(users).toEqual(sorted);
  });

  it('an empty user object answers 200 with the user unchanged, updated_at included', async () => {
    const created = (await server.api('POST', '/v0/users', { user: { email: email() } })).body.data;
    for (const method of ['PATCH', 'PUT']) {
      const res = await server.api(method, `/v0/users/${created.id}`, { user: {} });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(created);
    }
  });

  it('PATCH and PUT both change only the keys sent, and updated_at moves even on back-to-back updates', async () => {
    const created = (await server.api('POST', '/v0/users', { user: { email: email() } })).body.data;
    const first = await server.api('PATCH', `/v0/users/${created.id}`, { user: { role: 'admin' } });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ email: created.email, role: 'admin', inserted_at: created.inserted_at });
    const second = await server.api('PUT', `/v0/users/${created.email}`, { user: { role: 'unprivileged' } });
    expect(second.body.data.role).toBe('unprivileged');
    const stamps = [created.updated_at, first.body.data.updated_at, second.body.data.updated_at];
    expect(stamps.every((s) => TIMESTAMP.test(s))).toBe(true);
    expect(stamps[1]! > stamps[0]!).toBe(true);
    expect(stamps[2]! > stamps[1]!).toBe(true);
    expect((await server.api('GET', `/v0/users/${created.id}`)).body.data).toEqual(second.body.data);
  });

  it('changes the email, refusing one another user has', async () => {
    const a = (await server.api('POST', '/v0/users', { user: { email: email() } })).body.data;
    const b = (await server.api('POST', '/v0/users', { user: { email: email() } })).body.data;
    const taken = await server.api('PATCH', `/v0/users/${a.id}`, { user: { email: b.email.toUpperCase() } });
    expect(taken.status).toBe(422);
    expect(taken.body).toEqual({ errors: { email: ['has already been taken'] } });
    const renamed = await server.api('PATCH', `/v0/users/${a.id}`, { user: { email: `renamed-${a.email}` } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.email).toBe(`renamed-${a.email}`);
    expect((await server.api('GET', `/v0/users/${a.email}`)).status).toBe(404);
  });

  it('ignores a null or empty password on update (a password cannot be cleared), checks a new one', async () => {
    const created = (await server.api('POST', '/v0/users', { user: { email: email() } })).body.data;
    expect((await server.api('PATCH', `/v0/users/${created.id}`, { user: { password: null } })).body.data).toEqual(
      created,
    );
    expect((await server.api('PATCH', `/v0/users/${created.id}`, { user: { password: '' } })).body.data).toEqual(
      created,
    );
    const short = await server.api('PATCH', `/v0/users/${created.id}`, { user: { password: 'short' } });
    expect(short.body).toEqual({
      errors: { password: ['should be at least 12 character(s)'], password_confirmation: ["can't be blank"] },
    });
    const ok = await server.api('PATCH', `/v0/users/${created.id}`, {
      user: { password: 'a brand new password', password_confirmation: 'a brand new password' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.updated_at > created.updated_at).toBe(true);
  });

  it('refuses invalid values on update and changes nothing', async () => {
    const created = (await server.api('POST', '/v0/users', { user: { email: email() } })).body.data;
    const res = await server.api('PATCH', `/v0/users/${created.id}`, { user: { email: 'bad', role: 'root' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { email: ['is invalid'], role: ['is invalid'] } });
    expect((await server.api('GET', `/v0/users/${created.id}`)).body.data).toEqual(created);
  });

  it('the token owner cannot change its own role, but may send its current role', async () => {
    await server.api('POST', '/v0/users', { user: { email: email('other-admin'), role: 'admin' } });
    const same = await server.api('PATCH', '/v0/users/admin@example.com', { user: { role: 'admin' } });
    expect(same.status).toBe(200);
    const res = await server.api('PATCH', '/v0/users/admin@example.com', { user: { role: 'unprivileged' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { role: ['You cannot change your own role'] } });
    expect((await server.api('GET', '/v0/users/admin@example.com')).body.data.role).toBe('admin');
  });

  it('404 for update and delete of an unknown user', async () => {
    expect((await server.api('PATCH', '/v0/users/ghost@example.com', { user: {} })).body).toEqual({
      error: 'not_found',
    });
    expect((await server.api('DELETE', '/v0/users/ghost@example.com')).status).toBe(404);
  });
});

describe('users: last admin and cascades', () => {
  it('refuses to delete or demote the last admin (422 base), allows it when another admin remains', async () => {
    const own = await startInProcessServer();
    try {
      const del = await own.api('DELETE', '/v0/users/admin@example.com');
      expect(del.status).toBe(422);
      expect(del.body).toEqual({ errors: { base: ['cannot delete the last admin'] } });

      // Only the token owner can be the last admin (every token belongs to an admin), so demoting
      // it meets both guards at once.
      const demoteSelf = await own.api('PATCH', '/v0/users/admin@example.com', { user: { role: 'unprivileged' } });
      expect(demoteSelf.status).toBe(422);
      expect(demoteSelf.body).toEqual({
        errors: { role: ['You cannot change your own role'], base: ['cannot demote the last admin'] },
      });

      const second = (await own.api('POST', '/v0/users', { user: { email: 'second@example.com', role: 'admin' } })).body
        .data;
      expect((await own.api('PATCH', `/v0/users/${second.id}`, { user: { role: 'unprivileged' } })).status).toBe(200);
      expect((await own.api('PATCH', `/v0/users/${second.id}`, { user: { role: 'admin' } })).status).toBe(200);
      expect((await own.api('DELETE', `/v0/users/${second.id}`)).status).toBe(204);
      // With a second admin, the owner may delete itself; its token goes with it.
      await own.api('POST', '/v0/users', { user: { email: 'third@example.com', role: 'admin' } });
      expect((await own.api('DELETE', '/v0/users/admin@example.com')).status).toBe(204);
      expect((await own.api('GET', '/v0/users')).body).toEqual({ errors: { auth: 'no_resource_found' } });
    } finally {
      await own.stop();
    }
  });

  it('deleting a user deletes its devices, its rules and its tokens, and nothing else', async () => {
    const user = (await server.api('POST', '/v0/users', { user: { email: email('doomed'), role: 'admin' } })).body.data;
    const other = (await server.api('POST', '/v0/users', { user: { email: email('survivor') } })).body.data;
    const key = (n: number) => Buffer.alloc(32, n + counter * 7).toString('base64');
    const device = (await server.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: key(1) } })).body
      .data;
    const keptDevice = (await server.api('POST', '/v0/devices', { device: { user_id: other.id, public_key: key(2) } }))
      .body.data;
    const rule = (await server.api('POST', '/v0/rules', { rule: { destination: '192.0.2.0/24', user_id: user.id } }))
      .body.data;
    const keptRule = (
      await server.api('POST', '/v0/rules', { rule: { destination: '192.0.2.0/24', user_id: other.id } })
    ).body.data;
    const { issueToken } = await import('../../../server/index.js');
    const { token } = await issueToken({ dbPath: server.dbPath, email: user.email });
    expect((await server.api('GET', '/v0/users', undefined, { token })).status).toBe(200);

    const res = await server.api('DELETE', `/v0/users/${user.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expect(res.headers['content-type']).toBeUndefined();

    expect((await server.api('GET', `/v0/users/${user.id}`)).status).toBe(404);
    expect((await server.api('GET', `/v0/devices/${device.id}`)).status).toBe(404);
    expect((await server.api('GET', `/v0/rules/${rule.id}`)).status).toBe(404);
    expect((await server.api('GET', '/v0/users', undefined, { token })).body).toEqual({
      errors: { auth: 'no_resource_found' },
    });
    expect((await server.api('GET', `/v0/devices/${keptDevice.id}`)).status).toBe(200);
    expect((await server.api('GET', `/v0/rules/${keptRule.id}`)).status).toBe(200);
    // The freed address is handed out again.
    const next = await server.api('POST', '/v0/devices', { device: { user_id: other.id, public_key: key(3) } });
    expect(next.body.data.ipv4).toBe(device.ipv4);
  });
});
