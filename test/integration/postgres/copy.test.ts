/**
 * `netform server copy --from FILE.db --to postgres://...`: a SQLite server's data moved to a new
 * PostgreSQL database; the same server answers the same lists afterwards, and its tokens work.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken, setServerDefault, startServer, type RunningServer } from '../../../server/index.js';
import { runCli } from '../../helpers/cli.js';
import { expectedCopyWarnings, plantSqliteSource } from '../../helpers/planted-rows.js';
import { createDatabase, dropDatabase } from '../../helpers/postgres.js';
import { openSql, testPostgresUrl } from '../../helpers/store.js';

const key = () => randomBytes(32).toString('base64');
let dir: string;
let file: string;
let token: string;
const databases: string[] = [];

async function call(server: RunningServer, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function lists(location: string): Promise<unknown[]> {
  const server = await startServer({ dbPath: location, port: 0 });
  try {
    return await Promise.all(
      ['/v0/users', '/v0/devices', '/v0/rules'].map(async (path) => (await call(server, 'GET', path)).body),
    );
  } finally {
    await server.close();
  }
}

async function newDatabase(): Promise<string> {
  const url = await createDatabase(testPostgresUrl());
  databases.push(url);
  return url;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netform-copy-'));
  file = join(dir, 'netform.db');
  token = (await issueToken({ dbPath: file, email: 'admin@example.com' })).token;
  await setServerDefault({ dbPath: file, key: 'mtu', value: '1380' });
  const server = await startServer({ dbPath: file, port: 0 });
  try {
    for (let i = 0; i < 5; i++) {
      const user = (
        await call(server, 'POST', '/v0/users', {
          user: {
            email: `User-${i}@Example.com`,
            password: 'correct horse battery',
            password_confirmation: 'correct horse battery',
          },
        })
      ).body.data;
      for (let d = 0; d < 3; d++) {
        expect(
          (
            await call(server, 'POST', '/v0/devices', {
              device: {
                user_id: user.id,
                public_key: key(),
                name: `dev-${d}`,
                dns: ['9.9.9.9'],
                use_default_dns: false,
              },
            })
          ).status,
        ).toBe(201);
      }
      expect(
        (
          await call(server, 'POST', '/v0/rules', {
            rule: {
              action: 'accept',
              destination: `10.${i}.0.0/16`,
              port_type: 'tcp',
              port_range: '443',
              user_id: user.id,
            },
          })
        ).status,
      ).toBe(201);
    }
    expect(
      (await call(server, 'POST', '/v0/rules', { rule: { action: 'drop', destination: 'fd00::/8' } })).status,
    ).toBe(201);
  } finally {
    await server.close();
  }
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await Promise.all(databases.map(dropDatabase));
});

describe('netform server copy', () => {
  it('copies the seals of the saved plans applied on the source: the target refuses them again', async () => {
    const source = join(dir, 'applied.db');
    const sourceToken = (await issueToken({ dbPath: source, email: 'admin@example.com' })).token;
    const seal = `hmac-sha256:${randomBytes(32).toString('hex')}`;
    const claim = (server: RunningServer, claimId: string) =>
      fetch(`${server.url}/netform/applied-plans`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sourceToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ seal, claim: claimId }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const before = await startServer({ dbPath: source, port: 0 });
    let recorded: { status: number; body: any };
    try {
      recorded = await claim(before, 'first-apply');
      expect(recorded.status).toBe(201);
    } finally {
      await before.close();
    }
    const url = await newDatabase();
    const copied = await runCli(['server', 'copy', '--from', source, '--to', url]);
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stdout).toMatch(/ settings, 1 applied saved plans\n$/);
    const after = await startServer({ dbPath: url, port: 0 });
    try {
      const again = await claim(after, 'second-apply');
      expect(again.status).toBe(409);
      expect(again.body.errors.applied_at).toEqual([recorded.body.data.applied_at]);
    } finally {
      await after.close();
    }
  });

  it('moves everything in one transaction and reports counts; the lists are equal afterwards, tokens work', async () => {
    const url = await newDatabase();
    const copied = await runCli(['server', 'copy', '--from', file, '--to', url]);
    expect(copied.code, copied.stderr).toBe(0);
    const source = await openSql(file);
    const settings = (await source.all<{ n: number }>('SELECT COUNT(*) AS n FROM settings'))[0]!.n;
    await source.close();
    expect(copied.stdout).toBe(`copied 6 users, 15 devices, 6 rules, 1 tokens, ${settings} settings\n`);
    expect(await lists(url)).toEqual(await lists(file));

    const server = await startServer({ dbPath: url, port: 0 });
    try {
      // The same defaults and server key; new devices get the next free addresses.
      const shown = await runCli(['server', 'defaults', 'show', '--json', '--db', url]);
      const original = await runCli(['server', 'defaults', 'show', '--json', '--db', file]);
      expect(JSON.parse(shown.stdout)).toEqual(JSON.parse(original.stdout));
      const users = (await call(server, 'GET', '/v0/users')).body.data;
      const created = await call(server, 'POST', '/v0/devices', {
        device: { user_id: users[1].id, public_key: key() },
      });
      expect(created.status).toBe(201);
      const taken = new Set(((await lists(file))[1] as { data: { ipv4: string }[] }).data.map((d) => d.ipv4));
      expect(taken.has(created.body.data.ipv4)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('refuses a database that is not empty, changing nothing', async () => {
    const url = await newDatabase();
    expect((await runCli(['server', 'token', 'create', '--email', 'other@example.com', '--db', url])).code).toBe(0);
    const before = await lists(url);
    const copied = await runCli(['server', 'copy', '--from', file, '--to', url.replace('netform@', 'netform:secret@')]);
    expect(copied.code).not.toBe(0);
    expect(copied.stderr).toMatch(
      /postgres:\/\/netform@127\.0\.0\.1:\d+\/\w+ is not empty: copy only into a new database/,
    );
    expect(copied.stderr).not.toContain('secret');
    expect(await lists(url)).toEqual(before);
  });

  it('leaves out the rows PostgreSQL cannot hold or keep apart (NUL, lone surrogates), naming them by id, and copies the rest', async () => {
    const planted = join(dir, 'planted.db');
    const { ids, kept, token: plantedToken } = await plantSqliteSource(planted);
    const url = await newDatabase();
    const copied = await runCli(['server', 'copy', '--from', planted, '--to', url]);
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stdout).toMatch(
      new RegExp(
        `^copied ${kept.users} users, ${kept.devices} devices, ${kept.rules} rules, ${kept.tokens} tokens, \\d+ settings\\n$`,
      ),
    );
    expect(
      copied.stderr
        .split('\n')
        .filter((line) => line.startsWith('warning: left out'))
        .sort(),
    ).toEqual(expectedCopyWarnings(ids));
    const server = await startServer({ dbPath: url, port: 0 });
    try {
      const get = async (path: string) =>
        (await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${plantedToken}` } })).json();
      const users = ((await get('/v0/users')) as { data: { id: string; email: string }[] }).data;
      for (const id of [ids.nulUser, ...ids.twins]) expect(users.some((u) => u.id === id)).toBe(false);
      expect(users).toHaveLength(kept.users);
      // The Kelvin-sign user is copied as stored, and still found by its key.
      expect(users.find((u) => u.id === ids.kelvin)?.email).toBe('\u212Aelvin@example.com');
      expect(((await get('/v0/users/kelvin@example.com')) as { data: { id: string } }).data.id).toBe(ids.kelvin);
    } finally {
      await server.close();
    }
  });

  it('refuses a missing source file and creates nothing', async () => {
    const url = await newDatabase();
    const missing = join(dir, 'missing.db');
    const copied = await runCli(['server', 'copy', '--from', missing, '--to', url]);
    expect(copied.code).not.toBe(0);
    expect(copied.stderr).toContain(`no database file at ${missing}`);
    const sql = await openSql(url);
    try {
      expect(await sql.all("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual([]);
    } finally {
      await sql.close();
    }
  });
});
