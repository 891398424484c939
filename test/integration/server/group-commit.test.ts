/**
 * Group commit in the SQLite store: write transactions that queue up together share one COMMIT
 * (one fsync), and keep every guarantee of one transaction each: each sees the writes before it,
 * a failing one is rolled back alone, and none is answered before its COMMIT. On real files, and
 * over real HTTP for the API's own races.
 */
import Database from 'better-sqlite3';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allocateAddress } from '../../../server/services/allocation.js';
import { SqliteStore, type StoreWriter, type UserRow } from '../../../server/store/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function openStore(options: { groupCommit?: boolean } = {}): {
  store: SqliteStore;
  dbPath: string;
  statements: string[];
} {
  const dir = mkdtempSync(join(tmpdir(), 'netform-group-'));
  const dbPath = join(dir, 'netform.db');
  const statements: string[] = [];
  const store = SqliteStore.open(dbPath, { ...options, verbose: (sql) => statements.push(sql) });
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.push(() => store.close());
  return { store, dbPath, statements };
}

const NOW = '2026-01-01T00:00:00.000000Z';
const user = (email: string, id: string = randomUUID()): UserRow => ({
  id,
  email,
  role: 'unprivileged',
  password_hash: null,
  last_signed_in_at: null,
  last_signed_in_method: null,
  disabled_at: null,
  inserted_at: NOW,
  updated_at: NOW,
});

describe('group commit (store)', () => {
  it('transactions asked for together share one COMMIT; without group commit each has its own', async () => {
    for (const groupCommit of [true, false]) {
      const { store, statements } = openStore({ groupCommit });
      statements.length = 0;
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.transaction((tx) => tx.insertUser(user(`u${i}@example.com`)))),
      );
      const commits = statements.filter((s) => s === 'COMMIT').length;
      if (groupCommit) expect(commits).toBeLessThanOrEqual(2);
      else expect(commits).toBe(40);
      expect((await store.listUsers()).length).toBe(40);
    }
  });

  it("each member's checks see the writes of the members before it in the same batch", async () => {
    const { store, statements } = openStore();
    statements.length = 0;
    // Forty attempts at one email, each checking first: exactly one may insert.
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () =>
        store.transaction(async (tx) => {
          if (await tx.findUserByEmail('same@example.com')) throw new Error('taken');
          await tx.insertUser(user('same@example.com'));
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected' && (r.reason as Error).message === 'taken')).toHaveLength(39);
    expect(statements.filter((s) => s === 'COMMIT').length).toBeLessThanOrEqual(2);
  });

  it('a failing member is rolled back alone, also when SQLite refuses its statement; the others commit', async () => {
    const { store, dbPath } = openStore();
    const taken = randomUUID();
    await store.transaction((tx) => tx.insertUser(user('first@example.com', taken)));
    const results = await Promise.allSettled([
      store.transaction((tx) => tx.insertUser(user('a@example.com'))),
      // Writes, then fails in our code: its first write must not stay.
      store.transaction(async (tx) => {
        await tx.insertUser(user('half@example.com'));
        throw new Error('refused after a write');
      }),
      // Writes, then SQLite refuses a statement (a primary key taken).
      store.transaction(async (tx) => {
        await tx.insertUser(user('also-half@example.com'));
        await tx.insertUser(user('dup@example.com', taken));
      }),
      store.transaction((tx) => tx.insertUser(user('b@example.com'))),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/);
    // What another connection (another process) finds in the file.
    const other = new Database(dbPath, { readonly: true });
    try {
      const emails = (other.prepare('SELECT email FROM users ORDER BY email').all() as { email: string }[]).map(
        (r) => r.email,
      );
      expect(emails).toEqual(['a@example.com', 'b@example.com', 'first@example.com']);
    } finally {
      other.close();
    }
  });

  it('nothing is answered before its COMMIT: at each answer, another connection already sees the write', async () => {
    const { store, dbPath } = openStore();
    const other = new Database(dbPath, { readonly: true });
    cleanup.push(() => void other.close());
    const visibleAtAnswer = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const email = `seen${i}@example.com`;
        await store.transaction((tx) => tx.insertUser(user(email)));
        return other.prepare('SELECT COUNT(*) AS n FROM users WHERE email = ?').get(email) as { n: number };
      }),
    );
    expect(visibleAtAnswer.every((r) => r.n === 1)).toBe(true);
  });

  it('a batch keeps the token, owner and settings it read until a member writes their tables; a member rolled back takes what it read back', async () => {
    const { store, statements } = openStore();
    const admin = { ...user('admin@example.com'), role: 'admin' as const };
    const hash = 'ab'.repeat(32);
    const token = {
      id: randomUUID(),
      user_id: admin.id,
      token_hash: hash,
      inserted_at: NOW,
      expires_at: NOW,
      revoked_at: null,
    };
    await store.transaction(async (tx) => {
      await tx.insertUser(admin);
      await tx.insertToken(token);
      await tx.setSetting('mtu', 1280);
    });
    statements.length = 0;
    const role = async (tx: StoreWriter) => (await tx.findTokenByHash(hash))?.owner.role;
    const results = await Promise.allSettled([
      store.transaction(role),
      store.transaction(role),
      store.transaction(async (tx) => (await tx.getSettings()).mtu),
      store.transaction(async (tx) => (await tx.getSettings()).mtu),
      // Demotes the owner and reads it so, then fails: rolled back, and so is what it read.
      store.transaction(async (tx) => {
        await tx.updateUser(admin.id, { role: 'unprivileged' });
        if ((await role(tx)) !== 'unprivileged') throw new Error('its own write unseen');
        throw new Error('refused after a write');
      }),
      store.transaction(role),
      store.transaction(async (tx) => {
        await tx.revokeToken(token.id, NOW);
        await tx.setSetting('mtu', 1420);
      }),
      store.transaction(async (tx) => (await tx.findTokenByHash(hash))?.token.revoked_at),
      store.transaction(async (tx) => (await tx.getSettings()).mtu),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      'admin',
      'admin',
      1280,
      1280,
      'refused after a write',
      'admin',
      undefined,
      NOW,
      1420,
    ]);
    expect(statements.filter((s) => s === 'COMMIT')).toHaveLength(1);
    // Read by the first member, after the demotion, after its rollback, after the revocation.
    expect(statements.filter((s) => s.startsWith('SELECT t.id AS t_id'))).toHaveLength(4);
    expect(statements.filter((s) => s === 'SELECT key, value FROM settings')).toHaveLength(2);
  });

  it('a batch keeps the allocation mark it read and set; a member rolled back gives its address to the next one', async () => {
    const { store, statements } = openStore();
    const network = { cidr: '10.9.0.0/24', serverAddress: '10.9.0.1' };
    const allocate = async (tx: StoreWriter) => {
      const allocation = await allocateAddress(tx, 4, network);
      if (!allocation.ok) throw new Error(allocation.message);
      return allocation.address;
    };
    const refused = new Error('refused after allocating');
    statements.length = 0;
    const results = await Promise.allSettled([
      store.transaction(allocate),
      store.transaction(allocate),
      store.transaction(async (tx) => {
        await allocate(tx);
        throw refused;
      }),
      store.transaction(allocate),
    ]);
    expect(statements.filter((s) => s === 'COMMIT').length).toBe(1);
    expect(results).toEqual([
      { status: 'fulfilled', value: '10.9.0.2' },
      { status: 'fulfilled', value: '10.9.0.3' },
      { status: 'rejected', reason: refused },
      // The rolled-back member's 10.9.0.4 is the next one's: its mark went back with it.
      { status: 'fulfilled', value: '10.9.0.4' },
    ]);
    // Read by the batch's first member and again after the rollback, not by every member.
    expect(statements.filter((s) => s.startsWith('SELECT network, next_key FROM allocation_hints')).length).toBe(2);
    // What the batch kept is what it wrote: the next batch reads the mark from the file and goes on.
    expect(await store.transaction(allocate)).toBe('10.9.0.5');
  });

  it('close() answers the transactions already asked for', async () => {
    const { store, dbPath } = openStore();
    const asked = Array.from({ length: 10 }, (_, i) =>
      store.transaction((tx) => tx.insertUser(user(`late${i}@example.com`))),
    );
    await store.close();
    await Promise.all(asked);
    await expect(store.transaction(async () => undefined)).rejects.toThrow('store is closed');
    const other = new Database(dbPath, { readonly: true });
    expect((other.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n).toBe(10);
    other.close();
  });
});

