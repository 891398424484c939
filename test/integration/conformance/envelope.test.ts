/**
 * Conformance of the /v0 envelope (docs/rule-semantics.md §1), checked black-box against a real `netform serve`
 * process: content type, `data` wrapping, 201 + Location, 204, PUT == PATCH, empty updates,
 * unknown keys, empty strings, timestamp and id shapes, list order.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, startTestServer, type ApiResponse, type TestServer } from '../../helpers/server.js';
import { JSON_TYPE, TIMESTAMP, UUID_V4 } from '../../helpers/api-shapes.js';

let server: TestServer;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const unique = (prefix: string) => `${prefix}-${++counter}-${randomBytes(3).toString('hex')}`;
const publicKey = () => randomBytes(32).toString('base64');

async function createUser(attributes: Record<string, unknown> = {}): Promise<any> {
  const res = await server.api('POST', '/v0/users', { user: { email: `${unique('env')}@example.com`, ...attributes } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function createDevice(userId: string, attributes: Record<string, unknown> = {}): Promise<any> {
  const res = await server.api('POST', '/v0/devices', {
    device: { user_id: userId, public_key: publicKey(), ...attributes },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

let ruleBlock = 0;
/** A /16 of its own for every rule, so that rules of different tests never overlap. */
const freshDestination = () => `10.${++ruleBlock}.0.0/16`;

