/**
 * The PostgreSQL store on its own: the invariants the database itself enforces (whatever writes
 * to it), migrations under the advisory lock, refusing a newer database, and connection errors.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openStore,
  PostgresStore,
  POSTGRES_MIGRATIONS,
  StoreOpenError,
  type DeviceRow,
  type RuleRow,
  type UserRow,
} from '../../../server/store/index.js';
import { createDatabase, dropDatabase } from '../../helpers/postgres.js';
import { runCli } from '../../helpers/cli.js';
import { openSql, testPostgresUrl } from '../../helpers/store.js';

const NOW = '2026-01-01T00:00:00.000000Z';
const databases: string[] = [];
const stores: PostgresStore[] = [];

async function freshStore(): Promise<{ store: PostgresStore; url: string }> {
  const url = await createDatabase(testPostgresUrl());
  databases.push(url);
  const store = await PostgresStore.open(url);
  stores.push(store);
  return { store, url };
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(databases.splice(0).map(dropDatabase));
});

function user(email: string, role: UserRow['role'] = 'admin'): UserRow {
  return {
    id: randomUUID(),
    email,
    role,
    password_hash: null,
    last_signed_in_at: null,
    last_signed_in_method: null,
    disabled_at: null,
    inserted_at: NOW,
    updated_at: NOW,
  };
}

function device(userId: string, fields: Partial<DeviceRow>): DeviceRow {
  return {
    id: randomUUID(),
    user_id: userId,
    name: `d-${randomUUID()}`,
    description: null,
    public_key: randomUUID(),
    preshared_key: null,
    ipv4: null,
    ipv6: null,
    allowed_ips: null,
    dns: null,
    endpoint: null,
    mtu: null,
    persistent_keepalive: null,
    use_default_allowed_ips: true,
    use_default_dns: true,
    use_default_endpoint: true,
    use_default_mtu: true,
    use_default_persistent_keepalive: true,
    remote_ip: null,
    latest_handshake: null,
    rx_bytes: null,
    tx_bytes: null,
    inserted_at: NOW,
    updated_at: NOW,
    ...fields,
  };
}

function rule(fields: Partial<RuleRow>): RuleRow {
  return {
    id: randomUUID(),
    action: 'drop',
    destination: '10.0.0.0/8',
    port_type: null,
    port_range: null,
    user_id: null,
    inserted_at: NOW,
    updated_at: NOW,
    ...fields,
  };
}

/** The SQLSTATE and constraint of a write the database refused. */
async function refusal(write: () => Promise<unknown>): Promise<{ code: string; constraint: string }> {
  try {
    await write();
  } catch (error) {
    const e = error as { code: string; constraint: string };
    return { code: e.code, constraint: e.constraint };
  }
  throw new Error('the database accepted the write');
}

