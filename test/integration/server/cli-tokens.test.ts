/** `netform server token ...` on database files, through the real CLI. */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestServer } from '../../helpers/server.js';
import { useDatabaseFiles } from '../../helpers/database-files.js';

const TOKEN = /^nf_[A-Za-z0-9_-]{43}$/;

const { freshDb, servers } = useDatabaseFiles();

describe('netform server token', () => {
  it('create on an empty database makes the admin, prints only the token on stdout, says so on stderr', async () => {
    const db = freshDb();
    const first = await runCli(['server', 'token', 'create', '--email', 'Root@Example.com', '--db', db]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^nf_[A-Za-z0-9_-]{43}\n$/);
    expect(first.stderr).toContain('created admin Root@Example.com');
    const second = await runCli([
      'server',
      'token',
      'create',
      '--email',
      'root@example.com',
      '--db',
      db,
      '--days',
      '1',
    ]);
    expect(second.code).toBe(0);
    expect(second.stdout.trim()).toMatch(TOKEN);
    expect(second.stdout).not.toBe(first.stdout);
    expect(second.stderr).not.toContain('created admin');
  });

  it('issued tokens work against a running server; list never shows values; revoke stops a token', async () => {
    const server = await startTestServer();
    servers.push(server);
    const made = await runCli(['server', 'token', 'create', '--email', 'admin@example.com', '--db', server.dbPath]);
    const token = made.stdout.trim();
    expect((await server.api('GET', '/v0/users', undefined, { token })).status).toBe(200);

    const listed = await runCli(['server', 'token', 'list', '--db', server.dbPath]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('admin@example.com');
    expect(listed.stdout).not.toContain(token.slice(3));
    expect(listed.stdout).not.toContain(server.token.slice(3));
    const json = JSON.parse((await runCli(['server', 'token', 'list', '--json', '--db', server.dbPath])).stdout) as {
      id: string;
      status: string;
      email: string;
    }[];
    expect(json).toHaveLength(2);
    expect(json.every((t) => t.status === 'live' && t.email === 'admin@example.com')).toBe(true);
    expect(JSON.stringify(json)).not.toContain(token.slice(3));

    const newest = json[1]!;
    const revoked = await runCli(['server', 'token', 'revoke', newest.id, '--db', server.dbPath]);
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toContain(`revoked token ${newest.id}`);
    expect((await server.api('GET', '/v0/users', undefined, { token })).body).toEqual({
      errors: { auth: 'no_resource_found' },
    });
    expect((await server.api('GET', '/v0/users')).status).toBe(200);
    const after = JSON.parse((await runCli(['server', 'token', 'list', '--json', '--db', server.dbPath])).stdout) as {
      id: string;
      status: string;
    }[];
    expect(after.find((t) => t.id === newest.id)!.status).toBe('revoked');
    expect((await runCli(['server', 'token', 'revoke', newest.id, '--db', server.dbPath])).stderr).toContain(
      'already revoked',
    );
    const unknown = await runCli([
      'server',
      'token',
      'revoke',
      '7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70',
      '--db',
      server.dbPath,
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no token with id');
  });

  it('refuses an unprivileged user with a clear message and prints no token', async () => {
    const server = await startTestServer();
    servers.push(server);
    await server.api('POST', '/v0/users', { user: { email: 'plain@example.com' } });
    const res = await runCli(['server', 'token', 'create', '--email', 'plain@example.com', '--db', server.dbPath]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      'error: plain@example.com is an unprivileged user; only admins get API tokens (make them an admin through /v0 first)\n',
    );
  });

  it.each([
    [['--email', 'not-an-email'], 'error: --email "not-an-email" is invalid'],
    [['--email', 'a@example.com', '--days', '0'], 'error: --days must be a whole number from 1 to 90'],
    [['--email', 'a@example.com', '--days', '91'], 'error: --days must be a whole number from 1 to 90'],
    [['--email', 'a@example.com', '--days', 'soon'], "error: option '--days <n>' argument 'soon' is invalid"],
  ])('refuses %j', async (args, message) => {
    const res = await runCli(['server', 'token', 'create', ...args, '--db', freshDb()]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(message);
  });

  it('at most 25 live tokens per user; revoking one makes room', async () => {
    const db = freshDb();
    const { issueToken } = await import('../../../server/index.js');
    for (let i = 0; i < 25; i++) await issueToken({ dbPath: db, email: 'many@example.com' });
    const refused = await runCli(['server', 'token', 'create', '--email', 'many@example.com', '--db', db]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('token limit of 25 reached');
    const list = JSON.parse((await runCli(['server', 'token', 'list', '--json', '--db', db])).stdout) as {
      id: string;
    }[];
    expect((await runCli(['server', 'token', 'revoke', list[0]!.id, '--db', db])).code).toBe(0);
    expect((await runCli(['server', 'token', 'create', '--email', 'many@example.com', '--db', db])).code).toBe(0);
  });

  it('reads the database path from NETFORM_DB', async () => {
    const db = freshDb();
    const res = await runCli(['server', 'token', 'create', '--email', 'env@example.com'], { env: { NETFORM_DB: db } });
    expect(res.code).toBe(0);
    const list = await runCli(['server', 'token', 'list', '--db', db]);
    expect(list.stdout).toContain('env@example.com');
  });
});
