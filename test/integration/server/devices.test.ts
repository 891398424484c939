import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setServerDefault } from '../../../server/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { DEVICE_CONTRACT_KEYS } from '../../helpers/device-contract.js';

const DEVICE_KEYS = [...DEVICE_CONTRACT_KEYS];
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/;

const key = () => randomBytes(32).toString('base64');

let server: TestServer;
let owner: { id: string; email: string };
let counter = 0;

async function newUser(s: TestServer = server): Promise<{ id: string; email: string }> {
  return (await s.api('POST', '/v0/users', { user: { email: `device-owner-${++counter}@example.com` } })).body.data;
}

async function createDevice(fields: Record<string, unknown>, s: TestServer = server, userId?: string) {
  return s.api('POST', '/v0/devices', { device: { user_id: userId ?? owner.id, public_key: key(), ...fields } });
}

beforeAll(async () => {
  server = await startInProcessServer();
  owner = await newUser();
  await setServerDefault({ dbPath: server.dbPath, key: 'max_devices_per_user', value: '1000' });
});
afterAll(async () => {
  await server?.stop();
});

describe('devices: create', () => {
  it('creates with only user_id and public_key: defaults, generated name, key and addresses', async () => {
    const user = await newUser();
    const publicKey = key();
    const res = await server.api('POST', '/v0/devices', { device: { user_id: user.id, public_key: publicKey } });
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(Object.keys(d)).toEqual(DEVICE_KEYS);
    expect(res.headers.location).toBe(`/v0/devices/${d.id}`);
    expect(d).toMatchObject({
      user_id: user.id,
      description: null,
      public_key: publicKey,
      allowed_ips: ['0.0.0.0/0', '::/0'],
      dns: ['1.1.1.1', '1.0.0.1'],
      mtu: 1280,
      persistent_keepalive: 25,
      use_default_allowed_ips: true,
      use_default_dns: true,
      use_default_endpoint: true,
      use_default_mtu: true,
      use_default_persistent_keepalive: true,
      remote_ip: null,
      latest_handshake: null,
      rx_bytes: null,
      tx_bytes: null,
    });
    expect(d.endpoint).toMatch(/:51820$/);
    expect(d.name).toMatch(/^[a-z]+-[a-z]+(-\d+)?$/);
    expect(d.preshared_key).toMatch(BASE64_KEY);
    expect(d.server_public_key).toMatch(BASE64_KEY);
    expect(d.ipv4).toMatch(/^10\.3\.2\.\d+$/);
    expect(d.ipv6).toMatch(/^fd00::3:2:[0-9a-f]+$/);
  });

  it('echoes back every field as sent when the defaults are off', async () => {
    const fields = {
      name: 'laptop',
      description: 'work laptop',
      preshared_key: key(),
      allowed_ips: ['10.0.0.0/8', '192.168.1.1', 'fd00::/8'],
      dns: ['9.9.9.9', 'dns.example.com'],
      endpoint: 'vpn.example.com:51821',
      mtu: 1420,
      persistent_keepalive: 0,
      ipv4: '10.3.2.200',
      ipv6: 'fd00::3:2:c8',
      use_default_allowed_ips: false,
      use_default_dns: false,
      use_default_endpoint: false,
      use_default_mtu: false,
      use_default_persistent_keepalive: false,
    };
    const res = await createDevice(fields);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject(fields);
    expect((await server.api('GET', `/v0/devices/${res.body.data.id}`)).body.data).toEqual(res.body.data);
  });

  it('a device may set its own value to null or [] with the default off (a list left out is [], as upstream)', async () => {
    const res = await createDevice({
      use_default_dns: false,
      dns: [],
      use_default_mtu: false,
      mtu: null,
      use_default_allowed_ips: false,
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ dns: [], mtu: null, allowed_ips: [] });
  });

  it('every device shows the same server_public_key', async () => {
    const a = (await createDevice({})).body.data;
    const b = (await createDevice({})).body.data;
    expect(a.server_public_key).toBe(b.server_public_key);
    expect(a.server_public_key).not.toBe(a.public_key);
  });

  it.each([
    ['user_id missing', { user_id: null }, { user_id: ["can't be blank"] }],
    ['user_id unknown', { user_id: '7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70' }, { user_id: ['does not exist'] }],
    ['user_id not a uuid', { user_id: 'someone' }, { user_id: ['does not exist'] }],
    ['name too long', { name: 'n'.repeat(256) }, { name: ['should be at most 255 character(s)'] }],
    [
      'description too long',
      { description: 'd'.repeat(2049) },
      { description: ['should be at most 2048 character(s)'] },
    ],
    ['public_key missing', { public_key: '' }, { public_key: ["can't be blank"] }],
    [
      'public_key short',
      { public_key: 'abc' },
      { public_key: ['must be a base64-encoded string', 'should be 44 character(s)'] },
    ],
    [
      'public_key not base64',
      { public_key: `${'!'.repeat(43)}=` },
      { public_key: ['must be a base64-encoded string'] },
    ],
    [
      'preshared_key not base64',
      { preshared_key: 'not-a-key' },
      { preshared_key: ['must be a base64-encoded string', 'should be 44 character(s)'] },
    ],
    ['use_default null', { use_default_dns: null }, { use_default_dns: ['is invalid'] }],
    ['use_default not boolean', { use_default_mtu: 'yes' }, { use_default_mtu: ['is invalid'] }],
    [
      'allowed_ips bad prefix',
      { use_default_allowed_ips: false, allowed_ips: ['10.0.0.0/33'] },
      { allowed_ips: ['is invalid'] },
    ],
    [
      'allowed_ips duplicates',
      { use_default_allowed_ips: false, allowed_ips: ['10.0.0.1', '10.0.0.1/32'] },
      { allowed_ips: ['should not contain duplicates'] },
    ],
    ['dns with port', { use_default_dns: false, dns: ['1.1.1.1:53'] }, { dns: ['is invalid'] }],
    [
      'dns duplicates',
      { use_default_dns: false, dns: ['1.1.1.1', '1.1.1.1'] },
      { dns: ['should not contain duplicates'] },
    ],
    [
      'endpoint bad port',
      { use_default_endpoint: false, endpoint: 'vpn.example.com:70000' },
      { endpoint: ['is invalid'] },
    ],
    ['endpoint port 0', { use_default_endpoint: false, endpoint: '1.2.3.4:0' }, { endpoint: ['is invalid'] }],
    ['endpoint required without default', { use_default_endpoint: false }, { endpoint: ["can't be blank"] }],
    ['mtu too small', { use_default_mtu: false, mtu: 575 }, { mtu: ['must be greater than or equal to 576'] }],
    ['mtu too large', { use_default_mtu: false, mtu: 1501 }, { mtu: ['must be less than or equal to 1500'] }],
    ['mtu not integer', { use_default_mtu: false, mtu: 'big' }, { mtu: ['is invalid'] }],
    [
      'keepalive negative',
      { use_default_persistent_keepalive: false, persistent_keepalive: -1 },
      { persistent_keepalive: ['must be greater than or equal to 0'] },
    ],
    [
      'keepalive too large',
      { use_default_persistent_keepalive: false, persistent_keepalive: 121 },
      { persistent_keepalive: ['must be less than or equal to 120'] },
    ],
    ['value with its default on', { allowed_ips: ['10.0.0.0/8'] }, { allowed_ips: ['must not be present'] }],
    ['mtu with its default on', { use_default_mtu: true, mtu: 1400 }, { mtu: ['must not be present'] }],
    ['ipv4 outside the network', { ipv4: '10.9.9.9' }, { ipv4: ['is not in the CIDR 10.3.2.0/24'] }],
    ['ipv4 network address', { ipv4: '10.3.2.0' }, { ipv4: ['is reserved'] }],
    ['ipv4 broadcast address', { ipv4: '10.3.2.255' }, { ipv4: ['is reserved'] }],
    ['ipv4 server address', { ipv4: '10.3.2.1' }, { ipv4: ['is reserved'] }],
    ['ipv4 of the wrong family', { ipv4: 'fd00::3:2:9' }, { ipv4: ['is invalid'] }],
    ['ipv6 outside the network', { ipv6: 'fd00::3:3:9' }, { ipv6: ['is not in the CIDR fd00::3:2:0/120'] }],
    ['ipv6 server address', { ipv6: 'fd00::3:2:1' }, { ipv6: ['is reserved'] }],
  ])('rejects %s', async (_name, fields, errors) => {
    const res = await createDevice(fields);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors });
  });

  it('accepts every endpoint shape', async () => {
    for (const endpoint of [
      'vpn.example.com',
      'vpn.example.com:51820',
      '203.0.113.7:51820',
      '2001:db8::1',
      '[2001:db8::1]:51820',
    ]) {
      const res = await createDevice({ use_default_endpoint: false, endpoint });
      expect(res.status, endpoint).toBe(201);
      expect(res.body.data.endpoint).toBe(endpoint);
    }
  });

  it('reports every error of a request together, database checks included', async () => {
    const existing = (await createDevice({ name: 'taken-name' })).body.data;
    const res = await createDevice({
      name: 'taken-name',
      public_key: existing.public_key,
      mtu: 1,
      use_default_mtu: false,
      ipv4: existing.ipv4,
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      errors: {
        name: ['has already been taken'],
        public_key: ['has already been taken'],
        mtu: ['must be greater than or equal to 576'],
        ipv4: ['has already been taken'],
      },
    });
  });

  it('names are unique per user, not across users; names are trimmed', async () => {
    const other = await newUser();
    expect((await createDevice({ name: ' phone ' })).body.data.name).toBe('phone');
    expect((await createDevice({ name: 'phone' }, server, other.id)).status).toBe(201);
    expect((await createDevice({ name: 'phone' })).body).toEqual({ errors: { name: ['has already been taken'] } });
  });
});

