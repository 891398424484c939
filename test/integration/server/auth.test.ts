import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken, revokeToken } from '../../../server/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { openSql, type SqlHandle } from '../../helpers/store.js';

const MISSING = '7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70';
const ENDPOINTS: [string, string, unknown?][] = [
  ['GET', '/v0/users'],
  ['POST', '/v0/users', { user: { email: 'x@example.com' } }],
  ['GET', `/v0/users/${MISSING}`],
  ['PATCH', `/v0/users/${MISSING}`, { user: {} }],
  ['PUT', '/v0/users/nobody@example.com', { user: {} }],
  ['DELETE', `/v0/users/${MISSING}`],
  ['GET', '/v0/devices'],
  ['POST', '/v0/devices', { device: {} }],
  ['GET', `/v0/devices/${MISSING}`],
  ['PATCH', `/v0/devices/${MISSING}`, { device: {} }],
  ['PUT', `/v0/devices/${MISSING}`, { device: {} }],
  ['DELETE', `/v0/devices/${MISSING}`],
  ['GET', '/v0/rules'],
  ['POST', '/v0/rules', { rule: {} }],
  ['GET', `/v0/rules/${MISSING}`],
  ['PATCH', `/v0/rules/${MISSING}`, { rule: {} }],
  ['PUT', `/v0/rules/${MISSING}`, { rule: {} }],
  ['DELETE', `/v0/rules/${MISSING}`],
  // Authentication comes before routing: unknown routes and bad bodies get 401 too.
  ['GET', '/v0/nothing-here'],
  ['POST', '/v0/users', '{not json'],
];

const UNAUTHENTICATED = { errors: { auth: 'unauthenticated' } };
const INVALID_TOKEN = { errors: { auth: 'invalid_token' } };
const NO_RESOURCE = { errors: { auth: 'no_resource_found' } };
const UNAUTHORIZED = { error: 'Unauthorized' };

let server: TestServer;
let db: SqlHandle;
const tokens: Record<string, string> = {};

function sql(statement: string, ...params: unknown[]): Promise<void> {
  return db.run(statement, ...params);
}

beforeAll(async () => {
  server = await startInProcessServer();
  db = await openSql(server.dbPath);
  const dbPath = server.dbPath;
  tokens.revoked = (await issueToken({ dbPath, email: 'admin@example.com' })).token;
  const list = await db.all<{ id: string; token_hash: string }>('SELECT id, token_hash FROM api_tokens');
  const hash = (t: string) => createHash('sha256').update(t).digest('hex');
  await revokeToken({ dbPath, id: list.find((t) => t.token_hash === hash(tokens.revoked!))!.id });

  tokens.expired = (await issueToken({ dbPath, email: 'admin@example.com', days: 1 })).token;
  await sql(
    "UPDATE api_tokens SET expires_at = '2001-01-01T00:00:00.000000Z' WHERE token_hash = ?",
    hash(tokens.expired),
  );

  // No longer an admin by other means than /v0 (a demotion through /v0 revokes the tokens too).
  tokens.nonAdmin = (await issueToken({ dbPath, email: 'unprivileged@example.com' })).token;
  await sql("UPDATE users SET role = 'unprivileged' WHERE email = 'unprivileged@example.com'");

  await server.api('POST', '/v0/users', { user: { email: 'demoted@example.com', role: 'admin' } });
  tokens.demoted = (await issueToken({ dbPath, email: 'demoted@example.com' })).token;
  expect((await server.api('PATCH', '/v0/users/demoted@example.com', { user: { role: 'unprivileged' } })).status).toBe(
    200,
  );

  tokens.disabled = (await issueToken({ dbPath, email: 'disabled@example.com' })).token;
  await sql("UPDATE users SET disabled_at = '2020-01-01T00:00:00.000000Z' WHERE email = 'disabled@example.com'");
});

afterAll(async () => {
  await db?.close();
  await server?.stop();
});

