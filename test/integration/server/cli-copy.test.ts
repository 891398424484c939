/**
 * `netform server copy` between SQLite files when the source holds rows written before netform
 * refused NUL characters and lone surrogates (security review F9): the copy lands everything
 * else and names what it leaves out by id, instead of failing on a unique key. The copy into
 * PostgreSQL is in postgres-copy.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { startServer } from '../../../server/index.js';
import { runCli } from '../../helpers/cli.js';
import { expectedCopyWarnings, plantSqliteSource } from '../../helpers/planted-rows.js';
import { useDatabaseFiles } from '../../helpers/database-files.js';

const { freshDb } = useDatabaseFiles();

async function lists(location: string, token: string): Promise<Record<string, { id: string }[]>> {
  const server = await startServer({ dbPath: location, port: 0 });
  try {
    const out: Record<string, { id: string }[]> = {};
    for (const kind of ['users', 'devices', 'rules']) {
      const response = await fetch(`${server.url}/v0/${kind}`, { headers: { authorization: `Bearer ${token}` } });
      out[kind] = ((await response.json()) as { data: { id: string }[] }).data;
    }
    return out;
  } finally {
    await server.close();
  }
}

describe('netform server copy of rows stored before the string rules', () => {
  it('copies the rest in one transaction and names each row left out by id', async () => {
    const file = freshDb();
    const planted = await plantSqliteSource(file);
    const target = freshDb();
    const copied = await runCli(['server', 'copy', '--from', file, '--to', target]);
    expect(copied.code, copied.stderr).toBe(0);
    const { kept, ids } = planted;
    expect(copied.stdout).toMatch(
      new RegExp(
        `^copied ${kept.users} users, ${kept.devices} devices, ${kept.rules} rules, ${kept.tokens} tokens, \\d+ settings\\n$`,
      ),
    );
    const warnings = copied.stderr.split('\n').filter((line) => line.startsWith('warning: left out'));
    expect(warnings.sort()).toEqual(expectedCopyWarnings(ids));
    expect(copied.stderr).toContain('the rest is copied');
    // No value is quoted: only ids.
    expect(copied.stderr).not.toMatch(/[\u0000\ufffd]|twin\.example|desk/);

    const source = await lists(file, planted.token);
    const copy = await lists(target, planted.token);
    const leftOut = new Set([
      ids.nulUser,
      ...ids.twins,
      ids.nulUserDevice,
      ids.nulDevice,
      ...ids.sameNames,
      ids.nulUserRule,
    ]);
    for (const kind of ['users', 'devices', 'rules'])
      expect(copy[kind], kind).toEqual(source[kind]!.filter((row) => !leftOut.has(row.id)));
    // The Kelvin-sign user is copied as it is: storable, and still readable on the new server.
    expect(copy.users!.some((u) => u.id === ids.kelvin)).toBe(true);
  });
});