describe('group commit (API)', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.stop();
  });

  it('concurrent creates: overlapping rules give exactly one 201, devices get distinct addresses, bad ones fail alone', async () => {
    server = await startInProcessServer();
    const rules = await Promise.all(
      Array.from({ length: 60 }, () =>
        server.api('POST', '/v0/rules', { rule: { destination: '10.60.0.0/16', action: 'accept' } }),
      ),
    );
    expect(rules.filter((r) => r.status === 201)).toHaveLength(1);
    expect(
      rules
        .filter((r) => r.status === 422)
        .every((r) => r.body.errors.destination[0] === 'destination overlaps with an existing rule'),
    ).toBe(true);

    const owner = (await server.api('POST', '/v0/users', { user: { email: 'many@example.com' } })).body.data;
    const devices = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        server.api('POST', '/v0/devices', {
          device: { user_id: owner.id, public_key: i % 4 === 3 ? 'bad' : randomBytes(32).toString('base64') },
        }),
      ),
    );
    const created = devices.filter((d) => d.status === 201).map((d) => d.body.data);
    expect(created).toHaveLength(9);
    expect(devices.filter((d) => d.status === 422)).toHaveLength(3);
    expect(new Set(created.map((d) => d.ipv4)).size).toBe(9);
    expect(new Set(created.map((d) => d.ipv6)).size).toBe(9);
    // All of them durable: a new process on the file sees every acknowledged one.
    await server.restart();
    const listed = (await server.api('GET', '/v0/devices')).body.data as { id: string }[];
    expect(listed.map((d) => d.id).sort()).toEqual(created.map((d) => d.id).sort());
  });
});
