/**
 * Conformance of /v0/devices (seed "Device", docs/rule-semantics.md §5), checked black-box against a real
 * `netform serve` process.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { JSON_TYPE, TIMESTAMP, UUID_V4 } from '../../helpers/api-shapes.js';
import { DEVICE_CONTRACT_KEYS } from '../../helpers/device-contract.js';

const DEVICE_KEYS = [...DEVICE_CONTRACT_KEYS].sort();
const LIMIT_MESSAGE = 'Maximum device limit reached. Remove an existing device before creating a new one.';
const FLAGS = ['allowed_ips', 'dns', 'endpoint', 'mtu', 'persistent_keepalive'] as const;
/** A value of its own for each defaultable field. */
const VALUES: Record<string, unknown> = {
  allowed_ips: ['10.0.0.0/8'],
  dns: ['8.8.8.8'],
  endpoint: 'vpn.example.com:51820',
  mtu: 1400,
  persistent_keepalive: 10,
};

let server: TestServer;
let counter = 0;
let defaults: Record<string, any>;

beforeAll(async () => {
  server = await startTestServer();
  defaults = await readDefaults(server);
});
afterAll(async () => {
  await server?.stop();
});

const key = () => randomBytes(32).toString('base64');
const uniqueEmail = () => `dev-${++counter}-${randomBytes(3).toString('hex')}@example.com`;

/** A 44-character standard base64 string decoding to exactly 32 bytes. */
function isKey(value: unknown): boolean {
  return typeof value === 'string' && /^[A-Za-z0-9+/]{43}=$/.test(value) && Buffer.from(value, 'base64').length === 32;
}

async function readDefaults(target: TestServer): Promise<Record<string, any>> {
  const shown = await runCli(['server', 'defaults', 'show', '--json', '--db', target.dbPath]);
  expect(shown.code, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout);
}

async function setDefault(target: TestServer, name: string, value: string): Promise<void> {
  const set = await runCli(['server', 'defaults', 'set', name, value, '--db', target.dbPath]);
  expect(set.code, set.stderr).toBe(0);
}

