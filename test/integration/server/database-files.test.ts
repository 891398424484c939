/**
 * The database file holds preshared keys and token hashes: it and its -wal/-shm files are made
 * with mode 0600 whatever the umask, and only `serve` and `server token create` create a missing
 * one. The modes through the real CLI, with the umask opened wide (000) so that a missing mode
 * would show; the rest through run(argv, io) in-process, but for one refusal kept on the process's
 * path (the bin's exit code and stderr).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtCli, runCli, runCliProcess, type CliResult } from '../../helpers/cli.js';
import { useDatabaseFiles } from '../../helpers/database-files.js';

const { freshDb, createdDb } = useDatabaseFiles();

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** The CLI under `umask 000`, so every mode bit not asked for explicitly would be set. */
function runCliOpenUmask(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const quoted = [process.execPath, builtCli(), ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const child = spawn('sh', ['-c', `umask 000 && exec ${quoted}`], { env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('database files', () => {
  it('token create makes a missing database with mode 0600 and says so in one stderr line', async () => {
    const db = freshDb();
    const first = await runCliOpenUmask(['server', 'token', 'create', '--email', 'root@example.com', '--db', db]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^nf_\S+\n$/);
    const lines = first.stderr.split('\n').filter((l) => l.startsWith('created a new database'));
    expect(lines).toEqual([`created a new database at ${db}`]);
    expect(modeOf(db)).toBe(0o600);

    const second = await runCliOpenUmask(['server', 'token', 'create', '--email', 'root@example.com', '--db', db]);
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain('created a new database');
    // No -wal/-shm left behind once the command is done, and none with a looser mode.
    for (const name of readdirSync(dirname(db))) expect(modeOf(`${dirname(db)}/${name}`), name).toBe(0o600);
  });

  it('the full path is named when --db is relative', async () => {
    const db = freshDb();
    const res = await runCli(['server', 'token', 'create', '--email', 'root@example.com', '--db', 'rel.db'], {
      cwd: dirname(db),
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`created a new database at ${dirname(db)}/rel.db\n`);
  });

  it('a refused token request (bad email or days) creates no database', async () => {
    const db = freshDb();
    const res = await runCli(['server', 'token', 'create', '--email', 'nope', '--db', db]);
    expect(res.code).toBe(1);
    expect(existsSync(db)).toBe(false);
  });

  it.each([
    // One as a process of the built CLI, the others in-process: the same refusal either way.
    [['token', 'list'], runCliProcess],
    [['token', 'revoke', '7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70'], runCli],
    [['defaults', 'show'], runCli],
    [['defaults', 'set', 'mtu', '1420'], runCli],
  ])('server %j refuses a missing database, naming its path, and creates nothing', async (args, runner) => {
    const db = freshDb();
    const res = await runner(['server', ...args, '--db', db]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      `error: no database at ${db} (check --db / NETFORM_DB); only "netform serve" and "netform server token create" create a new one\n`,
    );
    expect(readdirSync(dirname(db)).filter((n) => n.startsWith(db.split('/').pop()!))).toEqual([]);
  });

  it('the same commands work on an existing database', async () => {
    const db = await createdDb();
    expect((await runCli(['server', 'token', 'list', '--db', db])).code).toBe(0);
    expect((await runCli(['server', 'defaults', 'show', '--db', db])).code).toBe(0);
  });

  it('serve creates a missing database; the file, its WAL and shared-memory files are 0600 while it runs', async () => {
    const db = freshDb();
    const quoted = [process.execPath, builtCli(), 'serve', '--port', '0', '--db', db, '--log-level', 'silent']
      .map((a) => `'${a}'`)
      .join(' ');
    const child = spawn('sh', ['-c', `umask 000 && exec ${quoted}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => {
          out += c;
          if (out.includes('\n')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
      });
      expect(modeOf(db)).toBe(0o600);
      expect(modeOf(`${db}-wal`)).toBe(0o600);
      expect(modeOf(`${db}-shm`)).toBe(0o600);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });
});