const CASES: [string, (t: typeof tokens) => Record<string, string>, unknown][] = [
  ['no Authorization header', () => ({}), UNAUTHENTICATED],
  ['a Basic scheme', () => ({ authorization: 'Basic YWRtaW46YWRtaW4=' }), UNAUTHENTICATED],
  ['a token without a scheme', (t) => ({ authorization: t.revoked! }), UNAUTHENTICATED],
  ['Bearer and nothing', () => ({ authorization: 'Bearer' }), INVALID_TOKEN],
  ['a malformed token', () => ({ authorization: 'Bearer abc.def' }), INVALID_TOKEN],
  [
    'a token of the right prefix but wrong length',
    () => ({ authorization: `Bearer nf_${'a'.repeat(20)}` }),
    INVALID_TOKEN,
  ],
  ['an unknown well-formed token', () => ({ authorization: `Bearer nf_${'A'.repeat(43)}` }), NO_RESOURCE],
  ['a revoked token', (t) => ({ authorization: `Bearer ${t.revoked}` }), NO_RESOURCE],
  ['an expired token', (t) => ({ authorization: `Bearer ${t.expired}` }), NO_RESOURCE],
  ['the token of a user no longer admin', (t) => ({ authorization: `Bearer ${t.nonAdmin}` }), UNAUTHORIZED],
  [
    'the token of an admin demoted through /v0 (revoked)',
    (t) => ({ authorization: `Bearer ${t.demoted}` }),
    NO_RESOURCE,
  ],
  ['the token of a disabled admin', (t) => ({ authorization: `Bearer ${t.disabled}` }), UNAUTHORIZED],
];

describe.each(CASES)('with %s', (_name, headers, expected) => {
  it('every endpoint answers 401 with the contract body and changes nothing', async () => {
    const before = (await server.api('GET', '/v0/users')).body.data.length;
    for (const [method, path, body] of ENDPOINTS) {
      const res = await server.api(method, path, body, { token: null, headers: headers(tokens) });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body, `${method} ${path}`).toEqual(expected);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    }
    expect((await server.api('GET', '/v0/users')).body.data.length).toBe(before);
  });
});

describe('valid tokens', () => {
  it('the scheme is case-insensitive', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await server.api('GET', '/v0/users', undefined, {
        token: null,
        headers: { authorization: `${scheme} ${server.token}` },
      });
      expect(res.status, scheme).toBe(200);
    }
  });

  it('a revoked token stops working at once, others of the same admin keep working', async () => {
    const { token, id } = await issueToken({ dbPath: server.dbPath, email: 'admin@example.com' });
    expect((await server.api('GET', '/v0/rules', undefined, { token })).status).toBe(200);
    await revokeToken({ dbPath: server.dbPath, id });
    expect((await server.api('GET', '/v0/rules', undefined, { token })).body).toEqual(NO_RESOURCE);
    expect((await server.api('GET', '/v0/rules')).status).toBe(200);
  });

  it('a token whose owner is deleted through the API fails on the very next request', async () => {
    const made = await server.api('POST', '/v0/users', { user: { email: 'leaving@example.com', role: 'admin' } });
    expect(made.status).toBe(201);
    const { token } = await issueToken({ dbPath: server.dbPath, email: 'leaving@example.com' });
    expect((await server.api('GET', '/v0/rules', undefined, { token })).status).toBe(200);
    expect((await server.api('DELETE', `/v0/users/${made.body.data.id}`)).status).toBe(204);
    expect((await server.api('GET', '/v0/rules', undefined, { token })).status).toBe(401);
  });

  it('demoting an admin revokes its tokens: made admin again, it needs a new one', async () => {
    await server.api('POST', '/v0/users', { user: { email: 'again@example.com', role: 'admin' } });
    const old = await issueToken({ dbPath: server.dbPath, email: 'again@example.com' });
    expect((await server.api('GET', '/v0/users', undefined, { token: old.token })).status).toBe(200);
    expect((await server.api('PATCH', '/v0/users/again@example.com', { user: { role: 'unprivileged' } })).status).toBe(
      200,
    );
    expect((await server.api('PATCH', '/v0/users/again@example.com', { user: { role: 'admin' } })).status).toBe(200);
    expect((await server.api('GET', '/v0/users', undefined, { token: old.token })).body).toEqual(NO_RESOURCE);
    const [row] = await db.all<{ revoked_at: string | null }>('SELECT revoked_at FROM api_tokens WHERE id = ?', old.id);
    expect(row!.revoked_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const fresh = await issueToken({ dbPath: server.dbPath, email: 'again@example.com' });
    expect((await server.api('GET', '/v0/users', undefined, { token: fresh.token })).status).toBe(200);
    // Changing anything but the role revokes nothing.
    expect(
      (await server.api('PATCH', '/v0/users/again@example.com', { user: { email: 'again2@example.com' } })).status,
    ).toBe(200);
    expect((await server.api('GET', '/v0/users', undefined, { token: fresh.token })).status).toBe(200);
  });

  it('stores only a SHA-256 hash of each token', async () => {
    const rows = await db.all('SELECT * FROM api_tokens');
    const text = JSON.stringify(rows);
    for (const token of [server.token, ...Object.values(tokens)]) expect(text).not.toContain(token.slice(3));
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(String(r.token_hash)))).toBe(true);
  });
});