async function createRule(attributes: Record<string, unknown> = {}): Promise<any> {
  const res = await server.api('POST', '/v0/rules', { rule: { destination: freshDestination(), ...attributes } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

function expectJson(res: ApiResponse): void {
  expect(res.headers['content-type']).toBe(JSON_TYPE);
}

type Collection = 'users' | 'devices' | 'rules';
const WRAPPER: Record<Collection, string> = { users: 'user', devices: 'device', rules: 'rule' };

/** A fresh resource of the collection and a valid change for it. */
async function fixture(
  collection: Collection,
): Promise<{ resource: any; change: Record<string, unknown>; changed: Record<string, unknown> }> {
  if (collection === 'users') {
    const email = `${unique('changed')}@example.com`;
    return { resource: await createUser(), change: { email }, changed: { email } };
  }
  if (collection === 'devices') {
    const user = await createUser();
    return {
      resource: await createDevice(user.id),
      change: { description: 'changed' },
      changed: { description: 'changed' },
    };
  }
  return { resource: await createRule(), change: { action: 'accept' }, changed: { action: 'accept' } };
}

describe('success envelope', () => {
  it.each<Collection>(['users', 'devices', 'rules'])(
    '%s: create answers 201, Location /v0/<collection>/<uuid>, data object, JSON content type',
    async (collection) => {
      let body: Record<string, unknown>;
      if (collection === 'users') body = { user: { email: `${unique('loc')}@example.com` } };
      else if (collection === 'devices')
        body = { device: { user_id: (await createUser()).id, public_key: publicKey() } };
      else body = { rule: { destination: freshDestination() } };
      const res = await server.api('POST', `/v0/${collection}`, body);
      expect(res.status).toBe(201);
      expectJson(res);
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(res.body.data.id).toMatch(UUID_V4);
      expect(res.headers.location).toBe(`/v0/${collection}/${res.body.data.id}`);
    },
  );

  it.each<Collection>(['users', 'devices', 'rules'])(
    '%s: list answers 200 with data as an array; show answers 200 with data as the object',
    async (collection) => {
      const { resource } = await fixture(collection);
      const list = await server.api('GET', `/v0/${collection}`);
      expect(list.status).toBe(200);
      expectJson(list);
      expect(Object.keys(list.body)).toEqual(['data']);
      expect(Array.isArray(list.body.data)).toBe(true);
      expect(list.body.data).toContainEqual(resource);
      const show = await server.api('GET', `/v0/${collection}/${resource.id}`);
      expect(show.status).toBe(200);
      expectJson(show);
      expect(show.body).toEqual({ data: resource });
    },
  );

  it.each<Collection>(['users', 'devices', 'rules'])(
    '%s: delete answers 204 with an empty body (reading: no content type required on 204)',
    async (collection) => {
      const { resource } = await fixture(collection);
      const res = await server.api('DELETE', `/v0/${collection}/${resource.id}`);
      expect(res.status).toBe(204);
      expect(res.body).toBeNull();
      expect(res.headers['content-length'] ?? '0').toBe('0');
      const gone = await server.api('GET', `/v0/${collection}/${resource.id}`);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ error: 'not_found' });
    },
  );

  it('users: Location holds the UUID even though the user could be addressed by email', async () => {
    const email = `${unique('Loc')}@Example.com`;
    const res = await server.api('POST', '/v0/users', { user: { email } });
    expect(res.status).toBe(201);
    expect(res.headers.location).toMatch(/^\/v0\/users\/[0-9a-f-]{36}$/i);
    expect(res.headers.location).toBe(`/v0/users/${res.body.data.id}`);
  });
});

describe('update: PUT and PATCH are the same partial update', () => {
  it.each<[Collection, 'PUT' | 'PATCH']>([
    ['users', 'PUT'],
    ['users', 'PATCH'],
    ['devices', 'PUT'],
    ['devices', 'PATCH'],
    ['rules', 'PUT'],
    ['rules', 'PATCH'],
  ])('%s with %s: 200, full resource, only the keys sent change, updated_at moves', async (collection, method) => {
    const { resource, change, changed } = await fixture(collection);
    const res = await server.api(method, `/v0/${collection}/${resource.id}`, { [WRAPPER[collection]]: change });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectJson(res);
    expect(Object.keys(res.body)).toEqual(['data']);
    const { updated_at: before, ...restBefore } = resource;
    const { updated_at: after, ...restAfter } = res.body.data;
    expect(restAfter).toEqual({ ...restBefore, ...changed });
    expect(after).toMatch(TIMESTAMP);
    expect(Date.parse(after)).toBeGreaterThanOrEqual(Date.parse(before));
    expect(after).not.toBe(before);
    expect((await server.api('GET', `/v0/${collection}/${resource.id}`)).body.data).toEqual(res.body.data);
  });

  it.each<[Collection, 'PUT' | 'PATCH']>([
    ['users', 'PUT'],
    ['users', 'PATCH'],
    ['devices', 'PUT'],
    ['devices', 'PATCH'],
    ['rules', 'PUT'],
    ['rules', 'PATCH'],
  ])(
    '%s with %s and an empty wrapped object: 200 with the resource unchanged, updated_at included',
    async (collection, method) => {
      const { resource } = await fixture(collection);
      const res = await server.api(method, `/v0/${collection}/${resource.id}`, { [WRAPPER[collection]]: {} });
      expect(res.status).toBe(200);
      expectJson(res);
      expect(res.body).toEqual({ data: resource });
      expect((await server.api('GET', `/v0/${collection}/${resource.id}`)).body).toEqual({ data: resource });
    },
  );
});

describe('unknown keys and empty strings', () => {
  it('unknown keys inside the wrapped object are ignored on create and update', async () => {
    const email = `${unique('unknown')}@example.com`;
    const created = await server.api('POST', '/v0/users', { user: { email, favourite_colour: 'green', admin: true } });
    expect(created.status).toBe(201);
    expect(created.body.data.role).toBe('unprivileged');
    expect(created.body.data).not.toHaveProperty('favourite_colour');
    const updated = await server.api('PATCH', `/v0/users/${created.body.data.id}`, {
      user: { favourite_colour: 'blue' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toEqual(created.body.data);

    const rule = await server.api('POST', '/v0/rules', { rule: { destination: freshDestination(), priority: 7 } });
    expect(rule.status).toBe(201);
    expect(rule.body.data).not.toHaveProperty('priority');

    const user = await createUser();
    const device = await server.api('POST', '/v0/devices', {
      device: { user_id: user.id, public_key: publicKey(), colour: 'red' },
    });
    expect(device.status).toBe(201);
    expect(device.body.data).not.toHaveProperty('colour');
  });

  it('an empty string counts as null: rule port fields and user_id', async () => {
    const res = await server.api('POST', '/v0/rules', {
      rule: { destination: freshDestination(), port_type: '', port_range: '', user_id: '' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ port_type: null, port_range: null, user_id: null });
  });

  // Where 0.7.36 has a default, its cast turns "" into that default rather than null.
  it('an empty string is the default where the field has one: rule action "" is drop; null stays can\'t be blank', async () => {
    const res = await server.api('POST', '/v0/rules', { rule: { destination: freshDestination(), action: '' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.action).toBe('drop');
    const blank = await server.api('POST', '/v0/rules', { rule: { destination: freshDestination(), action: null } });
    expect(blank.status).toBe(422);
    expectJson(blank);
    expect(blank.body).toEqual({ errors: { action: ["can't be blank"] } });
  });

  it('an empty string is the default where the field has one: a use_default flag "" is true; null stays is invalid', async () => {
    const user = await createUser();
    const res = await server.api('POST', '/v0/devices', {
      device: { user_id: user.id, public_key: publicKey(), use_default_dns: '' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.use_default_dns).toBe(true);
    const invalid = await server.api('POST', '/v0/devices', {
      device: { user_id: user.id, public_key: publicKey(), use_default_dns: null },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toEqual({ errors: { use_default_dns: ['is invalid'] } });
  });

  it('an empty string counts as null: user email "" is can\'t be blank like a missing email', async () => {
    for (const user of [{ email: '' }, { email: null }, {}]) {
      const res = await server.api('POST', '/v0/users', { user });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ errors: { email: ["can't be blank"] } });
    }
  });

  it('an empty string counts as null: password "" on create means no password (no confirmation needed)', async () => {
    const res = await server.api('POST', '/v0/users', {
      user: { email: `${unique('nopw')}@example.com`, password: '' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('an empty string counts as null: device description "" is stored and shown as null', async () => {
    const user = await createUser();
    const device = await createDevice(user.id, { description: 'x' });
    const res = await server.api('PATCH', `/v0/devices/${device.id}`, { device: { description: '' } });
    expect(res.status).toBe(200);
    expect(res.body.data.description).toBeNull();
  });
});

describe('shapes of ids and timestamps', () => {
  it('every id is a UUIDv4 and every timestamp is YYYY-MM-DDTHH:MM:SS.ffffffZ in UTC', async () => {
    const user = await createUser();
    const device = await createDevice(user.id);
    const rule = await createRule({ user_id: user.id });
    for (const resource of [user, device, rule]) {
      expect(resource.id).toMatch(UUID_V4);
      for (const key of ['inserted_at', 'updated_at']) {
        expect(resource[key]).toMatch(TIMESTAMP);
        expect(Number.isNaN(Date.parse(resource[key]))).toBe(false);
        expect(Math.abs(Date.parse(resource[key]) - Date.now())).toBeLessThan(5 * 60_000);
      }
    }
    expect(device.user_id).toBe(user.id);
    expect(rule.user_id).toBe(user.id);
    expect(new Set([user.id, device.id, rule.id]).size).toBe(3);
  });

  it('timestamps carry real microseconds (not always zero-padded milliseconds)', async () => {
    const fractions = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const user = await createUser();
      fractions.add(user.inserted_at.slice(-4, -1));
    }
    // With millisecond clocks padded to six digits the last three digits would always be 000.
    expect([...fractions].some((digits) => digits !== '000')).toBe(true);
  });
});

describe('list order: by inserted_at, then id', () => {
  const byInsertedThenId = (a: any, b: any) =>
    a.inserted_at < b.inserted_at ? -1 : a.inserted_at > b.inserted_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

  it.each<Collection>(['users', 'devices', 'rules'])(
    '%s are listed oldest first, and an update does not move a row',
    async (collection) => {
      const created: any[] = [];
      for (let i = 0; i < 5; i++) created.push((await fixture(collection)).resource);
      const { change } = await fixture(collection);
      const first = created[0];
      const updated = await server.api('PATCH', `/v0/${collection}/${first.id}`, { [WRAPPER[collection]]: change });
      expect(updated.status).toBe(200);

      const list = (await server.api('GET', `/v0/${collection}`)).body.data as any[];
      expect(list).toEqual([...list].sort(byInsertedThenId));
      const positions = created.map((resource) => list.findIndex((row) => row.id === resource.id));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    },
  );
});

describe('requests with other headers', () => {
  it('Content-Type application/json; charset=utf-8 on a request is accepted', async () => {
    const email = `${unique('charset')}@example.com`;
    const res = await server.api(
      'POST',
      '/v0/users',
      { user: { email } },
      { headers: { 'content-type': 'application/json; charset=utf-8' } },
    );
    expect(res.status).toBe(201);
    expectJson(res);
  });

  it('query parameters on a list are ignored: every row, no pagination (reading: v0 has none)', async () => {
    for (let i = 0; i < 3; i++) await createRule();
    const all = (await server.api('GET', '/v0/rules')).body.data;
    const paged = await server.api('GET', '/v0/rules?page=2&per_page=1&sort=desc');
    expect(paged.status).toBe(200);
    expect(paged.body.data).toEqual(all);
  });

  it('non-ASCII text is stored and echoed as sent (UTF-8)', async () => {
    const user = await createUser();
    const device = await createDevice(user.id, { name: 'Jürgen’s 💻', description: 'naïve — 日本語' });
    expect(device.name).toBe('Jürgen’s 💻');
    expect(device.description).toBe('naïve — 日本語');
  });
});

describe('durability', () => {
  it('an acknowledged write survives SIGKILL of the server process', async () => {
    const own = await startServerProcess();
    try {
      const user = (await own.api('POST', '/v0/users', { user: { email: 'durable@example.com' } })).body.data;
      const device = (await own.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: publicKey() } }))
        .body.data;
      const rule = (await own.api('POST', '/v0/rules', { rule: { destination: '10.250.0.0/16', user_id: user.id } }))
        .body.data;
      const updated = (await own.api('PATCH', `/v0/devices/${device.id}`, { device: { description: 'acknowledged' } }))
        .body.data;
      const exited = own.exited();
      process.kill(own.pid()!, 'SIGKILL');
      expect((await exited).signal).toBe('SIGKILL');
      await own.restart();
      expect((await own.api('GET', `/v0/users/${user.id}`)).body.data).toEqual(user);
      expect((await own.api('GET', `/v0/devices/${device.id}`)).body.data).toEqual(updated);
      expect((await own.api('GET', `/v0/rules/${rule.id}`)).body.data).toEqual(rule);
    } finally {
      await own.stop();
    }
  });
});