describe('devices: effective values and server defaults', () => {
  it('shows the current server default for fields whose use_default flag is true, at once after a change', async () => {
    const own = await startInProcessServer();
    try {
      const user = await newUser(own);
      const fixed = (await createDevice({ use_default_mtu: false, mtu: 1300 }, own, user.id)).body.data;
      const defaulted = (await createDevice({}, own, user.id)).body.data;
      await setServerDefault({ dbPath: own.dbPath, key: 'mtu', value: '1400' });
      await setServerDefault({ dbPath: own.dbPath, key: 'dns', value: '9.9.9.9,dns.example.com' });
      await setServerDefault({ dbPath: own.dbPath, key: 'endpoint', value: 'vpn.example.net:51820' });
      expect((await own.api('GET', `/v0/devices/${defaulted.id}`)).body.data).toMatchObject({
        mtu: 1400,
        dns: ['9.9.9.9', 'dns.example.com'],
        endpoint: 'vpn.example.net:51820',
      });
      expect((await own.api('GET', `/v0/devices/${fixed.id}`)).body.data.mtu).toBe(1300);
      const listed = (await own.api('GET', '/v0/devices')).body.data;
      expect(listed.map((d: { id: string }) => d.id)).toEqual([fixed.id, defaulted.id]);
      expect(listed[1].mtu).toBe(1400);
    } finally {
      await own.stop();
    }
  });
});

