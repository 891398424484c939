/**
 * Device tunnel addresses are echoed as the client wrote them (docs/rule-semantics.md §5), so one address can be
 * stored in several spellings. Everything that decides about addresses must compare them by
 * value: uniqueness, moves on update, the free list of the allocator, deletes and cascades.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setServerDefault } from '../../../server/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { openSql } from '../../helpers/store.js';

const key = () => randomBytes(32).toString('base64');

let server: TestServer;
let counter = 0;

async function newUser(): Promise<{ id: string }> {
  const res = await server.api('POST', '/v0/users', { user: { email: `address-owner-${++counter}@example.com` } });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function create(userId: string, fields: Record<string, unknown> = {}) {
  return server.api('POST', '/v0/devices', { device: { user_id: userId, public_key: key(), ...fields } });
}

async function created(userId: string, fields: Record<string, unknown> = {}) {
  const res = await create(userId, fields);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; ipv4: string; ipv6: string; updated_at: string };
}

/** The allocator's free list, read from the database itself. */
async function listedFree(): Promise<{ family: number; address_key: string }[]> {
  const sql = await openSql(server.dbPath);
  try {
    return await sql.all('SELECT family, address_key FROM free_addresses ORDER BY family, address_key');
  } finally {
    await sql.close();
  }
}

beforeEach(async () => {
  server = await startInProcessServer();
});
afterEach(async () => {
  await server?.stop();
});

describe('device addresses in another spelling', () => {
  it('are echoed as sent on create, update and show', async () => {
    const user = await newUser();
    const d = await created(user.id, { ipv4: ' 10.3.2.40 ', ipv6: 'FD00:0:0:0:0:3:2:0040' });
    expect([d.ipv4, d.ipv6]).toEqual(['10.3.2.40', 'FD00:0:0:0:0:3:2:0040']);
    expect((await server.api('GET', `/v0/devices/${d.id}`)).body.data.ipv6).toBe('FD00:0:0:0:0:3:2:0040');
    const moved = await server.api('PATCH', `/v0/devices/${d.id}`, { device: { ipv6: 'FD00::3:2:41' } });
    expect(moved.status).toBe(200);
    expect(moved.body.data.ipv6).toBe('FD00::3:2:41');
    expect((await server.api('GET', `/v0/devices/${d.id}`)).body.data.ipv6).toBe('FD00::3:2:41');
  });

  it('another spelling of a taken address is refused as taken, on create and on update, and changes nothing', async () => {
    const user = await newUser();
    await created(user.id, { ipv4: '10.3.2.30', ipv6: 'FD00::3:2:30' });
    for (const ipv6 of ['fd00::3:2:30', 'fd00:0:0:0:0:3:2:0030', 'FD00::3:2:30']) {
      const res = await create(user.id, { ipv4: ' 10.3.2.30', ipv6 });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ errors: { ipv4: ['has already been taken'], ipv6: ['has already been taken'] } });
    }
    const other = await created(user.id);
    const res = await server.api('PATCH', `/v0/devices/${other.id}`, { device: { ipv6: 'fd00:0000::3:2:30' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { ipv6: ['has already been taken'] } });
    expect((await server.api('GET', `/v0/devices/${other.id}`)).body.data).toMatchObject({
      ipv6: other.ipv6,
      updated_at: other.updated_at,
    });
    expect((await server.api('GET', '/v0/devices')).body.data).toHaveLength(2);
  });

  it('updating a device to another spelling of its own address keeps the address: not taken, not re-checked, not freed', async () => {
    const user = await newUser();
    const [first, second] = [await created(user.id), await created(user.id), await created(user.id)];
    expect([first!.ipv6, second!.ipv6]).toEqual(['fd00::3:2:2', 'fd00::3:2:3']);

    const respelled = await server.api('PATCH', `/v0/devices/${first!.id}`, {
      device: { ipv4: '10.3.2.2 ', ipv6: 'FD00:0:0:0:0:3:2:2' },
    });
    expect(respelled.status).toBe(200);
    expect(respelled.body.data).toMatchObject({ ipv4: '10.3.2.2', ipv6: 'FD00:0:0:0:0:3:2:2' });
    expect(await listedFree()).toEqual([]);
    // The next device gets the next address, not the one the first device still holds.
    expect(await created(user.id)).toMatchObject({ ipv4: '10.3.2.5', ipv6: 'fd00::3:2:5' });

    // A device keeps an address outside a tunnel network that changed since: its own address in
    // another spelling is not a request for a new one.
    await setServerDefault({ dbPath: server.dbPath, key: 'ipv6_network', value: 'fd00::4:0/120' });
    const kept = await server.api('PATCH', `/v0/devices/${second!.id}`, { device: { ipv6: 'FD00::3:2:03' } });
    expect(kept.status).toBe(200);
    expect(kept.body.data.ipv6).toBe('FD00::3:2:03');
    const devices = (await server.api('GET', '/v0/devices')).body.data as { ipv6: string }[];
    expect(devices.map((d) => d.ipv6).sort()).toEqual([
      'FD00:0:0:0:0:3:2:2',
      'FD00::3:2:03',
      'fd00::3:2:4',
      'fd00::3:2:5',
    ]);
  });

  it('deleting, moving or cascading a device whose address was given in an odd spelling frees that address', async () => {
    const user = await newUser();
    await created(user.id);
    await created(user.id);
    const pinned = await created(user.id, { ipv4: ' 10.3.2.4 ', ipv6: 'FD00:0000::3:2:4' });
    expect(await created(user.id)).toMatchObject({ ipv4: '10.3.2.5', ipv6: 'fd00::3:2:5' });

    expect((await server.api('DELETE', `/v0/devices/${pinned.id}`)).status).toBe(204);
    const reused = await created(user.id);
    expect([reused.ipv4, reused.ipv6]).toEqual(['10.3.2.4', 'fd00::3:2:4']);

    // Moving away from an address written in an odd spelling frees it too.
    const odd = await created(user.id, { ipv6: 'FD00::3:2:0006' });
    expect((await created(user.id)).ipv6).toBe('fd00::3:2:7');
    expect((await server.api('PATCH', `/v0/devices/${odd.id}`, { device: { ipv6: 'fd00::3:2:20' } })).status).toBe(200);
    expect((await created(user.id)).ipv6).toBe('fd00::3:2:6');

    // So does deleting the owner, which deletes its devices.
    const other = await newUser();
    await created(other.id, { ipv6: 'FD00::3:2:8' });
    expect((await created(user.id)).ipv6).toBe('fd00::3:2:9');
    expect((await server.api('DELETE', `/v0/users/${other.id}`)).status).toBe(204);
    expect((await created(user.id)).ipv6).toBe('fd00::3:2:8');
  });
});
