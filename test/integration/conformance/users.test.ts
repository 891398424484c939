/**
 * Conformance of /v0/users (seed "Users", docs/rule-semantics.md §4), checked black-box against a real
 * `netform serve` process.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { JSON_TYPE, TIMESTAMP } from '../../helpers/api-shapes.js';

const USER_KEYS = [
  'id',
  'email',
  'role',
  'last_signed_in_at',
  'last_signed_in_method',
  'disabled_at',
  'inserted_at',
  'updated_at',
].sort();
const GOOD_PASSWORD = 'correct horse battery';

let server: TestServer;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const uniqueEmail = (prefix = 'user') => `${prefix}-${++counter}-${randomBytes(3).toString('hex')}@example.com`;
const publicKey = () => randomBytes(32).toString('base64');

async function createUser(attributes: Record<string, unknown> = {}): Promise<any> {
  const res = await server.api('POST', '/v0/users', { user: { email: uniqueEmail(), ...attributes } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function expect422(method: string, path: string, body: unknown, errors: Record<string, string[]>): Promise<void> {
  const res = await server.api(method, path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.headers['content-type']).toBe(JSON_TYPE);
  expect(res.body).toEqual({ errors });
}

async function tokenFor(target: TestServer, email: string): Promise<string> {
  const created = await runCli(['server', 'token', 'create', '--email', email, '--db', target.dbPath]);
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim();
}

describe('response shape', () => {
  it('exactly the eight keys, on create, show, list and update; no password data anywhere', async () => {
    const email = uniqueEmail();
    const created = await server.api('POST', '/v0/users', {
      user: { email, password: GOOD_PASSWORD, password_confirmation: GOOD_PASSWORD },
    });
    expect(created.status).toBe(201);
    const user = created.body.data;
    expect(Object.keys(user).sort()).toEqual(USER_KEYS);
    expect(user).toMatchObject({
      email,
      role: 'unprivileged',
      disabled_at: null,
      last_signed_in_at: null,
      last_signed_in_method: null,
    });
    expect(user.inserted_at).toMatch(TIMESTAMP);
    expect(user.updated_at).toMatch(TIMESTAMP);

    const shown = await server.api('GET', `/v0/users/${user.id}`);
    const listed = (await server.api('GET', '/v0/users')).body.data.find((u: any) => u.id === user.id);
    const updated = await server.api('PATCH', `/v0/users/${user.id}`, {
      user: { password: `${GOOD_PASSWORD}!`, password_confirmation: `${GOOD_PASSWORD}!` },
    });
    expect(updated.status).toBe(200);
    for (const shape of [shown.body.data, listed, updated.body.data])
      expect(Object.keys(shape).sort()).toEqual(USER_KEYS);
    for (const text of [created, shown, updated].map((r) => JSON.stringify(r.body))) {
      expect(text).not.toContain(GOOD_PASSWORD);
      expect(text.toLowerCase()).not.toContain('password');
      expect(text.toLowerCase()).not.toContain('hash');
    }
  });

  it('create without a password (email and role only) provisions a user (seed rule 1)', async () => {
    const res = await server.api('POST', '/v0/users', { user: { email: uniqueEmail('sso'), role: 'admin' } });
    expect(res.status).toBe(201);
    expect(res.body.data.role).toBe('admin');
  });
});

describe('{id}: a UUID or an email, matched case-insensitively', () => {
  it('GET, PATCH, PUT and DELETE by UUID, by email and by email in another case act on the same user', async () => {
    const email = uniqueEmail('Mixed.Case');
    const user = await createUser({ email });
    for (const id of [user.id, email, email.toUpperCase(), email.toLowerCase()]) {
      const shown = await server.api('GET', `/v0/users/${encodeURIComponent(id)}`);
      expect(shown.status, id).toBe(200);
      expect(shown.body.data).toEqual(user);
    }
    const patched = await server.api('PATCH', `/v0/users/${email.toUpperCase()}`, { user: { role: 'admin' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: user.id, role: 'admin', email });
    const put = await server.api('PUT', `/v0/users/${email.toLowerCase()}`, { user: { role: 'unprivileged' } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ id: user.id, role: 'unprivileged' });
    expect((await server.api('DELETE', `/v0/users/${email.toUpperCase()}`)).status).toBe(204);
    expect((await server.api('GET', `/v0/users/${user.id}`)).status).toBe(404);
  });

  it('an email with + and an encoded @ in the path', async () => {
    const email = `first+tag-${randomBytes(3).toString('hex')}@example.com`;
    const user = await createUser({ email });
    const res = await server.api('GET', `/v0/users/${encodeURIComponent(email)}`);
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(user.id);
  });

  it('a UUID in upper case addresses the same user (reading: UUIDs compare case-insensitively)', async () => {
    const user = await createUser();
    const res = await server.api('GET', `/v0/users/${user.id.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(user.id);
  });
});

describe('email', () => {
  it('is required', async () => {
    await expect422('POST', '/v0/users', { user: { role: 'admin' } }, { email: ["can't be blank"] });
  });

  it('is trimmed, and stored in the case given', async () => {
    const email = `  Jane.Doe-${randomBytes(3).toString('hex')}@Example.COM \t`;
    const res = await server.api('POST', '/v0/users', { user: { email } });
    expect(res.status).toBe(201);
    expect(res.body.data.email).toBe(email.trim());
    expect((await server.api('GET', `/v0/users/${email.trim().toLowerCase()}`)).body.data.email).toBe(email.trim());
  });

  it.each([
    'plainaddress',
    'no-domain@',
    '@no-local.example.com',
    'two words@example.com',
    'tab\tin@example.com',
    'jane@exa mple.com',
  ])('%j is invalid', async (email) => {
    await expect422('POST', '/v0/users', { user: { email } }, { email: ['is invalid'] });
  });

  it('at most 255 characters: 255 is accepted, 256 is invalid', async () => {
    const domain = '@example.com';
    const tag = randomBytes(3).toString('hex');
    const ok = `${tag}${'a'.repeat(255 - domain.length - tag.length)}${domain}`;
    expect(ok).toHaveLength(255);
    const created = await server.api('POST', '/v0/users', { user: { email: ok } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const long = `${tag}${'b'.repeat(256 - domain.length - tag.length)}${domain}`;
    expect(long).toHaveLength(256);
    await expect422('POST', '/v0/users', { user: { email: long } }, { email: ['is invalid'] });
  });

  it('the 255 limit applies after trimming (reading: trimmed first)', async () => {
    const domain = '@example.com';
    const tag = randomBytes(3).toString('hex');
    const email = `${tag}${'c'.repeat(255 - domain.length - tag.length)}${domain}`;
    const res = await server.api('POST', '/v0/users', { user: { email: `   ${email}   ` } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.email).toBe(email);
  });

  it('is unique case-insensitively on create and update', async () => {
    const email = uniqueEmail('dup');
    await createUser({ email });
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: email.toUpperCase() } },
      { email: ['has already been taken'] },
    );
    await expect422('POST', '/v0/users', { user: { email: ` ${email} ` } }, { email: ['has already been taken'] });
    const other = await createUser();
    await expect422(
      'PATCH',
      `/v0/users/${other.id}`,
      { user: { email: email.toUpperCase() } },
      { email: ['has already been taken'] },
    );
    expect((await server.api('GET', `/v0/users/${other.id}`)).body.data).toEqual(other);
  });

  it('may be changed by update; the new email addresses the user, the old one no longer does', async () => {
    const user = await createUser();
    const newEmail = uniqueEmail('renamed');
    const res = await server.api('PATCH', `/v0/users/${user.email}`, { user: { email: newEmail } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: user.id, email: newEmail });
    expect((await server.api('GET', `/v0/users/${newEmail}`)).body.data.id).toBe(user.id);
    expect((await server.api('GET', `/v0/users/${user.email}`)).status).toBe(404);
  });

  it('a user may change only the case of its own email (reading: not taken by itself)', async () => {
    const user = await createUser();
    const res = await server.api('PATCH', `/v0/users/${user.id}`, { user: { email: user.email.toUpperCase() } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.email).toBe(user.email.toUpperCase());
  });

  it('is trimmed on update too', async () => {
    const user = await createUser();
    const email = uniqueEmail('Trimmed');
    const res = await server.api('PATCH', `/v0/users/${user.id}`, { user: { email: `  ${email}\n` } });
    expect(res.status).toBe(200);
    expect(res.body.data.email).toBe(email);
  });

  it('concurrent creates of one email in different cases: exactly one wins', async () => {
    const email = uniqueEmail('race');
    const variants = [
      email,
      email.toUpperCase(),
      ` ${email}`,
      email.replace('race', 'RACE'),
      email,
      email.toUpperCase(),
    ];
    const results = await Promise.all(
      variants.map((variant) => server.api('POST', '/v0/users', { user: { email: variant } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({ errors: { email: ['has already been taken'] } });
    }
  });

  it('an invalid email on update is rejected and changes nothing', async () => {
    const user = await createUser();
    await expect422('PATCH', `/v0/users/${user.id}`, { user: { email: 'not an email' } }, { email: ['is invalid'] });
    expect((await server.api('GET', `/v0/users/${user.id}`)).body.data).toEqual(user);
  });

  it('null or "" on update is can\'t be blank (reading: email stays required)', async () => {
    const user = await createUser();
    for (const email of [null, '']) {
      await expect422('PATCH', `/v0/users/${user.id}`, { user: { email } }, { email: ["can't be blank"] });
    }
  });
});

describe('role', () => {
  it('admin yields an admin; omitted yields unprivileged (seed rule 2)', async () => {
    expect((await createUser({ role: 'admin' })).role).toBe('admin');
    expect((await createUser()).role).toBe('unprivileged');
    expect((await createUser({ role: 'unprivileged' })).role).toBe('unprivileged');
  });

  it.each(['superuser', 'Admin', 'ADMIN', 'owner', 1, true])('%j is invalid on create and on update', async (role) => {
    await expect422('POST', '/v0/users', { user: { email: uniqueEmail(), role } }, { role: ['is invalid'] });
    const user = await createUser();
    await expect422('PATCH', `/v0/users/${user.id}`, { user: { role } }, { role: ['is invalid'] });
  });

  it('"" or null on create yields an unprivileged user, as upstream (firezone-client-go always sends "role": "")', async () => {
    for (const role of ['', null, '  ']) {
      const res = await server.api('POST', '/v0/users', { user: { email: uniqueEmail(), role } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data.role).toBe('unprivileged');
    }
  });

  it('"" or null on update is still refused: can\'t be blank, and the role is kept', async () => {
    const user = await createUser({ role: 'admin' });
    for (const role of ['', null]) {
      await expect422('PATCH', `/v0/users/${user.id}`, { user: { role } }, { role: ["can't be blank"] });
    }
    expect((await server.api('GET', `/v0/users/${user.id}`)).body.data.role).toBe('admin');
  });

  it('can be changed by update both ways', async () => {
    const user = await createUser();
    const promoted = await server.api('PATCH', `/v0/users/${user.id}`, { user: { role: 'admin' } });
    expect(promoted.body.data.role).toBe('admin');
    const demoted = await server.api('PATCH', `/v0/users/${user.id}`, { user: { role: 'unprivileged' } });
    expect(demoted.status).toBe(200);
    expect(demoted.body.data.role).toBe('unprivileged');
  });
});

describe('password', () => {
  it("the seed's example: too short and no confirmation, both errors together", async () => {
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: uniqueEmail(), password: 'short' } },
      {
        password: ['should be at least 12 character(s)'],
        password_confirmation: ["can't be blank"],
      },
    );
  });

  it('12 and 64 characters are accepted; 11 and 65 are not', async () => {
    for (const password of ['a'.repeat(12), 'b'.repeat(64)]) {
      const res = await server.api('POST', '/v0/users', {
        user: { email: uniqueEmail(), password, password_confirmation: password },
      });
      expect(res.status, `${password.length}: ${JSON.stringify(res.body)}`).toBe(201);
    }
    const short = 'c'.repeat(11);
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: uniqueEmail(), password: short, password_confirmation: short } },
      { password: ['should be at least 12 character(s)'] },
    );
    const long = 'd'.repeat(65);
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: uniqueEmail(), password: long, password_confirmation: long } },
      { password: ['should be at most 64 character(s)'] },
    );
  });

  it("confirmation missing: can't be blank; different: does not match confirmation; both on password_confirmation", async () => {
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: uniqueEmail(), password: GOOD_PASSWORD } },
      { password_confirmation: ["can't be blank"] },
    );
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: uniqueEmail(), password: GOOD_PASSWORD, password_confirmation: null } },
      { password_confirmation: ["can't be blank"] },
    );
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: uniqueEmail(), password: GOOD_PASSWORD, password_confirmation: '' } },
      { password_confirmation: ["can't be blank"] },
    );
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: uniqueEmail(), password: GOOD_PASSWORD, password_confirmation: `${GOOD_PASSWORD}x` } },
      { password_confirmation: ['does not match confirmation'] },
    );
  });

  it('too long and mismatched: both errors together', async () => {
    await expect422(
      'POST',
      '/v0/users',
      { user: { email: uniqueEmail(), password: 'e'.repeat(70), password_confirmation: 'f'.repeat(70) } },
      {
        password: ['should be at most 64 character(s)'],
        password_confirmation: ['does not match confirmation'],
      },
    );
  });

  it('every field error of a create at once: email, role, password, confirmation', async () => {
    await expect422(
      'POST',
      '/v0/users',
      { user: { role: 'boss', password: 'x', password_confirmation: 'y' } },
      {
        email: ["can't be blank"],
        role: ['is invalid'],
        password: ['should be at least 12 character(s)'],
        password_confirmation: ['does not match confirmation'],
      },
    );
  });

  it('on update: the same rules; null or "" is ignored (a password cannot be cleared)', async () => {
    const user = await createUser({ password: GOOD_PASSWORD, password_confirmation: GOOD_PASSWORD });
    await expect422(
      'PATCH',
      `/v0/users/${user.id}`,
      { user: { password: 'short' } },
      {
        password: ['should be at least 12 character(s)'],
        password_confirmation: ["can't be blank"],
      },
    );
    await expect422(
      'PUT',
      `/v0/users/${user.id}`,
      { user: { password: GOOD_PASSWORD, password_confirmation: 'other other other' } },
      {
        password_confirmation: ['does not match confirmation'],
      },
    );
    for (const password of [null, '']) {
      const res = await server.api('PATCH', `/v0/users/${user.id}`, { user: { password } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toEqual(user);
    }
    const changed = await server.api('PATCH', `/v0/users/${user.id}`, {
      user: { password: 'another good one', password_confirmation: 'another good one' },
    });
    expect(changed.status).toBe(200);
    expect(Object.keys(changed.body.data).sort()).toEqual(USER_KEYS);
  });

  it('a confirmation without a password is ignored (reading: nothing to confirm)', async () => {
    const res = await server.api('POST', '/v0/users', {
      user: { email: uniqueEmail(), password_confirmation: 'whatever it is' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});

describe('read-only fields', () => {
  it('id, disabled_at, last_signed_in_at, last_signed_in_method, inserted_at, updated_at sent on create are ignored', async () => {
    const id = randomUUID();
    const res = await server.api('POST', '/v0/users', {
      user: {
        email: uniqueEmail(),
        id,
        disabled_at: '2020-01-01T00:00:00.000000Z',
        last_signed_in_at: '2020-01-01T00:00:00.000000Z',
        last_signed_in_method: 'password',
        inserted_at: '2001-01-01T00:00:00.000000Z',
        updated_at: '2001-01-01T00:00:00.000000Z',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.id).not.toBe(id);
    expect(res.body.data).toMatchObject({ disabled_at: null, last_signed_in_at: null, last_signed_in_method: null });
    expect(res.body.data.inserted_at.startsWith('2001')).toBe(false);
    expect(res.body.data.updated_at.startsWith('2001')).toBe(false);
  });

  it('and on update, whatever the role (seed rule 5)', async () => {
    for (const role of ['unprivileged', 'admin']) {
      const user = await createUser({ role });
      const res = await server.api('PATCH', `/v0/users/${user.id}`, {
        user: {
          id: randomUUID(),
          disabled_at: '2020-01-01T00:00:00.000000Z',
          last_signed_in_at: '2020-01-01T00:00:00.000000Z',
          last_signed_in_method: 'oidc',
          inserted_at: '2001-01-01T00:00:00.000000Z',
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(user);
    }
  });
});

describe('own role and last admin', () => {
  it('the token owner cannot change its own role: role "You cannot change your own role"', async () => {
    await createUser({ role: 'admin' }); // another admin, so the last-admin guard is not what answers
    for (const id of [TEST_ADMIN_EMAIL, TEST_ADMIN_EMAIL.toUpperCase()]) {
      const res = await server.api('PATCH', `/v0/users/${id}`, { user: { role: 'unprivileged' } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ errors: { role: ['You cannot change your own role'] } });
    }
    const self = (await server.api('GET', `/v0/users/${TEST_ADMIN_EMAIL}`)).body.data;
    expect(self.role).toBe('admin');
    const byId = await server.api('PUT', `/v0/users/${self.id}`, { user: { role: 'unprivileged' } });
    expect(byId.status).toBe(422);
    expect(byId.body.errors.role).toEqual(['You cannot change your own role']);
  });

  it('the guard applies only when the value changes: sending its own current role is 200', async () => {
    const self = (await server.api('GET', `/v0/users/${TEST_ADMIN_EMAIL}`)).body.data;
    const res = await server.api('PATCH', `/v0/users/${TEST_ADMIN_EMAIL}`, { user: { role: 'admin' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.role).toBe('admin');
    expect(res.body.data.id).toBe(self.id);
  });

  it('the token owner may change its own email and password', async () => {
    const own = await startTestServer();
    try {
      const res = await own.api('PATCH', `/v0/users/${TEST_ADMIN_EMAIL}`, {
        user: { role: 'admin', password: GOOD_PASSWORD, password_confirmation: GOOD_PASSWORD },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const renamed = await own.api('PATCH', `/v0/users/${TEST_ADMIN_EMAIL}`, { user: { email: 'root@example.com' } });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data.email).toBe('root@example.com');
      expect((await own.api('GET', '/v0/users/root@example.com')).status).toBe(200);
    } finally {
      await own.stop();
    }
  });

  it('the last admin cannot be deleted (422 base); with a second admin the owner may delete itself and its token dies', async () => {
    const lone = await startTestServer();
    try {
      const refused = await lone.api('DELETE', `/v0/users/${TEST_ADMIN_EMAIL}`);
      expect(refused.status).toBe(422);
      expect(refused.headers['content-type']).toBe(JSON_TYPE);
      expect(refused.body).toEqual({ errors: { base: ['cannot delete the last admin'] } });
      expect((await lone.api('GET', `/v0/users/${TEST_ADMIN_EMAIL}`)).status).toBe(200);

      const second = uniqueEmail('second-admin');
      const secondToken = await tokenFor(lone, second);
      const selfDelete = await lone.api('DELETE', `/v0/users/${TEST_ADMIN_EMAIL}`);
      expect(selfDelete.status).toBe(204);
      expect((await lone.api('GET', '/v0/users')).status).toBe(401);
      const users = await lone.api('GET', '/v0/users', undefined, { token: secondToken });
      expect(users.status).toBe(200);
      expect(users.body.data.map((u: any) => u.email)).toEqual([second]);
      const lastDelete = await lone.api('DELETE', `/v0/users/${second}`, undefined, { token: secondToken });
      expect(lastDelete.status).toBe(422);
      expect(lastDelete.body).toEqual({ errors: { base: ['cannot delete the last admin'] } });
    } finally {
      await lone.stop();
    }
  });

  it('the last admin cannot be demoted (reading: only reachable as the token owner, so the own-role error is reported; a base error, if any, says "cannot demote the last admin")', async () => {
    const lone = await startTestServer();
    try {
      const res = await lone.api('PATCH', `/v0/users/${TEST_ADMIN_EMAIL}`, { user: { role: 'unprivileged' } });
      expect(res.status).toBe(422);
      expect(res.body.errors.role).toEqual(['You cannot change your own role']);
      if (res.body.errors.base !== undefined) expect(res.body.errors.base).toEqual(['cannot demote the last admin']);
      expect(Object.keys(res.body.errors).every((key) => key === 'role' || key === 'base')).toBe(true);
      expect((await lone.api('GET', `/v0/users/${TEST_ADMIN_EMAIL}`)).body.data.role).toBe('admin');
    } finally {
      await lone.stop();
    }
  });
});

describe('last admin under concurrency', () => {
  it('two admins demoting each other at once: one wins, the other is refused, one admin remains', async () => {
    const own = await startTestServer();
    try {
      let firstToken = own.token;
      for (let round = 0; round < 3; round++) {
        const emails = [TEST_ADMIN_EMAIL, `second-${round}@example.com`];
        const tokens = [firstToken, await tokenFor(own, emails[1]!)];
        const [first, second] = await Promise.all([
          own.api('PATCH', `/v0/users/${emails[1]}`, { user: { role: 'unprivileged' } }, { token: tokens[0] }),
          own.api('PATCH', `/v0/users/${emails[0]}`, { user: { role: 'unprivileged' } }, { token: tokens[1] }),
        ]);
        const statuses = [first.status, second.status].sort();
        expect(statuses[0]).toBe(200);
        const refused = first.status === 200 ? second : first;
        expect([401, 422]).toContain(refused.status);
        if (refused.status === 422)
          expect(refused.body).toEqual({ errors: { base: ['cannot demote the last admin'] } });
        // Demoted first: the winner's demotion revoked its token.
        else expect(refused.body).toEqual({ errors: { auth: 'no_resource_found' } });
        const winner = first.status === 200 ? 0 : 1;
        const admins = (await own.api('GET', '/v0/users', undefined, { token: tokens[winner] })).body.data.filter(
          (u: any) => u.role === 'admin',
        );
        expect(admins.map((u: any) => u.email)).toEqual([emails[winner]]);
        if (winner === 1) {
          // Hand the first admin back its role (and a new token: its old ones were revoked) for
          // the next round, and retire the second.
          expect(
            (await own.api('PATCH', `/v0/users/${emails[0]}`, { user: { role: 'admin' } }, { token: tokens[1] }))
              .status,
          ).toBe(200);
          firstToken = await tokenFor(own, emails[0]!);
        }
        expect((await own.api('DELETE', `/v0/users/${emails[1]}`, undefined, { token: firstToken })).status).toBe(204);
      }
    } finally {
      await own.stop();
    }
  });

  it('two admins deleting each other at once: one admin remains', async () => {
    const own = await startTestServer();
    try {
      const second = 'second@example.com';
      const secondToken = await tokenFor(own, second);
      const [first, other] = await Promise.all([
        own.api('DELETE', `/v0/users/${second}`),
        own.api('DELETE', `/v0/users/${TEST_ADMIN_EMAIL}`, undefined, { token: secondToken }),
      ]);
      expect([first.status, other.status].filter((s) => s === 204)).toHaveLength(1);
      const refused = first.status === 204 ? other : first;
      expect([401, 422]).toContain(refused.status);
      if (refused.status === 422) expect(refused.body).toEqual({ errors: { base: ['cannot delete the last admin'] } });
      const survivorToken = first.status === 204 ? own.token : secondToken;
      const users = (await own.api('GET', '/v0/users', undefined, { token: survivorToken })).body.data;
      expect(users.filter((u: any) => u.role === 'admin')).toHaveLength(1);
    } finally {
      await own.stop();
    }
  });
});

describe('delete cascades', () => {
  it("the user's devices, the rules bound to it and its tokens go; other users' things and global rules stay", async () => {
    const email = uniqueEmail('leaver');
    const token = await tokenFor(server, email);
    const leaver = (await server.api('GET', `/v0/users/${email}`)).body.data;
    expect(leaver.role).toBe('admin');
    const stayer = await createUser();

    const devices: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await server.api('POST', '/v0/devices', { device: { user_id: leaver.id, public_key: publicKey() } });
      expect(res.status).toBe(201);
      devices.push(res.body.data.id);
    }
    const stayerDevice = (
      await server.api('POST', '/v0/devices', { device: { user_id: stayer.id, public_key: publicKey() } })
    ).body.data;
    const base = `10.${100 + (counter % 100)}`;
    const boundRule = (
      await server.api('POST', '/v0/rules', { rule: { destination: `${base}.1.0/24`, user_id: leaver.id } })
    ).body.data;
    const boundAccept = (
      await server.api('POST', '/v0/rules', {
        rule: {
          destination: `${base}.2.0/24`,
          action: 'accept',
          user_id: leaver.id,
          port_type: 'tcp',
          port_range: '22',
        },
      })
    ).body.data;
    const globalRule = (await server.api('POST', '/v0/rules', { rule: { destination: `${base}.1.0/24` } })).body.data;
    const stayerRule = (
      await server.api('POST', '/v0/rules', { rule: { destination: `${base}.1.0/24`, user_id: stayer.id } })
    ).body.data;
    for (const rule of [boundRule, boundAccept, globalRule, stayerRule]) expect(rule.id).toBeDefined();
    expect((await server.api('GET', '/v0/users', undefined, { token })).status).toBe(200);

    expect((await server.api('DELETE', `/v0/users/${leaver.id}`)).status).toBe(204);

    expect((await server.api('GET', `/v0/users/${leaver.id}`)).status).toBe(404);
    for (const id of devices) expect((await server.api('GET', `/v0/devices/${id}`)).status).toBe(404);
    for (const rule of [boundRule, boundAccept])
      expect((await server.api('GET', `/v0/rules/${rule.id}`)).status).toBe(404);
    expect((await server.api('GET', `/v0/rules/${globalRule.id}`)).body.data).toEqual(globalRule);
    expect((await server.api('GET', `/v0/rules/${stayerRule.id}`)).body.data).toEqual(stayerRule);
    expect((await server.api('GET', `/v0/devices/${stayerDevice.id}`)).body.data).toEqual(stayerDevice);
    const allDevices = (await server.api('GET', '/v0/devices')).body.data;
    expect(allDevices.some((d: any) => d.user_id === leaver.id)).toBe(false);
    const allRules = (await server.api('GET', '/v0/rules')).body.data;
    expect(allRules.some((r: any) => r.user_id === leaver.id)).toBe(false);

    const refused = await server.api('GET', '/v0/users', undefined, { token });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ errors: { auth: 'no_resource_found' } });
  });

  it("a deleted user's device public keys and addresses are free again", async () => {
    const user = await createUser();
    const device = (
      await server.api('POST', '/v0/devices', {
        device: { user_id: user.id, public_key: publicKey(), ipv4: '10.3.2.222', ipv6: 'fd00::3:2:de' },
      })
    ).body.data;
    expect(device.ipv4).toBe('10.3.2.222');
    expect((await server.api('DELETE', `/v0/users/${user.id}`)).status).toBe(204);
    const other = await createUser();
    const reused = await server.api('POST', '/v0/devices', {
      device: { user_id: other.id, public_key: device.public_key, ipv4: device.ipv4, ipv6: device.ipv6 },
    });
    expect(reused.status, JSON.stringify(reused.body)).toBe(201);
  });

  it('the email of a deleted user is free again, and the new user gets a new id', async () => {
    const user = await createUser();
    expect((await server.api('DELETE', `/v0/users/${user.email}`)).status).toBe(204);
    const again = await createUser({ email: user.email });
    expect(again.id).not.toBe(user.id);
  });
});