describe('devices: addresses', () => {
  it('assigns the lowest free address, reuses freed ones, skips requested ones', async () => {
    const own = await startInProcessServer();
    try {
      const user = await newUser(own);
      await own.api('POST', '/v0/devices', {
        device: { user_id: user.id, public_key: key(), ipv4: '10.3.2.5', ipv6: 'fd00::3:2:5' },
      });
      const made = [];
      for (let i = 0; i < 4; i++) made.push((await createDevice({}, own, user.id)).body.data);
      expect(made.map((d) => d.ipv4)).toEqual(['10.3.2.2', '10.3.2.3', '10.3.2.4', '10.3.2.6']);
      expect(made.map((d) => d.ipv6)).toEqual(['fd00::3:2:2', 'fd00::3:2:3', 'fd00::3:2:4', 'fd00::3:2:6']);
      expect((await own.api('DELETE', `/v0/devices/${made[1].id}`)).status).toBe(204);
      const again = (await createDevice({}, own, user.id)).body.data;
      expect([again.ipv4, again.ipv6]).toEqual(['10.3.2.3', 'fd00::3:2:3']);
      // Moving a device frees its old address.
      await own.api('PATCH', `/v0/devices/${made[0].id}`, { device: { ipv4: '10.3.2.100' } });
      expect((await createDevice({}, own, user.id)).body.data.ipv4).toBe('10.3.2.2');
      expect((await createDevice({}, own, user.id)).body.data.ipv4).toBe('10.3.2.7');
    } finally {
      await own.stop();
    }
  });

  it('hands out freed addresses lowest first, never one a client took meanwhile', async () => {
    const own = await startInProcessServer();
    try {
      const user = await newUser(own);
      const made = [];
      for (let i = 0; i < 6; i++) made.push((await createDevice({}, own, user.id)).body.data);
      expect(made.map((d) => d.ipv4)).toEqual(['10.3.2.2', '10.3.2.3', '10.3.2.4', '10.3.2.5', '10.3.2.6', '10.3.2.7']);
      for (const i of [3, 1, 4]) expect((await own.api('DELETE', `/v0/devices/${made[i].id}`)).status).toBe(204);
      // .3, .5 and .6 are free; a client takes .3 and another device moves onto .6.
      expect((await createDevice({ ipv4: '10.3.2.3' }, own, user.id)).body.data.ipv4).toBe('10.3.2.3');
      expect(
        (await own.api('PATCH', `/v0/devices/${made[0].id}`, { device: { ipv4: '10.3.2.6' } })).body.data.ipv4,
      ).toBe('10.3.2.6');
      const next = [];
      for (let i = 0; i < 3; i++) next.push((await createDevice({}, own, user.id)).body.data.ipv4);
      expect(next).toEqual(['10.3.2.2', '10.3.2.5', '10.3.2.8']);
      const all = (await own.api('GET', '/v0/devices')).body.data.map((d: { ipv4: string }) => d.ipv4);
      expect(new Set(all).size).toBe(all.length);
    } finally {
      await own.stop();
    }
  });

  it('a full tunnel network answers base: CIDR … is exhausted and creates nothing', async () => {
    const own = await startInProcessServer();
    try {
      await setServerDefault({ dbPath: own.dbPath, key: 'ipv4_network', value: '10.20.30.0/29' });
      const user = await newUser(own);
      // /29: 8 addresses minus network, broadcast and the server's 10.20.30.1 leaves 5.
      const addresses = [];
      for (let i = 0; i < 5; i++) {
        const res = await createDevice({}, own, user.id);
        expect(res.status).toBe(201);
        addresses.push(res.body.data.ipv4);
      }
      expect(addresses).toEqual(['10.20.30.2', '10.20.30.3', '10.20.30.4', '10.20.30.5', '10.20.30.6']);
      const full = await createDevice({}, own, user.id);
      expect(full.status).toBe(422);
      expect(full.body).toEqual({ errors: { base: ['CIDR 10.20.30.0/29 is exhausted'] } });
      expect((await own.api('GET', '/v0/devices')).body.data).toHaveLength(5);
      // A freed address is found again even though the network was full.
      const third = (await own.api('GET', '/v0/devices')).body.data[2];
      expect((await own.api('DELETE', `/v0/devices/${third.id}`)).status).toBe(204);
      expect((await createDevice({}, own, user.id)).body.data.ipv4).toBe(third.ipv4);
      // A new network: addresses come from it.
      await setServerDefault({ dbPath: own.dbPath, key: 'ipv4_network', value: '10.20.40.0/24' });
      expect((await createDevice({}, own, user.id)).body.data.ipv4).toBe('10.20.40.2');
    } finally {
      await own.stop();
    }
  });
});

