/**
 * A GET of a device or rule that the server keeps between requests (SQLite's reader keeps rows
 * until anything commits) is answered from bytes serialized once by the route's own response
 * serializer. Those bytes are the serializer's answer exactly (compared with a PATCH that changes
 * nothing, whose answer is serialized as usual, with the same schema), and they change with the
 * object and with the server's defaults. Real HTTP against a server on a real database; on
 * PostgreSQL nothing is kept and the same tests hold.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setServerDefault } from '../../../server/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server.js';

const key = () => randomBytes(32).toString('base64');

let server: TestServer;
let ownerId: string;

beforeAll(async () => {
  server = await startInProcessServer({ logLevel: 'warn' });
  ownerId = (await server.api('POST', '/v0/users', { user: { email: 'owner@example.com' } })).body.data.id;
});

afterAll(async () => {
  await server?.stop();
});

/** The answer's status, type, length and body text, as sent. */
async function raw(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    length: response.headers.get('content-length'),
    text: await response.text(),
  };
}

describe('a kept object is answered with the bytes its route would serialize', () => {
  it('a device: the same bytes, type and length as an unchanged PATCH, on every GET', async () => {
    const made = await server.api('POST', '/v0/devices', { device: { user_id: ownerId, public_key: key() } });
    const path = `/v0/devices/${made.body.data.id}`;
    const gets = [await raw('GET', path), await raw('GET', path), await raw('GET', path)];
    const serialized = await raw('PATCH', path, { device: {} });
    expect(serialized).toMatchObject({ status: 200, type: 'application/json; charset=utf-8' });
    for (const get of gets) expect(get).toEqual(serialized);
  });

  it('a rule: the same bytes, type and length as an unchanged PATCH, on every GET', async () => {
    const made = await server.api('POST', '/v0/rules', {
      rule: { destination: '10.20.30.0/24', port_type: 'tcp', port_range: '443' },
    });
    const path = `/v0/rules/${made.body.data.id}`;
    const gets = [await raw('GET', path), await raw('GET', path)];
    const serialized = await raw('PATCH', path, { rule: {} });
    expect(serialized).toMatchObject({ status: 200, type: 'application/json; charset=utf-8' });
    for (const get of gets) expect(get).toEqual(serialized);
    expect(JSON.parse(serialized.text).data.port_range).toBe('443');
  });

  it('the bytes change with the device, and with a default the device uses', async () => {
    const made = await server.api('POST', '/v0/devices', {
      device: { user_id: ownerId, name: 'before', public_key: key() },
    });
    const path = `/v0/devices/${made.body.data.id}`;
    await raw('GET', path);
    expect(JSON.parse((await raw('GET', path)).text).data.name).toBe('before');

    const renamed = await raw('PATCH', path, { device: { name: 'after' } });
    expect(renamed.status).toBe(200);
    expect(await raw('GET', path)).toEqual(renamed);

    // Through another connection to the database, as `netform server defaults set` does it.
    await setServerDefault({ dbPath: server.dbPath, key: 'mtu', value: '1360' });
    const after = await raw('GET', path);
    expect(JSON.parse(after.text).data).toMatchObject({ name: 'after', mtu: 1360, use_default_mtu: true });
    expect(after).toEqual(await raw('PATCH', path, { device: {} }));
  });
});
