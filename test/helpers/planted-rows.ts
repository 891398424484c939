/**
 * A SQLite server database holding rows written before netform refused NUL characters and lone
 * surrogates (security review F9, F10), planted with SQL after creating clean rows through /v0:
 *
 * - a user whose email holds a NUL, with a device, a rule and an API token;
 * - two users whose emails hold different lone surrogates: SQLite stored them as invalid UTF-8,
 *   and both read back as the same `\ufffd\ufffd\ufffd@twin.example.com`;
 * - a device of a good user whose name holds a NUL, and two devices of another whose names are
 *   different lone surrogates (both read back as one name);
 * - a user whose email has the Kelvin sign (allowed then, refused by today's rules, storable);
 * - and clean users, devices and rules around them.
 */
import { randomBytes } from 'node:crypto';
import { issueToken, startServer } from '../../server/index.js';
import { openSql } from './store.js';

export interface PlantedSource {
  /** An admin token of `admin@example.com`. */
  token: string;
  ids: {
    nulUser: string;
    nulUserDevice: string;
    nulUserRule: string;
    nulUserToken: string;
    twins: [string, string];
    good: string;
    nulDevice: string;
    sameNameOwner: string;
    sameNames: [string, string];
    kelvin: string;
  };
  /** How many rows of each kind the source lists, and how many of them a copy keeps. */
  listed: { users: number; devices: number; rules: number; tokens: number };
  kept: { users: number; devices: number; rules: number; tokens: number };
}

const key = () => randomBytes(32).toString('base64');

export async function plantSqliteSource(file: string): Promise<PlantedSource> {
  const { token } = await issueToken({ dbPath: file, email: 'admin@example.com' });
  const server = await startServer({ dbPath: file, port: 0 });
  const call = async (path: string, body: unknown): Promise<{ id: string }> => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as { data: { id: string } };
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer.data;
  };
  const user = (email: string, role = 'unprivileged') => call('/v0/users', { user: { email, role } });
  const device = (userId: string, name: string) =>
    call('/v0/devices', { device: { user_id: userId, name, public_key: key() } });
  let ids: PlantedSource['ids'];
  try {
    // An admin, so that it can hold a token of its own.
    const nulUser = await user('nul@example.com', 'admin');
    const nulUserDevice = await device(nulUser.id, 'laptop');
    const nulUserRule = await call('/v0/rules', {
      rule: { user_id: nulUser.id, action: 'accept', destination: '10.20.0.0/16' },
    });
    const twins = [await user('twin-1@example.com'), await user('twin-2@example.com')];
    const good = await user('good@example.com');
    await device(good.id, 'phone');
    const nulDevice = await device(good.id, 'desk');
    await call('/v0/rules', { rule: { user_id: good.id, action: 'accept', destination: '10.30.0.0/16' } });
    const sameNameOwner = await user('names@example.com');
    const sameNames = [await device(sameNameOwner.id, 'one'), await device(sameNameOwner.id, 'two')];
    const kelvin = await user('kelvin@example.com');
    await device(kelvin.id, 'k');
    await call('/v0/rules', { rule: { action: 'drop', destination: '10.99.0.0/16' } });
    ids = {
      nulUser: nulUser.id,
      nulUserDevice: nulUserDevice.id,
      nulUserRule: nulUserRule.id,
      nulUserToken: '',
      twins: [twins[0]!.id, twins[1]!.id],
      good: good.id,
      nulDevice: nulDevice.id,
      sameNameOwner: sameNameOwner.id,
      sameNames: [sameNames[0]!.id, sameNames[1]!.id],
      kelvin: kelvin.id,
    };
  } finally {
    await server.close();
  }
  ids.nulUserToken = (await issueToken({ dbPath: file, email: 'nul@example.com' })).id;

  const sql = await openSql(file);
  try {
    const setEmail = (id: string, email: string, emailKey: string) =>
      sql.run('UPDATE users SET email = ?, email_key = ? WHERE id = ?', email, emailKey, id);
    await setEmail(ids.nulUser, 'n\u0000ul@example.com', 'n\u0000ul@example.com');
    // better-sqlite3 writes a lone surrogate as CESU-8 bytes, as the server did before the fix.
    await setEmail(ids.twins[0], '\ud800@twin.example.com', '\ud800@twin.example.com');
    await setEmail(ids.twins[1], '\ud801@twin.example.com', '\ud801@twin.example.com');
    await setEmail(ids.kelvin, '\u212Aelvin@example.com', 'kelvin@example.com');
    await sql.run('UPDATE devices SET name = ? WHERE id = ?', 'd\u0000esk', ids.nulDevice);
    await sql.run('UPDATE devices SET name = ? WHERE id = ?', '\ud800', ids.sameNames[0]);
    await sql.run('UPDATE devices SET name = ? WHERE id = ?', '\ud801', ids.sameNames[1]);
  } finally {
    await sql.close();
  }
  return {
    token,
    ids,
    // admin, nul, 2 twins, good, names, kelvin; 6 devices; 3 rules; 2 tokens.
    listed: { users: 7, devices: 6, rules: 3, tokens: 2 },
    kept: { users: 4, devices: 2, rules: 2, tokens: 1 },
  };
}

/** The `warning: left out ...` lines a copy of plantSqliteSource's database prints, sorted. */
export function expectedCopyWarnings(ids: PlantedSource['ids']): string[] {
  return [
    `warning: left out user ${ids.nulUser}: its email holds a NUL or a lone UTF-16 surrogate; with its device ${ids.nulUserDevice} and rule ${ids.nulUserRule} and token ${ids.nulUserToken}`,
    `warning: left out user ${ids.twins[0]}: its email reads back the same as that of user ${ids.twins[1]}`,
    `warning: left out user ${ids.twins[1]}: its email reads back the same as that of user ${ids.twins[0]}`,
    `warning: left out device ${ids.nulDevice} of user ${ids.good}: its name holds a NUL or a lone UTF-16 surrogate`,
    `warning: left out device ${ids.sameNames[0]} of user ${ids.sameNameOwner}: its name reads back the same as that of device ${ids.sameNames[1]}`,
    `warning: left out device ${ids.sameNames[1]} of user ${ids.sameNameOwner}: its name reads back the same as that of device ${ids.sameNames[0]}`,
  ].sort();
}