describe('devices: limit per user', () => {
  it('refuses the device over the limit with the base message', async () => {
    const own = await startInProcessServer();
    try {
      const user = await newUser(own);
      for (let i = 0; i < 10; i++) expect((await createDevice({}, own, user.id)).status).toBe(201);
      const res = await createDevice({}, own, user.id);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        errors: { base: ['Maximum device limit reached. Remove an existing device before creating a new one.'] },
      });
      const other = await newUser(own);
      expect((await createDevice({}, own, other.id)).status).toBe(201);
      await setServerDefault({ dbPath: own.dbPath, key: 'max_devices_per_user', value: '11' });
      expect((await createDevice({}, own, user.id)).status).toBe(201);
    } finally {
      await own.stop();
    }
  });
});

describe('devices: update', () => {
  it('changes every field except user_id, with PATCH and PUT', async () => {
    const other = await newUser();
    const d = (await createDevice({ name: 'to-update' })).body.data;
    const change = {
      name: 'updated',
      description: 'now described',
      public_key: key(),
      preshared_key: key(),
      use_default_allowed_ips: false,
      allowed_ips: ['10.1.0.0/16'],
      use_default_dns: false,
      dns: ['8.8.8.8'],
      use_default_endpoint: false,
      endpoint: '198.51.100.1:51820',
      use_default_mtu: false,
      mtu: 1380,
      use_default_persistent_keepalive: false,
      persistent_keepalive: 10,
      ipv4: '10.3.2.222',
      ipv6: 'fd00::3:2:de',
      user_id: other.id,
    };
    const res = await server.api('PATCH', `/v0/devices/${d.id}`, { device: change });
    expect(res.status).toBe(200);
    const { user_id: _ignored, ...expected } = change;
    expect(res.body.data).toMatchObject({ ...expected, user_id: d.user_id, inserted_at: d.inserted_at });
    expect(res.body.data.updated_at > d.updated_at).toBe(true);
    const put = await server.api('PUT', `/v0/devices/${d.id}`, { device: { description: null } });
    expect(put.status).toBe(200);
    expect(put.body.data.description).toBeNull();
    expect(put.body.data.name).toBe('updated');
  });

  it('an empty device object answers 200 unchanged', async () => {
    const d = (await createDevice({})).body.data;
    const res = await server.api('PATCH', `/v0/devices/${d.id}`, { device: {} });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(d);
  });

  it('checks the merged device: a value needs its default off, an endpoint is needed without the default', async () => {
    const d = (await createDevice({})).body.data;
    const withValue = await server.api('PATCH', `/v0/devices/${d.id}`, { device: { mtu: 1400 } });
    expect(withValue.body).toEqual({ errors: { mtu: ['must not be present'] } });
    const noEndpoint = await server.api('PATCH', `/v0/devices/${d.id}`, { device: { use_default_endpoint: false } });
    expect(noEndpoint.body).toEqual({ errors: { endpoint: ["can't be blank"] } });
    const own = await server.api('PATCH', `/v0/devices/${d.id}`, {
      device: { use_default_endpoint: false, endpoint: 'a.example.com' },
    });
    expect(own.status).toBe(200);
    const cleared = await server.api('PATCH', `/v0/devices/${d.id}`, { device: { endpoint: null } });
    expect(cleared.body).toEqual({ errors: { endpoint: ["can't be blank"] } });
    // Turning the default back on drops the device's own value.
    const back = await server.api('PATCH', `/v0/devices/${d.id}`, { device: { use_default_endpoint: true } });
    expect(back.status).toBe(200);
    expect(back.body.data.endpoint).toBe(d.endpoint);
    const invalid = await server.api('PATCH', `/v0/devices/${d.id}`, {
      device: { use_default_endpoint: false, endpoint: 'host:0' },
    });
    expect(invalid.body).toEqual({ errors: { endpoint: ['is invalid'] } });
    const off = await server.api('PATCH', `/v0/devices/${d.id}`, { device: { use_default_endpoint: false } });
    expect(off.body).toEqual({ errors: { endpoint: ["can't be blank"] } });
    expect((await server.api('GET', `/v0/devices/${d.id}`)).body.data).toEqual(back.body.data);
  });

  it('refuses a name, public key or address another device has, and changes nothing', async () => {
    const a = (await createDevice({ name: 'alpha' })).body.data;
    const b = (await createDevice({ name: 'beta' })).body.data;
    const res = await server.api('PATCH', `/v0/devices/${b.id}`, {
      device: { name: 'alpha', public_key: a.public_key, ipv4: a.ipv4, ipv6: a.ipv6 },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      errors: {
        name: ['has already been taken'],
        public_key: ['has already been taken'],
        ipv4: ['has already been taken'],
        ipv6: ['has already been taken'],
      },
    });
    expect((await server.api('GET', `/v0/devices/${b.id}`)).body.data).toEqual(b);
    // Sending its own current values is no conflict.
    expect(
      (
        await server.api('PATCH', `/v0/devices/${b.id}`, {
          device: { name: 'beta', public_key: b.public_key, ipv4: b.ipv4 },
        })
      ).body.data,
    ).toEqual(b);
  });

  it.each([
    ['name blank', { name: '' }, { name: ["can't be blank"] }],
    ['public_key blank', { public_key: null }, { public_key: ["can't be blank"] }],
    ['preshared_key blank', { preshared_key: '' }, { preshared_key: ["can't be blank"] }],
    ['ipv4 blank', { ipv4: null }, { ipv4: ["can't be blank"] }],
    ['ipv4 reserved', { ipv4: '10.3.2.1' }, { ipv4: ['is reserved'] }],
    ['mtu out of range', { use_default_mtu: false, mtu: 2000 }, { mtu: ['must be less than or equal to 1500'] }],
  ])('update rejects %s', async (_name, fields, errors) => {
    const d = (await createDevice({})).body.data;
    const res = await server.api('PATCH', `/v0/devices/${d.id}`, { device: fields });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors });
  });

  it('404 for unknown and non-UUID ids on show, update and delete', async () => {
    for (const id of ['7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70', 'not-a-uuid', '123']) {
      expect((await server.api('GET', `/v0/devices/${id}`)).body).toEqual({ error: 'not_found' });
      expect((await server.api('PATCH', `/v0/devices/${id}`, { device: {} })).status).toBe(404);
      expect((await server.api('PUT', `/v0/devices/${id}`, { device: {} })).status).toBe(404);
      expect((await server.api('DELETE', `/v0/devices/${id}`)).status).toBe(404);
    }
  });

  it('deletes with 204 and no body', async () => {
    const d = (await createDevice({})).body.data;
    const res = await server.api('DELETE', `/v0/devices/${d.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expect((await server.api('GET', `/v0/devices/${d.id}`)).status).toBe(404);
  });
});

describe('devices: upstream 0.7.26+ update emulation', () => {
  it('changes only name and description and silently ignores everything else', async () => {
    const legacy = await startInProcessServer({ legacyDeviceUpdates: true });
    try {
      const user = await newUser(legacy);
      const d = (await createDevice({}, legacy, user.id)).body.data;
      const res = await legacy.api('PATCH', `/v0/devices/${d.id}`, {
        device: {
          name: 'renamed',
          description: 'described',
          mtu: 'garbage',
          use_default_mtu: false,
          public_key: key(),
          ipv4: '10.3.2.99',
          endpoint: '::bad::',
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        ...d,
        name: 'renamed',
        description: 'described',
        updated_at: res.body.data.updated_at,
      });
      expect(res.body.data.updated_at > d.updated_at).toBe(true);
      const only = await legacy.api('PUT', `/v0/devices/${d.id}`, {
        device: { use_default_dns: false, dns: ['8.8.8.8'] },
      });
      expect(only.status).toBe(200);
      expect(only.body.data).toEqual(res.body.data);
      expect((await legacy.api('PATCH', `/v0/devices/${d.id}`, { device: { name: '' } })).body).toEqual({
        errors: { name: ["can't be blank"] },
      });
    } finally {
      await legacy.stop();
    }
  });
});