async function createUser(target: TestServer = server): Promise<any> {
  const res = await target.api('POST', '/v0/users', { user: { email: uniqueEmail() } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function createDevice(
  userId: string,
  attributes: Record<string, unknown> = {},
  target: TestServer = server,
): Promise<any> {
  const res = await target.api('POST', '/v0/devices', {
    device: { user_id: userId, public_key: key(), ...attributes },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function expectCreate422(
  attributes: Record<string, unknown>,
  errors: Record<string, string[]>,
  target: TestServer = server,
): Promise<void> {
  const before = (await target.api('GET', '/v0/devices')).body.data.length;
  const res = await target.api('POST', '/v0/devices', { device: attributes });
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.headers['content-type']).toBe(JSON_TYPE);
  expect(res.body).toEqual({ errors });
  expect((await target.api('GET', '/v0/devices')).body.data.length).toBe(before);
}

async function expectUpdate422(
  id: string,
  attributes: Record<string, unknown>,
  errors: Record<string, string[]>,
): Promise<void> {
  const before = (await server.api('GET', `/v0/devices/${id}`)).body.data;
  const res = await server.api('PATCH', `/v0/devices/${id}`, { device: attributes });
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.headers['content-type']).toBe(JSON_TYPE);
  expect(res.body).toEqual({ errors });
  expect((await server.api('GET', `/v0/devices/${id}`)).body.data).toEqual(before);
}

let owner: any;
beforeAll(async () => {
  owner = await createUser();
});

/** A user of its own for every successful create, so that no user reaches the device limit by accident. */
const freshOwner = async () => (await createUser()).id;

/** A create body for the shared owner (who never gets a device) plus the given attributes. */
const body = (attributes: Record<string, unknown> = {}) => ({ user_id: owner.id, public_key: key(), ...attributes });

describe('response shape and defaults', () => {
  it('a minimal create: exactly the 25 keys, generated name and preshared key, effective defaults, statistics null', async () => {
    const user = await createUser();
    const publicKey = key();
    const res = await server.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: publicKey } });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/v0/devices/${res.body.data.id}`);
    const device = res.body.data;
    expect(Object.keys(device).sort()).toEqual(DEVICE_KEYS);
    expect(device.id).toMatch(UUID_V4);
    expect(device.user_id).toBe(user.id);
    expect(device.public_key).toBe(publicKey);
    expect(typeof device.name).toBe('string');
    expect(device.name.trim()).toBe(device.name);
    expect(device.name.length).toBeGreaterThanOrEqual(1);
    expect(device.name.length).toBeLessThanOrEqual(255);
    expect(isKey(device.preshared_key)).toBe(true);
    expect(device.preshared_key).not.toBe(publicKey);
    expect(device).toMatchObject({
      use_default_allowed_ips: true,
      use_default_dns: true,
      use_default_endpoint: true,
      use_default_mtu: true,
      use_default_persistent_keepalive: true,
      allowed_ips: ['0.0.0.0/0', '::/0'],
      dns: ['1.1.1.1', '1.0.0.1'],
      mtu: 1280,
      persistent_keepalive: 25,
      latest_handshake: null,
      remote_ip: null,
      rx_bytes: null,
      tx_bytes: null,
    });
    expect(device.endpoint).toMatch(/^\S+:51820$/);
    expect(device.endpoint).toBe(defaults.endpoint);
    expect(device.inserted_at).toMatch(TIMESTAMP);
    expect(device.updated_at).toMatch(TIMESTAMP);
    expect(device.description ?? null).toBeNull();
  });

  it("server_public_key is a base64 32-byte key, identical on every device and equal to the server's own key", async () => {
    const a = await createDevice(await freshOwner());
    const b = await createDevice((await createUser()).id);
    expect(isKey(a.server_public_key)).toBe(true);
    expect(b.server_public_key).toBe(a.server_public_key);
    expect(a.server_public_key).toBe(defaults.server_public_key);
    const listed = (await server.api('GET', '/v0/devices')).body.data as any[];
    expect(new Set(listed.map((d) => d.server_public_key))).toEqual(new Set([a.server_public_key]));
  });

  it('server_public_key survives a restart and is not settable', async () => {
    const own = await startTestServer();
    try {
      const user = await createUser(own);
      const first = await createDevice(user.id, { server_public_key: key() }, own);
      expect(first.server_public_key).not.toBe(undefined);
      await own.restart();
      const second = await createDevice(user.id, {}, own);
      expect(second.server_public_key).toBe(first.server_public_key);
      expect((await own.api('GET', `/v0/devices/${first.id}`)).body.data).toEqual(first);
      expect(first.server_public_key).toBe((await readDefaults(own)).server_public_key);
    } finally {
      await own.stop();
    }
  });

  it('read-only fields sent on create or update are ignored: id, server_public_key, statistics, timestamps', async () => {
    const readOnly = {
      id: randomUUID(),
      server_public_key: key(),
      latest_handshake: '2020-01-01T00:00:00.000000Z',
      remote_ip: '198.51.100.1',
      rx_bytes: 1000,
      tx_bytes: 2000,
      inserted_at: '2001-01-01T00:00:00.000000Z',
      updated_at: '2001-01-01T00:00:00.000000Z',
    };
    const device = await createDevice(await freshOwner(), readOnly);
    expect(device.id).not.toBe(readOnly.id);
    expect(device.server_public_key).toBe(defaults.server_public_key);
    expect(device).toMatchObject({ latest_handshake: null, remote_ip: null, rx_bytes: null, tx_bytes: null });
    expect(device.inserted_at.startsWith('2001')).toBe(false);
    const res = await server.api('PATCH', `/v0/devices/${device.id}`, { device: readOnly });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(device);
  });

  it('generated preshared keys differ between devices, and generated names are unique per user', async () => {
    const user = await createUser();
    const devices = [];
    for (let i = 0; i < 4; i++) devices.push(await createDevice(user.id));
    expect(new Set(devices.map((d) => d.preshared_key)).size).toBe(4);
    expect(new Set(devices.map((d) => d.name)).size).toBe(4);
  });

  it('a full create body with every use_default_* false is echoed back as sent', async () => {
    const user = await createUser();
    const sent = {
      user_id: user.id,
      name: 'Full Laptop',
      description: 'every field',
      public_key: key(),
      preshared_key: key(),
      use_default_allowed_ips: false,
      use_default_dns: false,
      use_default_endpoint: false,
      use_default_mtu: false,
      use_default_persistent_keepalive: false,
      allowed_ips: ['10.0.0.0/8', 'fd00::/64', '192.168.1.1'],
      dns: ['9.9.9.9', 'dns.example.com', '2606:4700:4700::1111'],
      endpoint: 'vpn.example.com:51820',
      mtu: 1420,
      persistent_keepalive: 0,
      ipv4: '10.3.2.200',
      ipv6: 'fd00::3:2:c8',
    };
    const res = await server.api('POST', '/v0/devices', { device: sent });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject(sent);
    expect((await server.api('GET', `/v0/devices/${res.body.data.id}`)).body.data).toMatchObject(sent);
  });

  it('use_default_<x> false without <x>: lists are stored and shown as [] (as upstream), other fields as null', async () => {
    const device = await createDevice(await freshOwner(), {
      use_default_allowed_ips: false,
      use_default_dns: false,
      use_default_mtu: false,
      use_default_persistent_keepalive: false,
    });
    expect(device.allowed_ips).toEqual([]);
    expect(device.dns).toEqual([]);
    expect((await server.api('GET', `/v0/devices/${device.id}`)).body.data).toMatchObject({ allowed_ips: [], dns: [] });
    expect(device.mtu).toBeNull();
    expect(device.persistent_keepalive).toBeNull();
    expect(device.endpoint).toBe(defaults.endpoint);
  });

  it('use_default_<x> false with a null list, on create or by update, is [] too', async () => {
    const created = await createDevice(await freshOwner(), {
      use_default_allowed_ips: false,
      allowed_ips: null,
      use_default_dns: false,
      dns: '',
    });
    expect(created).toMatchObject({ allowed_ips: [], dns: [] });
    const other = await createDevice(await freshOwner());
    const res = await server.api('PATCH', `/v0/devices/${other.id}`, {
      device: { use_default_allowed_ips: false, use_default_dns: false },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      allowed_ips: [],
      dns: [],
      use_default_allowed_ips: false,
      use_default_dns: false,
    });
    const cleared = await server.api('PATCH', `/v0/devices/${other.id}`, { device: { allowed_ips: null } });
    expect(cleared.body.data.allowed_ips).toEqual([]);
  });

  it('use_default_<x> false with an empty list is stored and shown as []', async () => {
    const device = await createDevice(await freshOwner(), {
      use_default_allowed_ips: false,
      allowed_ips: [],
      use_default_dns: false,
      dns: [],
    });
    expect(device.allowed_ips).toEqual([]);
    expect(device.dns).toEqual([]);
  });

  it('use_default_<x> true with an empty value is accepted and shows the default (reading: only a non-empty value "must not be present")', async () => {
    const device = await createDevice(await freshOwner(), {
      use_default_allowed_ips: true,
      allowed_ips: [],
      use_default_dns: true,
      dns: [],
      endpoint: null,
      mtu: null,
    });
    expect(device.allowed_ips).toEqual(['0.0.0.0/0', '::/0']);
    expect(device.dns).toEqual(['1.1.1.1', '1.0.0.1']);
    expect(device.mtu).toBe(1280);
    expect(device.endpoint).toBe(defaults.endpoint);
  });

  it("responses show the server's current default when use_default_<x> is true (a changed default shows at once)", async () => {
    const own = await startTestServer();
    try {
      const user = await createUser(own);
      const device = await createDevice(user.id, {}, own);
      const pinned = await createDevice(user.id, { use_default_mtu: false, mtu: 1400 }, own);
      await setDefault(own, 'mtu', '1300');
      await setDefault(own, 'dns', '9.9.9.9,8.8.8.8');
      await own.restart();
      const shown = (await own.api('GET', `/v0/devices/${device.id}`)).body.data;
      expect(shown.mtu).toBe(1300);
      expect(shown.dns).toEqual(['9.9.9.9', '8.8.8.8']);
      expect((await own.api('GET', `/v0/devices/${pinned.id}`)).body.data.mtu).toBe(1400);
    } finally {
      await own.stop();
    }
  });
});

describe('create field rules', () => {
  it('user_id: required; an unknown user does not exist', async () => {
    await expectCreate422({ public_key: key() }, { user_id: ["can't be blank"] });
    await expectCreate422({ user_id: null, public_key: key() }, { user_id: ["can't be blank"] });
    await expectCreate422({ user_id: '', public_key: key() }, { user_id: ["can't be blank"] });
    await expectCreate422({ user_id: randomUUID(), public_key: key() }, { user_id: ['does not exist'] });
  });

  it('user_id that is not a UUID is refused on user_id (reading: "does not exist" or "is invalid")', async () => {
    const res = await server.api('POST', '/v0/devices', {
      device: { user_id: 'admin@example.com', public_key: key() },
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['user_id']);
    expect([['does not exist'], ['is invalid']]).toContainEqual(res.body.errors.user_id);
  });

  it('name: trimmed; 255 characters accepted, 256 not', async () => {
    const trimmed = await createDevice(await freshOwner(), { name: '  Trimmed Laptop  ' });
    expect(trimmed.name).toBe('Trimmed Laptop');
    const long = `n${randomBytes(2).toString('hex')}`.padEnd(255, 'x');
    expect((await createDevice(await freshOwner(), { name: long })).name).toBe(long);
    await expectCreate422(body({ name: 'y'.repeat(256) }), { name: ['should be at most 255 character(s)'] });
  });

  it('name: unique per user (after trimming); the same name for another user is fine', async () => {
    const user = await createUser();
    await createDevice(user.id, { name: 'phone' });
    await expectCreate422({ user_id: user.id, public_key: key(), name: 'phone' }, { name: ['has already been taken'] });
    await expectCreate422(
      { user_id: user.id, public_key: key(), name: ' phone ' },
      { name: ['has already been taken'] },
    );
    const other = await createUser();
    expect((await createDevice(other.id, { name: 'phone' })).name).toBe('phone');
  });

  it('description: 2048 characters accepted, 2049 not', async () => {
    expect((await createDevice(await freshOwner(), { description: 'd'.repeat(2048) })).description).toHaveLength(2048);
    await expectCreate422(body({ description: 'd'.repeat(2049) }), {
      description: ['should be at most 2048 character(s)'],
    });
  });

  it('public_key: required', async () => {
    await expectCreate422({ user_id: owner.id }, { public_key: ["can't be blank"] });
    await expectCreate422({ user_id: owner.id, public_key: '' }, { public_key: ["can't be blank"] });
  });

  it('public_key: base64 of the wrong length is "should be 44 character(s)"', async () => {
    await expectCreate422(body({ public_key: randomBytes(16).toString('base64') }), {
      public_key: ['should be 44 character(s)'],
    });
    await expectCreate422(body({ public_key: randomBytes(48).toString('base64') }), {
      public_key: ['should be 44 character(s)'],
    });
  });

  it('public_key: 44 characters that are not standard base64 is "must be a base64-encoded string"', async () => {
    await expectCreate422(body({ public_key: `${'!'.repeat(43)}=` }), {
      public_key: ['must be a base64-encoded string'],
    });
    const urlSafe = `${'-_'.repeat(21)}A=`;
    expect(urlSafe).toHaveLength(44);
    await expectCreate422(body({ public_key: urlSafe }), { public_key: ['must be a base64-encoded string'] });
  });

  it('public_key: short text that is not base64 carries the base64 message (reading: the length message may accompany it)', async () => {
    const res = await server.api('POST', '/v0/devices', { device: body({ public_key: 'not base64!' }) });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['public_key']);
    expect(res.body.errors.public_key).toContain('must be a base64-encoded string');
    for (const message of res.body.errors.public_key)
      expect(['must be a base64-encoded string', 'should be 44 character(s)']).toContain(message);
  });

  it('public_key: unique across all devices, also of other users', async () => {
    const publicKey = key();
    await createDevice(await freshOwner(), { public_key: publicKey });
    const other = await createUser();
    await expectCreate422({ user_id: other.id, public_key: publicKey }, { public_key: ['has already been taken'] });
  });

  it('preshared_key: echoed when given; same format rules as public_key', async () => {
    const psk = key();
    expect((await createDevice(await freshOwner(), { preshared_key: psk })).preshared_key).toBe(psk);
    await expectCreate422(body({ preshared_key: randomBytes(16).toString('base64') }), {
      preshared_key: ['should be 44 character(s)'],
    });
    await expectCreate422(body({ preshared_key: `${'*'.repeat(43)}=` }), {
      preshared_key: ['must be a base64-encoded string'],
    });
  });

  it('preshared_key "" or null is generated like an omitted one (reading: empty string counts as null)', async () => {
    for (const preshared_key of ['', null]) {
      expect(isKey((await createDevice(await freshOwner(), { preshared_key })).preshared_key)).toBe(true);
    }
  });

  it.each(FLAGS.map((flag) => `use_default_${flag}`))('%s: null is "is invalid"', async (flag) => {
    await expectCreate422(body({ [flag]: null }), { [flag]: ['is invalid'] });
  });

  // 0.7.36's cast turns "" into the field's default, true.
  it.each(FLAGS.map((flag) => `use_default_${flag}`))('%s: "" is the default, true', async (flag) => {
    const device = await createDevice(await freshOwner(), { [flag]: '' });
    expect(device[flag]).toBe(true);
    const field = flag.replace('use_default_', '');
    await expectCreate422(body({ [flag]: '', [field]: VALUES[field] }), { [field]: ['must not be present'] });
  });

  it.each(FLAGS.map((flag) => `use_default_${flag}`))(
    '%s: a non-boolean (the string "no", 0) is "is invalid" (reading: JSON booleans only)',
    async (flag) => {
      await expectCreate422(body({ [flag]: 'no' }), { [flag]: ['is invalid'] });
      await expectCreate422(body({ [flag]: 0 }), { [flag]: ['is invalid'] });
    },
  );

  it.each<[string, unknown]>([
    ['allowed_ips', ['10.0.0.0/8']],
    ['dns', ['8.8.8.8']],
    ['endpoint', 'vpn.example.com:51820'],
    ['mtu', 1400],
    ['persistent_keepalive', 10],
  ])('%s with use_default true or omitted: "must not be present"', async (field, value) => {
    await expectCreate422(body({ [field]: value }), { [field]: ['must not be present'] });
    await expectCreate422(body({ [`use_default_${field}`]: true, [field]: value }), {
      [field]: ['must not be present'],
    });
  });

  it('all five "must not be present" errors together', async () => {
    await expectCreate422(
      body({
        allowed_ips: ['10.0.0.0/8'],
        dns: ['8.8.8.8'],
        endpoint: 'a.example.com',
        mtu: 1400,
        persistent_keepalive: 10,
      }),
      {
        allowed_ips: ['must not be present'],
        dns: ['must not be present'],
        endpoint: ['must not be present'],
        mtu: ['must not be present'],
        persistent_keepalive: ['must not be present'],
      },
    );
  });

  it('allowed_ips: addresses and CIDR blocks of both families are accepted', async () => {
    const allowed = ['10.0.0.0/8', '192.168.1.1', '192.168.2.0/32', '0.0.0.0/0', 'fd00::/64', '2001:db8::1', '::/0'];
    expect(
      (await createDevice(await freshOwner(), { use_default_allowed_ips: false, allowed_ips: allowed })).allowed_ips,
    ).toEqual(allowed);
  });

  it.each([
    ['banana'],
    ['10.0.0.0/33'],
    ['fd00::/129'],
    ['10.0.0.0/'],
    ['10.0.0.256'],
    ['10.0.0.0/-1'],
    ['10.0.0.0/8/8'],
  ])('allowed_ips: %j is "is invalid"', async (entry) => {
    await expectCreate422(body({ use_default_allowed_ips: false, allowed_ips: ['10.1.0.0/16', entry] }), {
      allowed_ips: ['is invalid'],
    });
  });

  it('allowed_ips: duplicates are "should not contain duplicates"', async () => {
    await expectCreate422(body({ use_default_allowed_ips: false, allowed_ips: ['10.0.0.0/8', '10.0.0.0/8'] }), {
      allowed_ips: ['should not contain duplicates'],
    });
  });

  it('allowed_ips: not a list is "is invalid" (reading: a list is required)', async () => {
    await expectCreate422(body({ use_default_allowed_ips: false, allowed_ips: '10.0.0.0/8' }), {
      allowed_ips: ['is invalid'],
    });
  });

  it('dns: IP addresses and host names (letters, digits, ".", "_", "-") are accepted', async () => {
    const dns = ['8.8.8.8', '2606:4700:4700::1111', 'dns.example.com', 'my_resolver-1', 'localhost'];
    expect((await createDevice(await freshOwner(), { use_default_dns: false, dns })).dns).toEqual(dns);
  });

  it.each([
    ['8.8.8.8:53'],
    ['dns.example.com:53'],
    ['[2606:4700::1111]:53'],
    ['bad host'],
    ['bad/host'],
    ['bad!host'],
    ['dns@example.com'],
  ])('dns: %j is "is invalid"', async (entry) => {
    await expectCreate422(body({ use_default_dns: false, dns: ['1.1.1.1', entry] }), { dns: ['is invalid'] });
  });

  it('dns: duplicates are "should not contain duplicates"', async () => {
    await expectCreate422(body({ use_default_dns: false, dns: ['1.1.1.1', '1.1.1.1'] }), {
      dns: ['should not contain duplicates'],
    });
  });

  it.each([
    ['vpn.example.com'],
    ['vpn.example.com:51820'],
    ['203.0.113.7'],
    ['203.0.113.7:1'],
    ['203.0.113.7:65535'],
    ['2001:db8::1'],
    ['[2001:db8::1]:51820'],
    ['localhost:8080'],
  ])('endpoint: %j is accepted and echoed', async (endpoint) => {
    expect((await createDevice(await freshOwner(), { use_default_endpoint: false, endpoint })).endpoint).toBe(endpoint);
  });

  it.each([
    ['vpn.example.com:0'],
    ['vpn.example.com:65536'],
    ['203.0.113.7:99999'],
    ['vpn.example.com:abc'],
    ['vpn.example.com:'],
    ['[2001:db8::1]:0'],
    ['bad host:51820'],
    ['http://vpn.example.com'],
  ])('endpoint: %j is "is invalid"', async (endpoint) => {
    await expectCreate422(body({ use_default_endpoint: false, endpoint }), { endpoint: ['is invalid'] });
  });

  it('endpoint: required when use_default_endpoint is false', async () => {
    await expectCreate422(body({ use_default_endpoint: false }), { endpoint: ["can't be blank"] });
    await expectCreate422(body({ use_default_endpoint: false, endpoint: null }), { endpoint: ["can't be blank"] });
    await expectCreate422(body({ use_default_endpoint: false, endpoint: '' }), { endpoint: ["can't be blank"] });
  });

  it('mtu: 576 and 1500 accepted; 575 and 1501 refused with the bound', async () => {
    for (const mtu of [576, 1500])
      expect((await createDevice(await freshOwner(), { use_default_mtu: false, mtu })).mtu).toBe(mtu);
    await expectCreate422(body({ use_default_mtu: false, mtu: 575 }), {
      mtu: ['must be greater than or equal to 576'],
    });
    await expectCreate422(body({ use_default_mtu: false, mtu: 1501 }), { mtu: ['must be less than or equal to 1500'] });
  });

  it('mtu: not an integer is "is invalid" (reading: 1280.5 and "abc" are not integers)', async () => {
    await expectCreate422(body({ use_default_mtu: false, mtu: 1280.5 }), { mtu: ['is invalid'] });
    await expectCreate422(body({ use_default_mtu: false, mtu: 'abc' }), { mtu: ['is invalid'] });
  });

  it('persistent_keepalive: 0 and 120 accepted; -1 and 121 refused with the bound', async () => {
    for (const persistent_keepalive of [0, 120]) {
      expect(
        (await createDevice(await freshOwner(), { use_default_persistent_keepalive: false, persistent_keepalive }))
          .persistent_keepalive,
      ).toBe(persistent_keepalive);
    }
    await expectCreate422(body({ use_default_persistent_keepalive: false, persistent_keepalive: -1 }), {
      persistent_keepalive: ['must be greater than or equal to 0'],
    });
    await expectCreate422(body({ use_default_persistent_keepalive: false, persistent_keepalive: 121 }), {
      persistent_keepalive: ['must be less than or equal to 120'],
    });
  });

  it('ipv4/ipv6: an address inside the tunnel networks is echoed', async () => {
    const device = await createDevice(await freshOwner(), { ipv4: '10.3.2.250', ipv6: 'fd00::3:2:fa' });
    expect(device).toMatchObject({ ipv4: '10.3.2.250', ipv6: 'fd00::3:2:fa' });
  });

  it('ipv4/ipv6: outside the tunnel networks is "is not in the CIDR …"', async () => {
    await expectCreate422(body({ ipv4: '10.3.3.5' }), { ipv4: ['is not in the CIDR 10.3.2.0/24'] });
    await expectCreate422(body({ ipv4: '192.168.0.1' }), { ipv4: ['is not in the CIDR 10.3.2.0/24'] });
    await expectCreate422(body({ ipv6: 'fd00::3:3:5' }), { ipv6: ['is not in the CIDR fd00::3:2:0/120'] });
    await expectCreate422(body({ ipv4: '10.3.3.5', ipv6: 'fd00::4:0:1' }), {
      ipv4: ['is not in the CIDR 10.3.2.0/24'],
      ipv6: ['is not in the CIDR fd00::3:2:0/120'],
    });
  });

  it('ipv4/ipv6: the network, broadcast and server addresses are "is reserved"', async () => {
    for (const ipv4 of ['10.3.2.0', '10.3.2.255', '10.3.2.1'])
      await expectCreate422(body({ ipv4 }), { ipv4: ['is reserved'] });
    for (const ipv6 of ['fd00::3:2:0', 'fd00::3:2:1']) await expectCreate422(body({ ipv6 }), { ipv6: ['is reserved'] });
  });

  it('ipv4/ipv6: not an address, or of the wrong family, is refused on that field (reading: "is invalid")', async () => {
    await expectCreate422(body({ ipv4: 'not-an-ip' }), { ipv4: ['is invalid'] });
    await expectCreate422(body({ ipv6: 'not-an-ip' }), { ipv6: ['is invalid'] });
    await expectCreate422(body({ ipv4: 'fd00::3:2:9' }), { ipv4: ['is invalid'] });
    await expectCreate422(body({ ipv6: '10.3.2.9' }), { ipv6: ['is invalid'] });
  });

  it('ipv6 in another valid spelling is echoed as sent (seed: "values given in a create or update body are echoed back"; docs/rule-semantics.md §5: "every accepted body is echoed back as sent")', async () => {
    const created = await createDevice(await freshOwner(), { ipv6: 'FD00::3:2:AB' });
    expect(created.ipv6).toBe('FD00::3:2:AB');
    const updated = await server.api('PATCH', `/v0/devices/${created.id}`, { device: { ipv6: 'fd00:0:0:0:0:3:2:ac' } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.ipv6).toBe('fd00:0:0:0:0:3:2:ac');
  });

  it('ipv4/ipv6: unique ("has already been taken")', async () => {
    await createDevice(await freshOwner(), { ipv4: '10.3.2.240', ipv6: 'fd00::3:2:f0' });
    const other = await createUser();
    await expectCreate422(
      { user_id: other.id, public_key: key(), ipv4: '10.3.2.240', ipv6: 'fd00::3:2:f0' },
      {
        ipv4: ['has already been taken'],
        ipv6: ['has already been taken'],
      },
    );
  });

  it('ipv6: another spelling of a taken address is taken too (reading: addresses compare as addresses)', async () => {
    await createDevice(await freshOwner(), { ipv6: 'fd00::3:2:e0' });
    await expectCreate422(body({ ipv6: 'fd00:0:0:0:0:3:2:e0' }), { ipv6: ['has already been taken'] });
  });

  it('every field error of a create at once', async () => {
    await expectCreate422(
      { user_id: randomUUID(), public_key: 'x', use_default_mtu: false, mtu: 9000, dns: ['8.8.8.8'], ipv4: '10.3.2.1' },
      {
        user_id: ['does not exist'],
        public_key: expect.arrayContaining(['must be a base64-encoded string']) as unknown as string[],
        mtu: ['must be less than or equal to 1500'],
        dns: ['must not be present'],
        ipv4: ['is reserved'],
      },
    );
  });
});

describe('address allocation', () => {
  it('omitted addresses get the lowest free ones: freed by delete, update or cascade, skipping given ones', async () => {
    const own = await startTestServer();
    try {
      const user = await createUser(own);
      const first = await createDevice(user.id, {}, own);
      expect(first).toMatchObject({ ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' });
      const second = await createDevice(user.id, {}, own);
      expect(second).toMatchObject({ ipv4: '10.3.2.3', ipv6: 'fd00::3:2:3' });
      const pinned = await createDevice(user.id, { ipv4: '10.3.2.4', ipv6: 'fd00::3:2:5' }, own);
      expect(pinned).toMatchObject({ ipv4: '10.3.2.4', ipv6: 'fd00::3:2:5' });
      const third = await createDevice(user.id, {}, own);
      expect(third).toMatchObject({ ipv4: '10.3.2.5', ipv6: 'fd00::3:2:4' });
      expect((await own.api('DELETE', `/v0/devices/${first.id}`)).status).toBe(204);
      const fourth = await createDevice(user.id, {}, own);
      expect(fourth).toMatchObject({ ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' });
      // In use now: .2 .3 .4 .5 (v6 :2 :3 :5 :4). A pinned address ahead of the others is skipped later.
      const other = await createUser(own);
      const ahead = await createDevice(other.id, { ipv4: '10.3.2.7', ipv6: 'fd00::3:2:7' }, own);
      expect(await createDevice(other.id, {}, own)).toMatchObject({ ipv4: '10.3.2.6', ipv6: 'fd00::3:2:6' });
      expect(await createDevice(other.id, {}, own)).toMatchObject({ ipv4: '10.3.2.8', ipv6: 'fd00::3:2:8' });
      // An address left by an update is free again and, being the lowest, is handed out next.
      const moved = await own.api('PATCH', `/v0/devices/${second.id}`, {
        device: { ipv4: '10.3.2.100', ipv6: 'fd00::3:2:64' },
      });
      expect(moved.status).toBe(200);
      expect(await createDevice(other.id, {}, own)).toMatchObject({ ipv4: '10.3.2.3', ipv6: 'fd00::3:2:3' });
      // A freed high address is not preferred over a lower free one.
      expect((await own.api('DELETE', `/v0/devices/${ahead.id}`)).status).toBe(204);
      expect((await own.api('DELETE', `/v0/devices/${third.id}`)).status).toBe(204);
      expect(await createDevice(other.id, {}, own)).toMatchObject({ ipv4: '10.3.2.5', ipv6: 'fd00::3:2:4' });
      expect(await createDevice(other.id, {}, own)).toMatchObject({ ipv4: '10.3.2.7', ipv6: 'fd00::3:2:7' });
      // Deleting a user frees all its addresses at once.
      expect((await own.api('DELETE', `/v0/users/${user.id}`)).status).toBe(204);
      expect(await createDevice(other.id, {}, own)).toMatchObject({ ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' });
    } finally {
      await own.stop();
    }
  });

  it('a full network: base "CIDR … is exhausted"', async () => {
    const own = await startTestServer();
    try {
      await setDefault(own, 'ipv4_network', '10.9.9.0/29');
      await setDefault(own, 'ipv4_address', '10.9.9.1');
      await own.restart();
      const user = await createUser(own);
      const addresses = [];
      for (let i = 0; i < 5; i++) addresses.push((await createDevice(user.id, {}, own)).ipv4);
      expect(addresses).toEqual(['10.9.9.2', '10.9.9.3', '10.9.9.4', '10.9.9.5', '10.9.9.6']);
      await expectCreate422({ user_id: user.id, public_key: key() }, { base: ['CIDR 10.9.9.0/29 is exhausted'] }, own);
      // An explicit address is still checked against the (new) network.
      await expectCreate422(
        { user_id: user.id, public_key: key(), ipv4: '10.3.2.9' },
        { ipv4: ['is not in the CIDR 10.9.9.0/29'] },
        own,
      );
    } finally {
      await own.stop();
    }
  });
});

describe('address allocation (IPv6)', () => {
  it('a full IPv6 network: base "CIDR … is exhausted" (reading: whether the last address counts as reserved is open)', async () => {
    const own = await startTestServer();
    try {
      await setDefault(own, 'ipv6_network', 'fd00::9:0/125');
      await setDefault(own, 'ipv6_address', 'fd00::9:1');
      await own.restart();
      const user = await createUser(own);
      const addresses: string[] = [];
      let refused: any;
      for (let i = 0; i < 8 && !refused; i++) {
        const res = await own.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: key() } });
        if (res.status === 201) addresses.push(res.body.data.ipv6);
        else refused = res;
      }
      expect(addresses.slice(0, 5)).toEqual(['fd00::9:2', 'fd00::9:3', 'fd00::9:4', 'fd00::9:5', 'fd00::9:6']);
      expect([5, 6]).toContain(addresses.length);
      expect(refused?.status).toBe(422);
      expect(refused.body).toEqual({ errors: { base: ['CIDR fd00::9:0/125 is exhausted'] } });
    } finally {
      await own.stop();
    }
  });
});

describe('device limit', () => {
  it('default 10 per user: the 11th is refused with the exact base message; other users are unaffected; deleting one frees a place', async () => {
    const user = await createUser();
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push((await createDevice(user.id)).id);
    await expectCreate422({ user_id: user.id, public_key: key() }, { base: [LIMIT_MESSAGE] });
    await createDevice((await createUser()).id);
    expect((await server.api('DELETE', `/v0/devices/${ids[0]}`)).status).toBe(204);
    await createDevice(user.id);
    await expectCreate422({ user_id: user.id, public_key: key() }, { base: [LIMIT_MESSAGE] });
  });

  it('the limit is configurable (max_devices_per_user 2)', async () => {
    const own = await startTestServer();
    try {
      await setDefault(own, 'max_devices_per_user', '2');
      await own.restart();
      const user = await createUser(own);
      await createDevice(user.id, {}, own);
      await createDevice(user.id, {}, own);
      await expectCreate422({ user_id: user.id, public_key: key() }, { base: [LIMIT_MESSAGE] }, own);
    } finally {
      await own.stop();
    }
  });

  it('concurrent creates never pass the limit', async () => {
    const user = await createUser();
    const results = await Promise.all(
      Array.from({ length: 14 }, () =>
        server.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: key() } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({ errors: { base: [LIMIT_MESSAGE] } });
    }
    const mine = (await server.api('GET', '/v0/devices')).body.data.filter((d: any) => d.user_id === user.id);
    expect(mine).toHaveLength(10);
    expect(new Set(mine.map((d: any) => d.ipv4)).size).toBe(10);
  });
});

describe('update', () => {
  it('every create field except user_id may be changed and is echoed; user_id in the body is ignored', async () => {
    const device = await createDevice(await freshOwner());
    const other = await createUser();
    const change = {
      name: 'Renamed',
      description: 'new description',
      public_key: key(),
      preshared_key: key(),
      use_default_allowed_ips: false,
      allowed_ips: ['10.10.0.0/16'],
      use_default_dns: false,
      dns: ['9.9.9.9'],
      use_default_endpoint: false,
      endpoint: '[2001:db8::2]:51821',
      use_default_mtu: false,
      mtu: 1400,
      use_default_persistent_keepalive: false,
      persistent_keepalive: 60,
      ipv4: '10.3.2.230',
      ipv6: 'fd00::3:2:e6',
    };
    const res = await server.api('PATCH', `/v0/devices/${device.id}`, { device: { ...change, user_id: other.id } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      ...change,
      user_id: device.user_id,
      id: device.id,
      inserted_at: device.inserted_at,
    });
    expect(res.body.data.updated_at > device.updated_at).toBe(true);
    expect((await server.api('GET', `/v0/devices/${device.id}`)).body.data).toEqual(res.body.data);
  });

  it('user_id alone in the body: 200 and nothing changes but (perhaps) updated_at', async () => {
    const device = await createDevice(await freshOwner());
    const res = await server.api('PUT', `/v0/devices/${device.id}`, { device: { user_id: (await createUser()).id } });
    expect(res.status).toBe(200);
    const { updated_at: _after, ...after } = res.body.data;
    const { updated_at: _before, ...before } = device;
    expect(after).toEqual(before);
  });

  it('use_default_<x> "" on update is the default, true: the device shows the default again', async () => {
    const device = await createDevice(await freshOwner(), {
      use_default_mtu: false,
      mtu: 1400,
      use_default_dns: false,
      dns: ['9.9.9.9'],
    });
    const res = await server.api('PATCH', `/v0/devices/${device.id}`, {
      device: { use_default_mtu: '', mtu: null, use_default_dns: '' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ use_default_mtu: true, mtu: 1280, use_default_dns: true });
    expect((await server.api('GET', `/v0/devices/${device.id}`)).body.data).toEqual(res.body.data);
    await expectUpdate422(device.id, { use_default_mtu: '', mtu: 1400 }, { mtu: ['must not be present'] });
  });

  it('switching back to the defaults: use_default_<x> true shows the default again', async () => {
    const device = await createDevice(await freshOwner(), { use_default_mtu: false, mtu: 1400 });
    const res = await server.api('PATCH', `/v0/devices/${device.id}`, { device: { use_default_mtu: true, mtu: null } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ use_default_mtu: true, mtu: 1280 });
  });

  it('the same field rules apply, and a refused update changes nothing', async () => {
    const device = await createDevice(await freshOwner());
    await expectUpdate422(
      device.id,
      { use_default_mtu: false, mtu: 100 },
      { mtu: ['must be greater than or equal to 576'] },
    );
    await expectUpdate422(device.id, { name: 'z'.repeat(256) }, { name: ['should be at most 255 character(s)'] });
    await expectUpdate422(
      device.id,
      { public_key: 'nope!' },
      { public_key: expect.arrayContaining(['must be a base64-encoded string']) as unknown as string[] },
    );
    await expectUpdate422(device.id, { use_default_dns: true, dns: ['8.8.8.8'] }, { dns: ['must not be present'] });
    await expectUpdate422(device.id, { ipv4: '10.3.2.255' }, { ipv4: ['is reserved'] });
    await expectUpdate422(device.id, { ipv6: 'fd00::9:9:9' }, { ipv6: ['is not in the CIDR fd00::3:2:0/120'] });
    await expectUpdate422(device.id, { use_default_allowed_ips: null }, { use_default_allowed_ips: ['is invalid'] });
  });

  it('an invalid endpoint on update is only "is invalid", as on create (a value was sent, so not also "can\'t be blank")', async () => {
    const device = await createDevice(await freshOwner());
    await expectUpdate422(
      device.id,
      { use_default_endpoint: false, endpoint: 'vpn.example.com:0' },
      { endpoint: ['is invalid'] },
    );
    const pinned = await createDevice(await freshOwner(), {
      use_default_endpoint: false,
      endpoint: 'vpn.example.com:51820',
    });
    await expectUpdate422(pinned.id, { endpoint: 'bad host:1' }, { endpoint: ['is invalid'] });
  });

  it('a value sent on update while the stored use_default_<x> is true is "must not be present" (reading: else it would not be echoed)', async () => {
    const device = await createDevice(await freshOwner());
    await expectUpdate422(device.id, { mtu: 1400 }, { mtu: ['must not be present'] });
    await expectUpdate422(device.id, { allowed_ips: ['10.0.0.0/8'] }, { allowed_ips: ['must not be present'] });
  });

  it("use_default_endpoint false on update with no endpoint stored or sent: endpoint can't be blank (reading: the required rule holds on the result)", async () => {
    const device = await createDevice(await freshOwner());
    await expectUpdate422(device.id, { use_default_endpoint: false }, { endpoint: ["can't be blank"] });
  });

  it('uniqueness on update excludes the device itself', async () => {
    const userId = await freshOwner();
    const a = await createDevice(userId, { name: 'first' });
    const b = await createDevice(userId, { name: 'second' });
    await expectUpdate422(b.id, { name: a.name }, { name: ['has already been taken'] });
    await expectUpdate422(b.id, { public_key: a.public_key }, { public_key: ['has already been taken'] });
    await expectUpdate422(b.id, { ipv4: a.ipv4 }, { ipv4: ['has already been taken'] });
    await expectUpdate422(b.id, { ipv6: a.ipv6 }, { ipv6: ['has already been taken'] });
    const same = await server.api('PATCH', `/v0/devices/${b.id}`, {
      device: { name: b.name, public_key: b.public_key, ipv4: b.ipv4, ipv6: b.ipv6 },
    });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
  });

  it('an update never counts against the device limit', async () => {
    const user = await createUser();
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push((await createDevice(user.id)).id);
    const res = await server.api('PATCH', `/v0/devices/${ids[9]}`, { device: { description: 'still fine' } });
    expect(res.status).toBe(200);
  });
});

describe('legacy device updates (server option emulating upstream 0.7.26+)', () => {
  it('only name and description change; every other field is silently ignored', async () => {
    const legacy = await startTestServer({ legacyDeviceUpdates: true });
    try {
      const user = await createUser(legacy);
      const device = await createDevice(user.id, {}, legacy);
      const res = await legacy.api('PATCH', `/v0/devices/${device.id}`, {
        device: {
          name: 'legacy-name',
          description: 'legacy description',
          use_default_mtu: false,
          mtu: 1400,
          public_key: key(),
          ipv4: '10.3.2.99',
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const { updated_at: _a, ...after } = res.body.data;
      const { updated_at: _b, ...before } = device;
      expect(after).toEqual({ ...before, name: 'legacy-name', description: 'legacy description' });
      // Ignored means not even checked (reading: as upstream, which never looked at them).
      const invalid = await legacy.api('PATCH', `/v0/devices/${device.id}`, {
        device: { description: 'again', mtu: 1, public_key: 'x' },
      });
      expect(invalid.status, JSON.stringify(invalid.body)).toBe(200);
      expect(invalid.body.data).toMatchObject({ description: 'again', mtu: device.mtu, public_key: device.public_key });
      // Creates keep every rule and every field.
      const created = await createDevice(user.id, { use_default_mtu: false, mtu: 1400 }, legacy);
      expect(created.mtu).toBe(1400);
    } finally {
      await legacy.stop();
    }
  });
});
