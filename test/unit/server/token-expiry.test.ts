/**
 * A token kept by the server between requests (nothing committed since it was read) is judged
 * once, and its expiry compared again on every request with the clock's microseconds: it stops
 * working at the very microsecond it expires, with nothing written in between. A server on a
 * real SQLite file, its clock set by the test, real HTTP.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, issueToken } from '../../../server/index.js';
import { parseTimestamp } from '../../../server/clock.js';
import { ensureSettings } from '../../../server/services/settings.js';
import { SqliteStore } from '../../../server/store/index.js';

const EXPIRES = '2030-06-01T12:00:00.250000Z';
const AT = parseTimestamp(EXPIRES);
const NO_RESOURCE = { errors: { auth: 'no_resource_found' } };

let dir: string;
let url: string;
let now = 0n;
const tokens = { admin: '', disabled: '', loose: '' };
let close: () => Promise<void>;

const digest = (token: string) => createHash('sha256').update(token).digest('hex');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netform-token-expiry-'));
  const dbPath = join(dir, 'netform.db');
  tokens.admin = (await issueToken({ dbPath, email: 'admin@example.com' })).token;
  tokens.disabled = (await issueToken({ dbPath, email: 'disabled@example.com' })).token;
  tokens.loose = (await issueToken({ dbPath, email: 'admin@example.com' })).token;
  const db = new Database(dbPath);
  const setExpiry = db.prepare('UPDATE api_tokens SET expires_at = ? WHERE token_hash = ?');
  setExpiry.run(EXPIRES, digest(tokens.admin));
  setExpiry.run(EXPIRES, digest(tokens.disabled));
  // Not the contract's own format (no microseconds): compared as text, as before.
  setExpiry.run('2030-06-01T12:00:00Z', digest(tokens.loose));
  db.prepare("UPDATE users SET disabled_at = '2020-01-01T00:00:00.000000Z' WHERE email = 'disabled@example.com'").run();
  db.close();
  const store = SqliteStore.open(dbPath);
  await ensureSettings(store);
  const app = await buildApp({ store, clock: { nowMicros: () => now } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  close = async () => {
    await app.close();
    await store.close();
  };
});
afterAll(async () => {
  await close?.();
  rmSync(dir, { recursive: true, force: true });
});

async function get(token: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}/v0/users`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

describe('a kept token expires on time', () => {
  it('works up to the microsecond before its expiry, and not from its expiry on, with no write between', async () => {
    now = AT - 10_000_000n;
    expect((await get(tokens.admin)).status).toBe(200);
    now = AT - 1n;
    expect((await get(tokens.admin)).status).toBe(200);
    expect((await get(tokens.admin)).status).toBe(200);
    now = AT;
    expect(await get(tokens.admin)).toEqual({ status: 401, body: NO_RESOURCE });
    now = AT + 1n;
    expect(await get(tokens.admin)).toEqual({ status: 401, body: NO_RESOURCE });
    // The clock going back (a test's clock can) is honoured too: nothing was decided for good.
    now = AT - 1n;
    expect((await get(tokens.admin)).status).toBe(200);
  });

  it("a disabled owner's token: Unauthorized before the expiry, unknown after it (the order of the checks)", async () => {
    now = AT - 1n;
    expect(await get(tokens.disabled)).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(await get(tokens.disabled)).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    now = AT;
    expect(await get(tokens.disabled)).toEqual({ status: 401, body: NO_RESOURCE });
  });

  it('an expiry stored in another format is compared as text', async () => {
    now = parseTimestamp('2030-06-01T11:59:59.999999Z');
    expect((await get(tokens.loose)).status).toBe(200);
    expect((await get(tokens.loose)).status).toBe(200);
    // '2030-06-01T12:00:00Z' <= '2030-06-01T12:00:00.000000Z' is false as text ('Z' > '.'), true from
    // '2030-06-01T12:00:01': the text comparison, exactly as before.
    now = parseTimestamp('2030-06-01T12:00:00.000000Z');
    expect((await get(tokens.loose)).status).toBe(200);
    now = parseTimestamp('2030-06-01T12:00:01.000000Z');
    expect(await get(tokens.loose)).toEqual({ status: 401, body: NO_RESOURCE });
  });
});
