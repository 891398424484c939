/**
 * Conformance of authentication and of the error table (docs/rule-semantics.md §2, §3), checked black-box against
 * a real `netform serve` process: every row with its exact status, body and content type.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestServer, type ApiResponse, type TestServer } from '../../helpers/server.js';
import { openSql } from '../../helpers/store.js';
import { JSON_TYPE } from '../../helpers/api-shapes.js';

const UNAUTHENTICATED = { errors: { auth: 'unauthenticated' } };
const INVALID_TOKEN = { errors: { auth: 'invalid_token' } };
const NO_RESOURCE = { errors: { auth: 'no_resource_found' } };
const UNAUTHORIZED = { error: 'Unauthorized' };
const BAD_REQUEST = { error: 'Bad Request' };
const NOT_FOUND = { error: 'not_found' };
const MIB = 1024 * 1024;

let server: TestServer;
let counter = 0;
let deviceId: string;
let ruleId: string;
let userId: string;

beforeAll(async () => {
  server = await startTestServer();
  const user = await server.api('POST', '/v0/users', { user: { email: 'owner@example.com' } });
  userId = user.body.data.id;
  const device = await server.api('POST', '/v0/devices', {
    device: { user_id: userId, public_key: randomBytes(32).toString('base64') },
  });
  deviceId = device.body.data.id;
  const rule = await server.api('POST', '/v0/rules', { rule: { destination: '192.168.0.0/16' } });
  ruleId = rule.body.data.id;
});
afterAll(async () => {
  await server?.stop();
});

const unique = (prefix: string) => `${prefix}-${++counter}-${randomBytes(3).toString('hex')}`;

/** One raw HTTP request: exact control over method, headers and body bytes. */
function raw(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<ApiResponse & { text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const req = request(url, { method, headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = null;
        if (text !== '') {
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
        }
        const headers: Record<string, string> = {};
        for (const [key, value] of Object.entries(res.headers)) if (typeof value === 'string') headers[key] = value;
        resolve({ status: res.statusCode ?? 0, body, headers, text });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

function expectError(res: ApiResponse, status: number, body: unknown): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual(body);
  expect(res.headers['content-type']).toBe(JSON_TYPE);
}

async function tokenFor(email: string): Promise<string> {
  const created = await runCli(['server', 'token', 'create', '--email', email, '--db', server.dbPath]);
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim();
}

const ENDPOINTS: Array<[string, () => string]> = [
  ['GET', () => '/v0/users'],
  ['POST', () => '/v0/users'],
  ['GET', () => `/v0/users/${userId}`],
  ['PATCH', () => `/v0/users/${userId}`],
  ['PUT', () => `/v0/users/${userId}`],
  ['DELETE', () => `/v0/users/${userId}`],
  ['GET', () => '/v0/devices'],
  ['POST', () => '/v0/devices'],
  ['GET', () => `/v0/devices/${deviceId}`],
  ['PATCH', () => `/v0/devices/${deviceId}`],
  ['PUT', () => `/v0/devices/${deviceId}`],
  ['DELETE', () => `/v0/devices/${deviceId}`],
  ['GET', () => '/v0/rules'],
  ['POST', () => '/v0/rules'],
  ['GET', () => `/v0/rules/${ruleId}`],
  ['PATCH', () => `/v0/rules/${ruleId}`],
  ['PUT', () => `/v0/rules/${ruleId}`],
  ['DELETE', () => `/v0/rules/${ruleId}`],
];

describe('401: authentication', () => {
  it.each(ENDPOINTS)('%s without Authorization: unauthenticated, and nothing happens', async (method, path) => {
    const res = await server.api(
      method,
      path(),
      method === 'POST' || method === 'PATCH' || method === 'PUT' ? { user: {}, device: {}, rule: {} } : undefined,
      { token: null },
    );
    expectError(res, 401, UNAUTHENTICATED);
    expect((await server.api('GET', `/v0/devices/${deviceId}`)).status).toBe(200);
    expect((await server.api('GET', `/v0/rules/${ruleId}`)).status).toBe(200);
    expect((await server.api('GET', `/v0/users/${userId}`)).status).toBe(200);
  });

  it.each([
    ['Basic scheme', () => `Basic ${Buffer.from('admin@example.com:x').toString('base64')}`],
    ['Token scheme', () => `Token ${server.token}`],
    ['token without a scheme', () => server.token],
    ['Bearer glued to the token', () => `Bearer${server.token}`],
  ])('%s: unauthenticated', async (_name, header) => {
    const res = await server.api('GET', '/v0/users', undefined, { token: null, headers: { authorization: header() } });
    expectError(res, 401, UNAUTHENTICATED);
  });

  it.each([
    ['bearer', (t: string) => `bearer ${t}`],
    ['BEARER', (t: string) => `BEARER ${t}`],
    ['BeArEr', (t: string) => `BeArEr ${t}`],
  ])('the scheme is case-insensitive: %s <token> is accepted', async (_name, header) => {
    const res = await server.api('GET', '/v0/users', undefined, {
      token: null,
      headers: { authorization: header(server.token) },
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
  });

  it.each([
    ['a short word', 'abc'],
    ['a JWT-looking value', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln'],
    ['our prefix with a truncated body', 'nf_abc'],
    ['the real token with a character appended', null],
  ])('a token not of our format (%s): invalid_token', async (_name, value) => {
    const token = value ?? `${server.token}x`;
    expectError(await server.api('GET', '/v0/users', undefined, { token }), 401, INVALID_TOKEN);
    expectError(
      await server.api('GET', '/v0/users', undefined, { token: null, headers: { authorization: `bearer ${token}` } }),
      401,
      INVALID_TOKEN,
    );
  });

  it('a well-formed token that was never issued: no_resource_found (reading: nf_ + 43 base64url characters is the format the CLI prints)', async () => {
    expect(server.token).toMatch(/^nf_[A-Za-z0-9_-]{43}$/);
    const forged = `nf_${randomBytes(32).toString('base64url')}`;
    expectError(await server.api('GET', '/v0/users', undefined, { token: forged }), 401, NO_RESOURCE);
  });

  it('a revoked token: no_resource_found', async () => {
    const email = `${unique('revoked')}@example.com`;
    const token = await tokenFor(email);
    expect((await server.api('GET', '/v0/users', undefined, { token })).status).toBe(200);
    const listed = await runCli(['server', 'token', 'list', '--json', '--db', server.dbPath]);
    expect(listed.code).toBe(0);
    const mine = (JSON.parse(listed.stdout) as Array<{ id: string; email: string }>).filter((t) => t.email === email);
    expect(mine).toHaveLength(1);
    const revoked = await runCli(['server', 'token', 'revoke', mine[0]!.id, '--db', server.dbPath]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expectError(await server.api('GET', '/v0/users', undefined, { token }), 401, NO_RESOURCE);
  });

  it('a token whose owner is demoted is revoked: no_resource_found; promoted again, it stays revoked', async () => {
    const email = `${unique('demoted')}@example.com`;
    const token = await tokenFor(email);
    expect((await server.api('GET', '/v0/users', undefined, { token })).status).toBe(200);
    const demoted = await server.api('PATCH', `/v0/users/${email}`, { user: { role: 'unprivileged' } });
    expect(demoted.status).toBe(200);
    expectError(await server.api('GET', '/v0/users', undefined, { token }), 401, NO_RESOURCE);
    expectError(
      await server.api('POST', '/v0/rules', { rule: { destination: '172.16.0.0/12' } }, { token }),
      401,
      NO_RESOURCE,
    );
    expect((await server.api('GET', '/v0/rules')).body.data.some((r: any) => r.destination === '172.16.0.0/12')).toBe(
      false,
    );
    expect((await server.api('PATCH', `/v0/users/${email}`, { user: { role: 'admin' } })).status).toBe(200);
    expectError(await server.api('GET', '/v0/users', undefined, { token }), 401, NO_RESOURCE);
  });

  it('a token whose owner is no longer an admin by other means (not through /v0): {"error":"Unauthorized"}', async () => {
    const email = `${unique('unprivileged')}@example.com`;
    const token = await tokenFor(email);
    const sql = await openSql(server.dbPath);
    try {
      await sql.run("UPDATE users SET role = 'unprivileged' WHERE email = ?", email);
    } finally {
      await sql.close();
    }
    expectError(await server.api('GET', '/v0/users', undefined, { token }), 401, UNAUTHORIZED);
  });

  it("a deleted user's token stops working (its tokens are deleted): no_resource_found", async () => {
    const email = `${unique('deleted')}@example.com`;
    const token = await tokenFor(email);
    expect((await server.api('GET', '/v0/users', undefined, { token })).status).toBe(200);
    expect((await server.api('DELETE', `/v0/users/${email}`)).status).toBe(204);
    expectError(await server.api('GET', '/v0/users', undefined, { token }), 401, NO_RESOURCE);
  });

  it('authentication runs before routing: no token gets 401 for unknown ids, non-UUID ids and unknown emails', async () => {
    for (const path of [
      `/v0/devices/${randomUUID()}`,
      '/v0/devices/not-a-uuid',
      `/v0/rules/${randomUUID()}`,
      '/v0/rules/42',
      `/v0/users/${randomUUID()}`,
      '/v0/users/nobody@example.com',
    ]) {
      for (const method of ['GET', 'PATCH', 'PUT', 'DELETE']) {
        const body = method === 'PATCH' || method === 'PUT' ? { device: {}, rule: {}, user: {} } : undefined;
        expectError(await server.api(method, path, body, { token: null }), 401, UNAUTHENTICATED);
        expectError(await server.api(method, path, body, { token: 'abc' }), 401, INVALID_TOKEN);
      }
    }
  });

  it('authentication runs before routing (reading: also for unknown routes and unknown methods under /v0)', async () => {
    for (const [method, path] of [
      ['GET', '/v0/groups'],
      ['DELETE', '/v0/users'],
      ['POST', `/v0/rules/${ruleId}`],
    ] as const) {
      expectError(await server.api(method, path, undefined, { token: null }), 401, UNAUTHENTICATED);
    }
  });

  it('authentication runs before the body is read (reading: a bad body without a token is 401, not 400)', async () => {
    expectError(await server.api('POST', '/v0/users', '{"user": ', { token: null }), 401, UNAUTHENTICATED);
    expectError(await server.api('POST', '/v0/users', { users: {} }, { token: null }), 401, UNAUTHENTICATED);
  });
});

describe('400 Bad Request', () => {
  const BODIES: Array<[string, (wrapper: string) => string]> = [
    ['malformed JSON', (w) => `{"${w}": {`],
    ['trailing garbage after JSON', (w) => `{"${w}": {}} x`],
    ['a missing wrapper key', () => JSON.stringify({ other: {} })],
    ['an empty object', () => '{}'],
    ['the wrapper is a string', (w) => JSON.stringify({ [w]: 'x' })],
    ['the wrapper is a number', (w) => JSON.stringify({ [w]: 1 })],
    ['the wrapper is null', (w) => JSON.stringify({ [w]: null })],
    ['the wrapper is an array', (w) => JSON.stringify({ [w]: [] })],
    ['the body is an array', (w) => JSON.stringify([{ [w]: {} }])],
    ['the body is a JSON string', () => '"x"'],
    ['the body is a JSON number', () => '1'],
    ['the body is JSON null', () => 'null'],
  ];
  const TARGETS: Array<[string, () => string, string]> = [
    ['POST', () => '/v0/users', 'user'],
    ['PATCH', () => `/v0/users/${userId}`, 'user'],
    ['PUT', () => `/v0/users/${userId}`, 'user'],
    ['POST', () => '/v0/devices', 'device'],
    ['PATCH', () => `/v0/devices/${deviceId}`, 'device'],
    ['PUT', () => `/v0/devices/${deviceId}`, 'device'],
    ['POST', () => '/v0/rules', 'rule'],
    ['PATCH', () => `/v0/rules/${ruleId}`, 'rule'],
    ['PUT', () => `/v0/rules/${ruleId}`, 'rule'],
  ];

  it.each(BODIES)(
    '%s: 400 {"error":"Bad Request"} on every create and update, JSON even when Accept asks for HTML',
    async (_name, makeBody) => {
      for (const [method, path, wrapper] of TARGETS) {
        const res = await server.api(method, path(), makeBody(wrapper), {
          headers: { 'content-type': 'application/json', accept: 'text/html' },
        });
        expect(res.status, `${method} ${path()}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body).toEqual(BAD_REQUEST);
        expect(res.headers['content-type']).toBe(JSON_TYPE);
      }
    },
  );

  it('an empty body on create or update is 400 (reading: a missing wrapper key)', async () => {
    for (const [method, path] of TARGETS) {
      const res = await raw(method, path(), {
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
        body: '',
      });
      expect(res.status, `${method} ${path()}: ${res.text}`).toBe(400);
      expect(res.body).toEqual(BAD_REQUEST);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
    }
  });

  it('the wrapper must be the resource of the path: {"user": …} to /v0/rules is 400', async () => {
    expectError(await server.api('POST', '/v0/rules', { user: { destination: '10.200.0.0/16' } }), 400, BAD_REQUEST);
    expectError(await server.api('POST', '/v0/devices', { rule: {} }), 400, BAD_REQUEST);
    expectError(await server.api('PATCH', `/v0/users/${userId}`, { device: {} }), 400, BAD_REQUEST);
  });

  it('a failed request changes nothing', async () => {
    const before = (await server.api('GET', '/v0/users')).body.data;
    await server.api('POST', '/v0/users', '{"user": {"email": "half@example.com"');
    await server.api('PATCH', `/v0/users/${userId}`, { user: 'admin' });
    expect((await server.api('GET', '/v0/users')).body.data).toEqual(before);
  });
});

describe('413 Payload Too Large', () => {
  it('a body over 1 MiB: 413 {"error":"Payload Too Large"} and nothing created', async () => {
    const email = `${unique('big')}@example.com`;
    const prefix = JSON.stringify({ user: { email, padding: '' } });
    const body = prefix.replace('"padding":""', `"padding":"${'x'.repeat(MIB + 1 - prefix.length)}"`);
    expect(Buffer.byteLength(body)).toBe(MIB + 1);
    expectError(await server.api('POST', '/v0/users', body), 413, { error: 'Payload Too Large' });
    expect((await server.api('GET', `/v0/users/${email}`)).status).toBe(404);
  });

  it('a body of exactly 1 MiB is accepted (unknown keys ignored)', async () => {
    const email = `${unique('fits')}@example.com`;
    const prefix = JSON.stringify({ user: { email, padding: '' } });
    const body = prefix.replace('"padding":""', `"padding":"${'x'.repeat(MIB - prefix.length)}"`);
    expect(Buffer.byteLength(body)).toBe(MIB);
    const res = await server.api('POST', '/v0/users', body);
    expect(res.status).toBe(201);
  });

  it('413 also on updates of every collection', async () => {
    const padding = 'x'.repeat(MIB + 10);
    for (const [path, wrapper] of [
      [`/v0/users/${userId}`, 'user'],
      [`/v0/devices/${deviceId}`, 'device'],
      [`/v0/rules/${ruleId}`, 'rule'],
    ] as const) {
      expectError(await server.api('PATCH', path, { [wrapper]: { padding } }), 413, { error: 'Payload Too Large' });
    }
  });
});

describe('404 not_found', () => {
  it.each(['devices', 'rules', 'users'])(
    '%s: an unknown UUID on show, update (PATCH and PUT) and delete',
    async (collection) => {
      const wrapper = collection.slice(0, -1);
      const id = randomUUID();
      expectError(await server.api('GET', `/v0/${collection}/${id}`), 404, NOT_FOUND);
      expectError(await server.api('PATCH', `/v0/${collection}/${id}`, { [wrapper]: {} }), 404, NOT_FOUND);
      expectError(await server.api('PUT', `/v0/${collection}/${id}`, { [wrapper]: {} }), 404, NOT_FOUND);
      expectError(await server.api('DELETE', `/v0/${collection}/${id}`), 404, NOT_FOUND);
    },
  );

  it.each([
    ['devices', 'not-a-uuid'],
    ['devices', '123'],
    ['devices', `${randomUUID()}x`],
    ['rules', 'abc'],
    ['rules', '1'],
    ['rules', 'admin@example.com'],
  ])('%s: an id that is not a UUID (%s) is 404, never 400 or 500', async (collection, id) => {
    const wrapper = collection.slice(0, -1);
    expectError(await server.api('GET', `/v0/${collection}/${id}`), 404, NOT_FOUND);
    expectError(await server.api('PATCH', `/v0/${collection}/${id}`, { [wrapper]: {} }), 404, NOT_FOUND);
    expectError(await server.api('DELETE', `/v0/${collection}/${id}`), 404, NOT_FOUND);
  });

  it('users: an unknown email on show, update and delete', async () => {
    const path = `/v0/users/${unique('nobody')}@example.com`;
    expectError(await server.api('GET', path), 404, NOT_FOUND);
    expectError(await server.api('PATCH', path, { user: {} }), 404, NOT_FOUND);
    expectError(await server.api('PUT', path, { user: { role: 'admin' } }), 404, NOT_FOUND);
    expectError(await server.api('DELETE', path), 404, NOT_FOUND);
  });

  it('users: a value that is neither a known UUID nor a known email (e.g. "42") is 404', async () => {
    expectError(await server.api('GET', '/v0/users/42'), 404, NOT_FOUND);
  });

  it('an unknown id in a body that is also invalid: 404 wins (reading: the resource is looked up before validation)', async () => {
    expectError(await server.api('PATCH', `/v0/rules/${randomUUID()}`, { rule: { action: 'maybe' } }), 404, NOT_FOUND);
    expectError(await server.api('PATCH', `/v0/devices/${randomUUID()}`, { device: { mtu: 1 } }), 404, NOT_FOUND);
  });

  it.each([
    ['GET', '/'],
    ['GET', '/v0'],
    ['GET', '/v0/'],
    ['GET', '/v0/groups'],
    ['GET', '/v1/users'],
    ['GET', '/users'],
    ['GET', '/v0/users/admin@example.com/devices'],
    ['POST', '/v0/groups'],
  ])('unknown route %s %s', async (method, path) => {
    expectError(await server.api(method, path, method === 'POST' ? { group: {} } : undefined), 404, NOT_FOUND);
  });

  it.each([
    ['PATCH', '/v0/users'],
    ['PUT', '/v0/devices'],
    ['DELETE', '/v0/rules'],
    ['POST', '/v0/users/admin@example.com'],
    ['POST', '/v0/devices/ID'],
    ['POST', '/v0/rules/ID'],
  ])('unknown method %s %s', async (method, path) => {
    const resolved = path.replace('ID', method === 'POST' && path.includes('devices') ? deviceId : ruleId);
    const body = method === 'GET' || method === 'DELETE' ? undefined : { user: {}, device: {}, rule: {} };
    expectError(await server.api(method, resolved, body), 404, NOT_FOUND);
    // Nothing happened to the addressed collection.
    expect((await server.api('GET', `/v0/rules/${ruleId}`)).status).toBe(200);
    expect((await server.api('GET', `/v0/devices/${deviceId}`)).status).toBe(200);
  });

  it('unknown methods outside the fetch vocabulary (e.g. PROPFIND) are 404 JSON too (reading: "unknown method" row)', async () => {
    const res = await raw('PROPFIND', '/v0/users', { headers: { authorization: `Bearer ${server.token}` } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
  });
});

describe('422 shape', () => {
  it('users, devices and rules share the shape {"errors": {"<field>": ["<message>", ...]}}, all errors at once', async () => {
    const user = await server.api('POST', '/v0/users', {
      user: { email: 'not-an-email', role: 'root', password: 'short' },
    });
    expect(user.status).toBe(422);
    expect(user.headers['content-type']).toBe(JSON_TYPE);
    expect(user.body).toEqual({
      errors: {
        email: ['is invalid'],
        role: ['is invalid'],
        password: ['should be at least 12 character(s)'],
        password_confirmation: ["can't be blank"],
      },
    });

    const device = await server.api('POST', '/v0/devices', {
      device: { use_default_mtu: false, mtu: 100, use_default_persistent_keepalive: false, persistent_keepalive: 500 },
    });
    expect(device.status).toBe(422);
    expect(device.headers['content-type']).toBe(JSON_TYPE);
    expect(device.body).toEqual({
      errors: {
        user_id: ["can't be blank"],
        public_key: ["can't be blank"],
        mtu: ['must be greater than or equal to 576'],
        persistent_keepalive: ['must be less than or equal to 120'],
      },
    });

    const rule = await server.api('POST', '/v0/rules', {
      rule: { action: 'allow', port_type: 'tcp', user_id: randomUUID() },
    });
    expect(rule.status).toBe(422);
    expect(rule.headers['content-type']).toBe(JSON_TYPE);
    expect(rule.body).toEqual({
      errors: {
        destination: ["can't be blank"],
        action: ['is invalid'],
        port_range: ["can't be blank"],
        user_id: ['does not exist'],
      },
    });
  });

  it('errors of no field go under "base" as an array of strings', async () => {
    const single = await startTestServer();
    try {
      const res = await single.api('DELETE', '/v0/users/admin@example.com');
      expect(res.status).toBe(422);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(res.body).toEqual({ errors: { base: ['cannot delete the last admin'] } });
      expect((await single.api('GET', '/v0/users/admin@example.com')).status).toBe(200);
    } finally {
      await single.stop();
    }
  });
});

describe('logs', () => {
  it('the server process never logs tokens, passwords or preshared keys, also on failed requests', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}-x`;
    const psk = randomBytes(32).toString('base64');
    const forged = `nf_${randomBytes(32).toString('base64url')}`;
    await server.api('POST', '/v0/users', {
      user: { email: `${unique('logged')}@example.com`, password, password_confirmation: password },
    });
    await server.api('POST', '/v0/users', {
      user: { email: `${unique('logged')}@example.com`, password, password_confirmation: `${password}-other` },
    });
    await server.api('POST', '/v0/users', `{"user": {"password": "${password}"`);
    await server.api('POST', '/v0/devices', {
      device: { user_id: userId, public_key: randomBytes(32).toString('base64'), preshared_key: psk },
    });
    await server.api('POST', '/v0/devices', {
      device: { user_id: randomUUID(), public_key: 'bad', preshared_key: psk },
    });
    await server.api('GET', '/v0/users', undefined, { token: forged });
    await server.api('GET', '/v0/users', undefined, {
      token: null,
      headers: { authorization: `bearer ${server.token}` },
    });
    const logs = server.stderr();
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [server.token, server.token.slice(3), password, psk, forged, forged.slice(3)])
      expect(logs).not.toContain(secret);
  });
});