describe('invariants enforced by the database itself', () => {
  it('refuses a second email differing only in case, a second public key, a second name per user, a taken address', async () => {
    const { store } = await freshStore();
    const owner = user('Owner@Example.com');
    await store.transaction(async (tx) => {
      await tx.insertUser(owner);
      await tx.insertDevice(device(owner.id, { name: 'laptop', public_key: 'key-1', ipv4: '10.3.2.2' }));
    });
    expect(await refusal(() => store.transaction((tx) => tx.insertUser(user('owner@example.COM'))))).toEqual({
      code: '23505',
      constraint: 'users_email_unique',
    });
    expect(
      await refusal(() => store.transaction((tx) => tx.insertDevice(device(owner.id, { public_key: 'key-1' })))),
    ).toEqual({ code: '23505', constraint: 'devices_public_key_unique' });
    expect(
      await refusal(() => store.transaction((tx) => tx.insertDevice(device(owner.id, { name: 'laptop' })))),
    ).toEqual({ code: '23505', constraint: 'devices_name_unique' });
    // The same address in another spelling is the same address.
    expect(
      await refusal(() => store.transaction((tx) => tx.insertDevice(device(owner.id, { ipv4: '10.3.2.2' })))),
    ).toEqual({ code: '23505', constraint: 'devices_ipv4_unique' });
    await store.transaction((tx) => tx.insertDevice(device(owner.id, { ipv6: 'fd00::3:2:2' })));
    expect(
      await refusal(() => store.transaction((tx) => tx.insertDevice(device(owner.id, { ipv6: 'FD00:0::3:2:2' })))),
    ).toEqual({ code: '23505', constraint: 'devices_ipv6_unique' });
    expect((await store.listDevices()).map((d) => d.ipv4 ?? d.ipv6).sort()).toEqual(['10.3.2.2', 'fd00::3:2:2']);
  });

  it('refuses overlapping rules through the exclusion constraint, and only overlapping ones', async () => {
    const { store } = await freshStore();
    const owner = user('a@example.com');
    await store.transaction(async (tx) => {
      await tx.insertUser(owner);
      await tx.insertRule(rule({ destination: '10.0.0.0/8' }));
      await tx.insertRule(rule({ destination: '192.168.0.0/16', port_type: 'tcp', port_range: '80 - 90' }));
    });
    const overlapping = [
      rule({ destination: '10.1.2.3' }),
      rule({ destination: '0.0.0.0/0' }),
      rule({ destination: '192.168.1.0/24', port_type: 'tcp', port_range: '90 - 100' }),
    ];
    for (const r of overlapping) {
      expect(await refusal(() => store.transaction((tx) => tx.insertRule(r)))).toEqual({
        code: '23P01',
        constraint: 'rules_no_overlap',
      });
    }
    const disjoint = [
      rule({ destination: '10.0.0.0/8', action: 'accept' }),
      rule({ destination: '10.0.0.0/8', user_id: owner.id }),
      rule({ destination: '192.168.1.0/24', port_type: 'udp', port_range: '80 - 90' }),
      rule({ destination: '192.168.1.0/24', port_type: 'tcp', port_range: '91 - 100' }),
      rule({ destination: '192.168.1.0/24' }),
      rule({ destination: 'fd00::/8' }),
    ];
    for (const r of disjoint) await store.transaction((tx) => tx.insertRule(r));
    expect(await store.listRules()).toHaveLength(2 + disjoint.length);
  });

  it('finds intersecting rules by index, as the overlap check needs', async () => {
    const { store } = await freshStore();
    await store.transaction(async (tx) => {
      await tx.insertRule(rule({ destination: '10.0.0.0/8' }));
      await tx.insertRule(rule({ destination: '172.16.0.0/12', port_type: 'udp', port_range: '53' }));
    });
    const query = { action: 'drop' as const, userId: null, family: 4 as const, portType: null, ports: null, limit: 32 };
    expect(
      await store.findIntersectingRules({ ...query, start: 0x0a010000n, end: 0x0a01ffffn, prefix: 16 }),
    ).toHaveLength(1);
    expect(
      await store.findIntersectingRules({ ...query, start: 0x0b000000n, end: 0x0bffffffn, prefix: 8 }),
    ).toHaveLength(0);
    const udp = { ...query, start: 0xac100000n, end: 0xac10ffffn, prefix: 16, portType: 'udp' as const };
    expect(await store.findIntersectingRules({ ...udp, ports: { low: 50, high: 60 } })).toHaveLength(1);
    expect(await store.findIntersectingRules({ ...udp, ports: { low: 54, high: 60 } })).toHaveLength(0);
  });
});

describe('migrations', () => {
  it('run once when several processes open a new database at once (advisory lock)', async () => {
    const url = await createDatabase(testPostgresUrl());
    databases.push(url);
    const opened = await Promise.all(Array.from({ length: 6 }, () => PostgresStore.open(url)));
    stores.push(...opened);
    const sql = await openSql(url);
    try {
      expect(await sql.all('SELECT version FROM schema_version')).toEqual(
        POSTGRES_MIGRATIONS.map((m) => ({ version: m.version })),
      );
    } finally {
      await sql.close();
    }
  });

  it('refuse a database newer than the code, changing nothing', async () => {
    const { url } = await freshStore();
    const sql = await openSql(url);
    try {
      await sql.run('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)', 999, NOW);
      await expect(PostgresStore.open(url)).rejects.toThrow(
        /database schema version 999 is newer than this netform supports \(\d+\); upgrade netform/,
      );
      expect(await sql.all('SELECT COUNT(*)::int AS n FROM schema_version')).toEqual([
        { n: POSTGRES_MIGRATIONS.length + 1 },
      ]);
    } finally {
      await sql.close();
    }
  });
});

describe('opening', () => {
  it('names an unreachable database without its password', async () => {
    const url = new URL(testPostgresUrl());
    url.password = 'hunter2';
    url.pathname = '/no_such_database';
    const error = await openStore(url.toString()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreOpenError);
    expect((error as Error).message).toBe(
      `cannot connect to PostgreSQL at postgres://netform@${url.host}/no_such_database: the database does not exist (create it with createdb)`,
    );
  });

  it('netform serve and the server commands say so in one line, without a stack or the password', async () => {
    const url = new URL(testPostgresUrl());
    url.password = 'hunter2';
    url.port = '1';
    for (const args of [
      ['serve', '--port', '0'],
      ['server', 'token', 'list'],
    ]) {
      const result = await runCli([...args, '--db', url.toString()]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(
        /cannot connect to PostgreSQL at postgres:\/\/netform@127\.0\.0\.1:1\/postgres: connection refused/,
      );
      expect(result.stderr).not.toContain('hunter2');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
