import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { openSql } from '../../helpers/store.js';

const BAD_REQUEST = { error: 'Bad Request' };
const NOT_FOUND = { error: 'not_found' };
const JSON_TYPE = 'application/json; charset=utf-8';

let server: TestServer;
beforeAll(async () => {
  server = await startInProcessServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('400 Bad Request', () => {
  it.each([
    ['malformed JSON', '{"user": {"email": '],
    ['a missing wrapper key', { users: { email: 'a@example.com' } }],
    ['a wrapper that is a string', { user: 'a@example.com' }],
    ['a wrapper that is a list', { user: [] }],
    ['a wrapper that is null', { user: null }],
    ['a body that is a list', [{ user: {} }]],
    ['a body that is a JSON string', '"user"'],
    ['an empty body', ''],
    ['prototype poisoning', '{"user": {"email": "p@example.com"}, "__proto__": {"admin": true}}'],
  ])('%s', async (_name, body) => {
    for (const [method, path] of [
      ['POST', '/v0/users'],
      ['PATCH', '/v0/users/admin@example.com'],
    ] as const) {
      const res = await server.api(method, path, body, {
        headers: { 'content-type': 'application/json', accept: 'text/html' },
      });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body).toEqual(BAD_REQUEST);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
    }
  });

  it('the wrapper key is the resource of the path', async () => {
    const res = await server.api('POST', '/v0/rules', { device: { destination: '10.0.0.0/8' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(BAD_REQUEST);
  });

  it('JSON is read whatever the Content-Type, and a body on DELETE is ignored', async () => {
    const plain = await server.api('POST', '/v0/users', JSON.stringify({ user: { email: 'plain@example.com' } }), {
      headers: { 'content-type': 'text/plain' },
    });
    expect(plain.status).toBe(201);
    const del = await server.api('DELETE', `/v0/users/${plain.body.data.id}`, '', {
      headers: { 'content-type': 'application/json' },
    });
    expect(del.status).toBe(204);
  });
});

describe('404 not_found', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/v0'],
    ['GET', '/v0/groups'],
    ['GET', '/v1/users'],
    ['POST', '/v0/users/admin@example.com'],
    ['DELETE', '/v0/users'],
    ['PUT', '/v0/rules'],
    ['HEAD', '/v0/users'],
    ['OPTIONS', '/v0/users'],
    ['GET', '/v0/devices/1/extra'],
  ])('%s %s', async (method, path) => {
    const res = await server.api(method, path);
    expect(res.status).toBe(404);
    if (method !== 'HEAD') expect(res.body).toEqual(NOT_FOUND);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
  });

  it('a trailing slash is the same path', async () => {
    expect((await server.api('GET', '/v0/users/')).status).toBe(200);
  });
});

describe('413 Payload Too Large', () => {
  it('a body over 1 MiB by default', async () => {
    const big = JSON.stringify({ user: { email: 'big@example.com', padding: 'x'.repeat(1024 * 1024) } });
    const res = await server.api('POST', '/v0/users', big);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'Payload Too Large' });
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect((await server.api('GET', '/v0/users/big@example.com')).status).toBe(404);
    const justUnder = JSON.stringify({ user: { email: 'fits@example.com', padding: 'x'.repeat(1000 * 1000) } });
    expect((await server.api('POST', '/v0/users', justUnder)).status).toBe(201);
  });

  it('the limit is configurable', async () => {
    const small = await startInProcessServer({ bodyLimit: 200 });
    try {
      const res = await small.api('POST', '/v0/users', { user: { email: 'a@example.com', padding: 'x'.repeat(300) } });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: 'Payload Too Large' });
      expect((await small.api('POST', '/v0/users', { user: { email: 'a@example.com' } })).status).toBe(201);
    } finally {
      await small.stop();
    }
  });
});

describe('500 Internal Server Error', () => {
  it('answers JSON without a stack trace or internals, and logs the error', async () => {
    const broken = await startInProcessServer();
    try {
      const db = await openSql(broken.dbPath);
      await db.run('DROP TABLE rules');
      await db.close();
      const res = await broken.api('GET', '/v0/rules');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Internal Server Error' });
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(broken.stderr()).toMatch(/no such table: rules|relation \\?"rules\\?" does not exist/);
      // The error is logged through the request's own logger, made only then: bound to its id.
      const lines = broken
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l));
      const failed = lines.find((l) => l.msg === 'request failed');
      const answered = lines.find((l) => l.msg === 'request completed' && l.res?.statusCode === 500);
      expect(failed).toMatchObject({ level: 50, reqId: expect.any(String) });
      expect(failed.reqId).toBe(answered.reqId);
      // The server keeps serving the rest.
      expect((await broken.api('GET', '/v0/users')).status).toBe(200);
    } finally {
      await broken.stop();
    }
  });
});

describe('request logs', () => {
  it('never contain the Authorization header, passwords or preshared keys', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}-secret`;
    const psk = randomBytes(32).toString('base64');
    const user = (
      await server.api('POST', '/v0/users', {
        user: { email: 'logged@example.com', password, password_confirmation: password },
      })
    ).body.data;
    await server.api('POST', '/v0/users', {
      user: {
        email: 'short@example.com',
        password: `${password.slice(0, 8)}`,
        password_confirmation: 'other-secret-value',
      },
    });
    await server.api('POST', '/v0/users', `{"user": {"email": "x@example.com", "password": "${password}"`);
    await server.api('POST', '/v0/users', JSON.stringify({ user: { password, padding: 'x'.repeat(1024 * 1024) } }));
    const device = await server.api('POST', '/v0/devices', {
      device: { user_id: user.id, public_key: randomBytes(32).toString('base64'), preshared_key: psk },
    });
    expect(device.status).toBe(201);
    await server.api('PATCH', `/v0/devices/${device.body.data.id}`, {
      device: { preshared_key: `${psk.slice(0, 20)}!!` },
    });
    await server.api('GET', '/v0/users', undefined, { token: `nf_${'B'.repeat(43)}` });
    await server.api('GET', `/v0/rules?access_token=${server.token}`);

    const logs = server.stderr();
    expect(logs).toContain('"statusCode":201');
    expect(logs).toContain('"statusCode":413');
    expect(logs).toContain('"statusCode":400');
    for (const secret of [
      server.token,
      server.token.slice(3),
      password,
      password.slice(0, 8),
      'other-secret-value',
      psk,
      psk.slice(0, 20),
      'B'.repeat(43),
    ]) {
      expect(logs).not.toContain(secret);
    }
    expect(logs.toLowerCase()).not.toContain('authorization');
  });
});
