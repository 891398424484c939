/** `netform export -o DIR` and `--split`: files written safely, never overwritten by surprise, round trip clean. */
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { SEEDED_COUNTS, startSeededServer, type SeededServer } from '../../helpers/export-seed.js';

let seeded: SeededServer;

beforeAll(async () => {
  seeded = await startSeededServer();
});

afterAll(async () => {
  await seeded.close();
});

const cli = (args: string[]) => runCli(args, { env: seeded.env, cwd: seeded.dir });

describe('netform export -o DIR', () => {
  it('writes one file, refuses to overwrite it without --force, and plans with no changes', async () => {
    const exported = await cli(['export', '-o', 'repo']);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe('');
    expect(exported.stderr).toContain(
      `exported ${SEEDED_COUNTS.users} users, ${SEEDED_COUNTS.devices} devices, ${SEEDED_COUNTS.rules} rules to 1 file(s) in repo`,
    );
    expect(await readdir(join(seeded.dir, 'repo'))).toEqual(['netform.yaml']);
    const text = await readFile(join(seeded.dir, 'repo', 'netform.yaml'), 'utf8');
    seeded.expectNoSecrets(text);
    // The schema comment points at the shipped schema, relative to the file.
    const schemaRef = /^# yaml-language-server: \$schema=(\S+)$/m.exec(text)![1]!;
    expect(existsSync(resolve(seeded.dir, 'repo', schemaRef))).toBe(true);

    const plan = await cli(['plan', '-f', 'repo']);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);

    await writeFile(join(seeded.dir, 'repo', 'netform.yaml'), '# edited by hand\n' + text);
    const again = await cli(['export', '-o', 'repo']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/netform\.yaml already exist\(s\) in .*nothing was written\. Pass --force/);
    expect(await readFile(join(seeded.dir, 'repo', 'netform.yaml'), 'utf8')).toBe('# edited by hand\n' + text);

    const forced = await cli(['export', '-o', 'repo', '--force']);
    expect(forced.code).toBe(0);
    expect(await readFile(join(seeded.dir, 'repo', 'netform.yaml'), 'utf8')).toBe(text);
    expect(await readdir(join(seeded.dir, 'repo'))).toEqual(['netform.yaml']);
  });

  it('refuses a symlink already at the path, dangling or not, and leaves its target alone; --force replaces the link', async () => {
    const victim = join(seeded.dir, 'victim.txt');
    await writeFile(victim, 'keep me\n');
    for (const [folder, target] of [
      ['linked', victim],
      ['dangling', join(seeded.dir, 'nowhere', 'x.yaml')],
    ] as const) {
      await mkdir(join(seeded.dir, folder));
      await symlink(target, join(seeded.dir, folder, 'netform.yaml'));
      const refused = await cli(['export', '-o', folder]);
      expect(refused.code, refused.stderr).toBe(1);
      expect((await lstat(join(seeded.dir, folder, 'netform.yaml'))).isSymbolicLink()).toBe(true);
    }
    expect(await readFile(victim, 'utf8')).toBe('keep me\n');
    expect(existsSync(join(seeded.dir, 'nowhere'))).toBe(false);
    const forced = await cli(['export', '-o', 'linked', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await lstat(join(seeded.dir, 'linked', 'netform.yaml'))).isSymbolicLink()).toBe(false);
    expect(await readFile(victim, 'utf8')).toBe('keep me\n');
  });

  it('splits into one file per user plus global rules and the configuration, with names safe for any email, and plans with no changes', async () => {
    const exported = await cli(['export', '-o', 'split', '--split']);
    expect(exported.code).toBe(0);
    const names = (await readdir(join(seeded.dir, 'split'))).sort();
    expect(names).toEqual([
      'admin@example.com.yaml',
      'alice@example.com.yaml',
      'carol@example.com.yaml',
      'configuration.yaml',
      'global-rules.yaml',
      'o%27brien+vpn@example.com.yaml',
      'second.admin@example.com.yaml',
      'team%2Fops@example.com.yaml',
    ]);
    expect(names).toHaveLength(SEEDED_COUNTS.users + 2);
    for (const name of names) seeded.expectNoSecrets(await readFile(join(seeded.dir, 'split', name), 'utf8'));
    const plan = await cli(['plan', '-f', 'split']);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);

    // A stale file in the folder is pointed out: plan would read it too.
    await writeFile(join(seeded.dir, 'split', 'gone@example.com.yaml'), 'version: 1\n');
    const forced = await cli(['export', '-o', 'split', '--split', '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toMatch(/warning: split also holds gone@example\.com\.yaml/);
  });

  it('refuses --split without -o', async () => {
    const result = await cli(['export', '--split']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/--split writes one file per user: give the folder with -o DIR/);
  });
});
