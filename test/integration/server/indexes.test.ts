/**
 * No request that creates, shows, updates or deletes one resource reads a whole table: every
 * statement such a request runs is checked with EXPLAIN QUERY PLAN. (Timings at scale are in
 * bench/server-scale.mjs; this keeps the property from regressing.)
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, issueToken } from '../../../server/index.js';
import { ensureSettings } from '../../../server/services/settings.js';
import { SqliteStore } from '../../../server/store/index.js';

let dir: string;
let url: string;
let token: string;
let statements: string[] = [];
let close: () => Promise<void>;
let plans: Database.Database;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netform-plans-'));
  const dbPath = join(dir, 'netform.db');
  token = (await issueToken({ dbPath, email: 'admin@example.com' })).token;
  const store = SqliteStore.open(dbPath, { verbose: (sql) => statements.push(sql) });
  await ensureSettings(store);
  const app = await buildApp({ store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  url = `http://127.0.0.1:${address.port}`;
  plans = new Database(dbPath, { readonly: true });
  close = async () => {
    await app.close();
    await store.close();
  };
});
afterAll(async () => {
  plans?.close();
  await close?.();
  rmSync(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Statements of one request whose plan reads a whole table. */
async function scansDuring(run: () => Promise<unknown>): Promise<string[]> {
  statements = [];
  await run();
  const scans: string[] = [];
  for (const sql of statements) {
    if (!/^\s*(SELECT|UPDATE|DELETE|INSERT)/i.test(sql)) continue;
    const plan = plans.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[];
    for (const { detail } of plan)
      if (/^SCAN (users|devices|rules|api_tokens)\b/.test(detail)) scans.push(`${detail}: ${sql}`);
  }
  expect(statements.length).toBeGreaterThan(0);
  return scans;
}

describe('per-request queries use indexes', () => {
  it('for users, devices and rules: create, show, update, delete', async () => {
    let user: { id: string; email: string } = { id: '', email: '' };
    let device: { id: string } = { id: '' };
    let rule: { id: string } = { id: '' };
    const steps: [string, () => Promise<unknown>][] = [
      [
        'user create',
        async () =>
          (user = (await api('POST', '/v0/users', { user: { email: 'u@example.com', role: 'admin' } })).body.data),
      ],
      ['user show by email', () => api('GET', '/v0/users/U@example.com')],
      [
        'user update',
        () => api('PATCH', `/v0/users/${user.id}`, { user: { role: 'unprivileged', email: 'v@example.com' } }),
      ],
      [
        'device create',
        async () =>
          (device = (
            await api('POST', '/v0/devices', {
              device: { user_id: user.id, public_key: randomBytes(32).toString('base64') },
            })
          ).body.data),
      ],
      ['device show', () => api('GET', `/v0/devices/${device.id}`)],
      [
        'device update',
        () =>
          api('PATCH', `/v0/devices/${device.id}`, {
            device: { name: 'n', ipv4: '10.3.2.77', use_default_mtu: false, mtu: 1400 },
          }),
      ],
      [
        'rule create',
        async () =>
          (rule = (
            await api('POST', '/v0/rules', {
              rule: { destination: '10.0.0.0/8', port_type: 'tcp', port_range: '80', user_id: user.id },
            })
          ).body.data),
      ],
      [
        'rule create refused',
        () =>
          api('POST', '/v0/rules', {
            rule: { destination: '10.1.2.3', port_type: 'tcp', port_range: '1-100', user_id: user.id },
          }),
      ],
      ['rule show', () => api('GET', `/v0/rules/${rule.id}`)],
      [
        'rule update',
        () => api('PATCH', `/v0/rules/${rule.id}`, { rule: { destination: '10.0.0.0/9', user_id: null } }),
      ],
      ['rule delete', () => api('DELETE', `/v0/rules/${rule.id}`)],
      ['device delete', () => api('DELETE', `/v0/devices/${device.id}`)],
      ['user delete', () => api('DELETE', `/v0/users/${user.id}`)],
    ];
    for (const [name, step] of steps) expect(await scansDuring(step), name).toEqual([]);
  });

  it('the check itself notices a scan (a list reads every row)', async () => {
    expect((await scansDuring(() => api('GET', '/v0/rules'))).length).toBeGreaterThan(0);
  });
});
