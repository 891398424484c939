/**
 * The device-field table (src/model/device-fields.ts) against a real server, field by field: what
 * the table says a body may carry is taken on create and update (and only name and description on
 * a server emulating upstream 0.7.26+); what it says is only answered is ignored when sent; the
 * use_default_<x> rule as the table states it. Unlike conformance-devices.test.ts, which checks
 * the contract case by case, this walks the table, so a field added to it is checked here too.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEVICE_FIELD_TABLE,
  DEVICE_RESPONSE_KEYS,
  LIST_DEVICE_FIELDS,
  USE_DEFAULT_FLAGS,
  withImpliedFlags,
  type DeviceFieldName,
} from '../../../src/model/device-fields.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';

const key = () => randomBytes(32).toString('base64');

let server: TestServer;
let legacy: TestServer;
let counter = 0;

async function newUser(s: TestServer): Promise<string> {
  const res = await s.api('POST', '/v0/users', { user: { email: `fields-${++counter}@example.com` } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

/** A valid value of each field a body may carry, other than what the server would choose itself. */
const SAMPLES: Partial<Record<DeviceFieldName, (s: TestServer) => Promise<unknown> | unknown>> = {
  user_id: (s) => newUser(s),
  name: () => `field-device-${++counter}`,
  description: () => `description ${++counter}`,
  public_key: key,
  preshared_key: key,
  ipv4: () => `10.3.2.${100 + (++counter % 100)}`,
  ipv6: () => `fd00::3:2:${(100 + (++counter % 100)).toString(16)}`,
  allowed_ips: () => ['10.0.0.0/8', `192.168.${++counter % 250}.0/24`],
  dns: () => ['9.9.9.9', `dns${++counter}.example.com`],
  endpoint: () => `vpn${++counter}.example.com:51821`,
  mtu: () => 1300 + (++counter % 100),
  persistent_keepalive: () => 1 + (++counter % 100),
};

/** What a body sends to set `field`: the field with a sample, with its flag off if it has one, or a flag off with its field's sample. */
async function bodyFor(field: DeviceFieldName, s: TestServer): Promise<Record<string, unknown>> {
  const row = DEVICE_FIELD_TABLE[field] as { flagOf?: DeviceFieldName };
  if (row.flagOf) return { ...(await bodyFor(row.flagOf, s)), [field]: false };
  const sample = SAMPLES[field];
  if (!sample) throw new Error(`no sample value for the device field ${field}: add one to SAMPLES`);
  return withImpliedFlags({ [field]: await sample(s) });
}

const fieldsWhere = (body: string) =>
  DEVICE_RESPONSE_KEYS.filter((f) => (DEVICE_FIELD_TABLE[f] as { body: string }).body === body);

beforeAll(async () => {
  [server, legacy] = await Promise.all([startInProcessServer(), startInProcessServer({ legacyDeviceUpdates: true })]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), legacy?.stop()]);
});

async function create(s: TestServer, fields: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const res = await s.api('POST', '/v0/devices', {
    device: { user_id: await newUser(s), public_key: key(), ...fields },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

describe('the device-field table on a real server', () => {
  it('each field a body may carry is taken on create, as sent', async () => {
    const fields = DEVICE_RESPONSE_KEYS.filter((f) => DEVICE_FIELD_TABLE[f].body !== 'answer');
    expect(fields).toHaveLength(17);
    for (const field of fields) {
      const body = await bodyFor(field, server);
      const device = await create(server, body);
      expect(device, field).toMatchObject(body);
    }
  });

  it('each field that is only answered is ignored in a body, on create and on update', async () => {
    const sent: Record<string, unknown> = {
      id: randomUUID(),
      server_public_key: key(),
      remote_ip: '203.0.113.7',
      latest_handshake: '2020-01-01T00:00:00.000000Z',
      rx_bytes: 12345,
      tx_bytes: 67890,
      inserted_at: '2020-01-01T00:00:00.000000Z',
      updated_at: '2020-01-01T00:00:00.000000Z',
    };
    expect(Object.keys(sent)).toEqual(fieldsWhere('answer'));
    const device = await create(server, sent);
    const other = await create(server);
    for (const field of fieldsWhere('answer')) expect(device[field], field).not.toEqual(sent[field]);
    // Not stored per device: the server's own key, the same on every device.
    expect(device.server_public_key).toBe(other.server_public_key);

    const res = await server.api('PATCH', `/v0/devices/${device.id}`, { device: { ...sent, description: 'x' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const field of fieldsWhere('answer')) expect(res.body.data[field], field).not.toEqual(sent[field]);
    expect(res.body.data.id).toBe(device.id);
  });

  it('a field read on create only (the owner) is ignored on update', async () => {
    expect(fieldsWhere('create')).toEqual(['user_id']);
    const device = await create(server);
    const res = await server.api('PATCH', `/v0/devices/${device.id}`, { device: { user_id: await newUser(server) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.user_id).toBe(device.user_id);
  });

  it('each field read on create and update changes on update; on a 0.7.26+ server only the legacy-updatable ones do', async () => {
    for (const field of fieldsWhere('always')) {
      for (const s of [server, legacy]) {
        const device = await create(s);
        const body = await bodyFor(field, s);
        const res = await s.api('PATCH', `/v0/devices/${device.id}`, { device: body });
        expect(res.status, `${field}: ${JSON.stringify(res.body)}`).toBe(200);
        const changes =
          s === server || (DEVICE_FIELD_TABLE[field] as { legacyUpdatable?: boolean }).legacyUpdatable === true;
        const { updated_at: _after, ...after } = res.body.data;
        const { updated_at: _before, ...before } = device;
        if (changes) expect(after, `${field} on update`).toMatchObject(body);
        else expect(after, `${field} ignored on 0.7.26+`).toEqual(before);
      }
    }
  });

  it('a value beside its flag on is refused; turning the flag on drops the own value, a list off its default is []', async () => {
    for (const [field, flag] of USE_DEFAULT_FLAGS) {
      const value = (await bodyFor(field, server))[field];
      const refused = await server.api('POST', '/v0/devices', {
        device: { user_id: await newUser(server), public_key: key(), [field]: value },
      });
      expect(refused.status, field).toBe(422);
      expect(refused.body.errors, field).toEqual({ [field]: ['must not be present'] });

      const device = await create(server, withImpliedFlags({ [field]: value }));
      expect(device[flag], field).toBe(false);
      const on = await server.api('PATCH', `/v0/devices/${device.id}`, { device: { [flag]: true } });
      expect(on.status, JSON.stringify(on.body)).toBe(200);
      const offBody = field === 'endpoint' ? { [flag]: false, endpoint: 'again.example.com' } : { [flag]: false };
      const off = await server.api('PATCH', `/v0/devices/${device.id}`, { device: offBody });
      expect(off.status, JSON.stringify(off.body)).toBe(200);
      const isList = (LIST_DEVICE_FIELDS as readonly string[]).includes(field);
      expect(off.body.data[field], field).toEqual(field === 'endpoint' ? 'again.example.com' : isList ? [] : null);
    }
  });
});
