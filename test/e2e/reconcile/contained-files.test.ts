/**
 * What a desired state makes netform read is contained (security review F2, F7): secret files,
 * desired-state files and cdk.tf.json are resolved, symlinks included, before the repository
 * check; only regular files are read, up to a size bound; a saved plan's secrets are read within
 * the repository apply runs in. The CLI runs as a real process against a real server, so that a
 * FIFO that blocked would end the run by the runner's kill (a failed assertion), not hang the file.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { describeResult, serverState, wgKey } from '../../helpers/workspace.js';

let server: TestServer;
/** A repository (its `.git` is all netform looks for), and a folder outside it. */
let repo: string;
let outside: string;
let socket: Server;
/** A 44-character secret of the machine, outside the repository: it must never be read. */
const MACHINE_KEY = randomBytes(32).toString('base64');
const OUTSIDE_YAML_KEY = `planted-${randomBytes(4).toString('hex')}.example.com`;
/** Bounds a run that should be prompt; a run killed at the bound has code null. */
const PROMPT_MS = 20_000;

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

/** `netform ARGS` in `cwd` against the test server, bounded so that a blocked read fails the test. */
function netform(args: string[], cwd: string, input?: string): Promise<CliResult> {
  return runCli(args, {
    cwd,
    input,
    timeoutMs: PROMPT_MS,
    env: { NETFORM_URL: server.url, NETFORM_TOKEN: server.token, NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL },
  });
}

function device(name: string, psk: string): string {
  return `      - { name: ${name}, public_key: "${wgKey()}", preshared_key: { file: ${psk} } }\n`;
}

function userWithDevices(email: string, ...devices: string[]): string {
  return `version: 1\nusers:\n  - email: ${email}\n    devices:\n${devices.join('')}`;
}

/** No output of any run shows the outside secret or the outside file's keys. */
function expectNothingLeaked(...results: CliResult[]): void {
  for (const r of results) {
    const all = r.stdout + r.stderr;
    expect(all.includes(MACHINE_KEY), describeResult(r)).toBe(false);
    expect(all.includes(OUTSIDE_YAML_KEY), describeResult(r)).toBe(false);
  }
}

beforeAll(async () => {
  server = await startTestServer();
  repo = mkdtempSync(join(tmpdir(), 'netform-contained-repo-'));
  outside = mkdtempSync(join(tmpdir(), 'netform-contained-outside-'));
  mkdirSync(join(repo, '.git'));
  write(join(outside, 'wg-private.key'), `${MACHINE_KEY}\n`);
  write(join(outside, 'outside.yaml'), `version: 1\n${OUTSIDE_YAML_KEY}: true\nusers: [{ email: x@example.com }]\n`);
  write(
    join(outside, 'stack', 'cdk.tf.json'),
    JSON.stringify({ '//': { metadata: { version: '0.21.0' } }, [OUTSIDE_YAML_KEY]: {} }),
  );
  socket = createServer();
  await new Promise<void>((resolve) => socket.listen(join(repo, 'secrets.sock'), resolve));
});

afterAll(async () => {
  await new Promise((resolve) => socket?.close(resolve));
  await server?.stop();
  for (const dir of [repo, outside]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('secret files (F2, F7)', { timeout: 60_000 }, () => {
  it('refuses a symlinked secret file and a symlinked folder that lead outside the repository, in validate and apply', async () => {
    const dir = join(repo, 'f2');
    mkdirSync(join(dir, 'secrets'), { recursive: true });
    symlinkSync(join(outside, 'wg-private.key'), join(dir, 'secrets', 'laptop.psk'));
    symlinkSync(outside, join(dir, 'secrets', 'outdir'));
    write(
      join(dir, 'netform.yaml'),
      userWithDevices(
        'mallory@example.com',
        device('laptop', 'secrets/laptop.psk'),
        device('phone', 'secrets/outdir/wg-private.key'),
      ),
    );
    const validated = await netform(['validate', '-f', 'f2'], repo);
    expect(validated.code, describeResult(validated)).toBe(1);
    expect(validated.stderr).toMatch(
      /f2\/netform\.yaml:5:\d+: users\[0\]\.devices\[0\]\.preshared_key: secret file secrets\/laptop\.psk is a symlink to a file outside the repository \(\.\); keep secret files inside it, or use \{ env: NAME \}\n/,
    );
    expect(validated.stderr).toMatch(
      /users\[0\]\.devices\[1\]\.preshared_key: secret file secrets\/outdir\/wg-private\.key is in a symlinked folder that leads outside the repository \(\.\)/,
    );
    const applied = await netform(['apply', '-f', 'f2', '--yes'], repo);
    expect(applied.code, describeResult(applied)).toBe(1);
    expect(applied.stderr).toContain('secret file secrets/laptop.psk is a symlink to a file outside the repository');
    const state = await serverState(server);
    expect(state.users.map((u) => u.email)).not.toContain('mallory@example.com');
    expect(state.devices).toEqual([]);
    expectNothingLeaked(validated, applied);
  });

  it('refuses a FIFO, /dev/zero through a symlink, a socket, a folder and a file over 64 KiB, promptly', async () => {
    const dir = join(repo, 'f7');
    mkdirSync(join(dir, 'secrets', 'folder'), { recursive: true });
    mkfifo(join(dir, 'secrets', 'fifo.psk'));
    symlinkSync('/dev/zero', join(dir, 'secrets', 'zero.psk'));
    symlinkSync(join(repo, 'secrets.sock'), join(dir, 'secrets', 'socket.psk'));
    write(join(dir, 'secrets', 'large.psk'), 'A'.repeat(64 * 1024 + 1));
    write(
      join(dir, 'netform.yaml'),
      userWithDevices(
        'f7@example.com',
        device('fifo', 'secrets/fifo.psk'),
        device('zero', 'secrets/zero.psk'),
        device('socket', 'secrets/socket.psk'),
        device('folder', 'secrets/folder'),
        device('large', 'secrets/large.psk'),
      ),
    );
    for (const command of ['validate', 'plan']) {
      const result = await netform([command, '-f', 'f7'], repo);
      // Killed at the bound (a blocked read) would be code null.
      expect(result.code, describeResult(result)).toBe(1);
      const errors = result.stderr;
      expect(errors).toContain(
        'devices[0].preshared_key: secret file secrets/fifo.psk is not a regular file (it is a FIFO)',
      );
      expect(errors).toContain(
        'devices[1].preshared_key: secret file secrets/zero.psk is a symlink to a file outside the repository (.)',
      );
      expect(errors).toContain(
        'devices[2].preshared_key: secret file secrets/socket.psk is not a regular file (it is a socket)',
      );
      expect(errors).toContain(
        'devices[3].preshared_key: secret file secrets/folder is not a regular file (it is a folder)',
      );
      expect(errors).toContain(
        'devices[4].preshared_key: secret file secrets/large.psk is larger than 64 KiB, the limit for a secret file',
      );
      expect(errors).not.toContain('AAAA');
      // In validate too these are errors, not the warnings of an absent secret.
      expect(errors).not.toContain('warning');
    }
  });

  it('reads a secret file through a symlink that stays inside the repository', async () => {
    const dir = join(repo, 'inside');
    const psk = wgKey();
    write(join(repo, 'shared', 'v2.psk'), `${psk}\n`);
    mkdirSync(join(dir, 'secrets'), { recursive: true });
    symlinkSync(join('..', '..', 'shared', 'v2.psk'), join(dir, 'secrets', 'current.psk'));
    symlinkSync(join(repo, 'shared'), join(dir, 'shared'));
    write(
      join(dir, 'netform.yaml'),
      userWithDevices(
        'inside@example.com',
        device('laptop', 'secrets/current.psk'),
        device('phone', 'shared/v2.psk'),
        device('tablet', '../shared/v2.psk'),
      ),
    );
    const applied = await netform(['apply', '-f', 'inside', '--yes'], repo);
    expect(applied.code, describeResult(applied)).toBe(0);
    const state = await serverState(server);
    const owner = state.users.find((u) => u.email === 'inside@example.com');
    const devices = state.devices.filter((d) => d.user_id === owner.id);
    expect(devices.map((d) => d.preshared_key)).toEqual([psk, psk, psk]);
  });

  it('outside a git repository, keeps secret files in the folder of the file that names them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netform-contained-nogit-'));
    try {
      write(join(dir, 'outer.psk'), `${wgKey()}\n`);
      write(join(dir, 'desired', 'secrets', 'ok.psk'), `${wgKey()}\n`);
      write(
        join(dir, 'desired', 'netform.yaml'),
        userWithDevices('nogit@example.com', device('a', 'secrets/ok.psk'), device('b', '../outer.psk')),
      );
      const result = await netform(['validate', '-f', join(dir, 'desired')], repo);
      expect(result.code, describeResult(result)).toBe(1);
      expect(result.stderr).toContain(
        'devices[1].preshared_key: secret file ../outer.psk is outside the folder of the file that names it',
      );
      expect(result.stderr).toContain('not in a git repository');
      expect(result.stderr).not.toContain('devices[0]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('desired-state files (F2)', { timeout: 60_000 }, () => {
  it('does not read a symlinked YAML file, folder or cdk.tf.json that leads outside, and never prints its keys', async () => {
    const dir = join(repo, 'yaml');
    write(join(dir, 'a.yaml'), 'version: 1\nusers: [{ email: a@example.com }]\n');
    symlinkSync(join(outside, 'outside.yaml'), join(dir, 'b.yaml'));
    symlinkSync(outside, join(repo, 'linked'));
    symlinkSync(join(outside, 'stack', 'cdk.tf.json'), join(repo, 'cdk.tf.json'));
    mkdirSync(join(repo, 'stack'));
    symlinkSync(join(outside, 'stack', 'cdk.tf.json'), join(repo, 'stack', 'cdk.tf.json'));

    const folder = await netform(['validate', '-f', 'yaml'], repo);
    expect(folder.code, describeResult(folder)).toBe(1);
    expect(folder.stderr).toContain('yaml/b.yaml: is a symlink to a file outside the repository (.); it is not read\n');
    const file = await netform(['validate', '-f', 'yaml/b.yaml'], repo);
    expect(file.code, describeResult(file)).toBe(1);
    expect(file.stderr).toContain('yaml/b.yaml: is a symlink to a file outside the repository (.); it is not read\n');
    const linked = await netform(['validate', '-f', 'linked'], repo);
    expect(linked.code, describeResult(linked)).toBe(1);
    expect(linked.stderr).toContain('linked: is a symlink to a folder outside the repository (.); it is not read\n');
    const stackFile = await netform(['validate', '-f', 'cdk.tf.json'], repo);
    expect(stackFile.code, describeResult(stackFile)).toBe(1);
    expect(stackFile.stderr).toContain(
      'cdk.tf.json: is a symlink to a file outside the repository (.); it is not read\n',
    );
    const stackFolder = await netform(['plan', '-f', 'stack'], repo);
    expect(stackFolder.code, describeResult(stackFolder)).toBe(1);
    expect(stackFolder.stderr).toContain(
      'stack/cdk.tf.json: is a symlink to a file outside the repository (.); it is not read\n',
    );
    expectNothingLeaked(folder, file, linked, stackFile, stackFolder);
  });

  it('refuses a FIFO and a file over 256 MiB among the YAML files, promptly and without reading them', async () => {
    const dir = join(repo, 'special');
    write(join(dir, 'a.yaml'), 'version: 1\nusers: [{ email: a@example.com }]\n');
    mkfifo(join(dir, 'pipe.yaml'));
    // Sparse: 256 MiB and one byte to the file system, no disk space.
    write(join(dir, 'big.yaml'), '');
    truncateSync(join(dir, 'big.yaml'), 256 * 1024 * 1024 + 1);
    for (const command of ['validate', 'plan', 'drift']) {
      const result = await netform([command, '-f', 'special'], repo);
      expect(result.code, describeResult(result)).toBe(1);
      expect(result.stderr).toContain('special/pipe.yaml: is not a regular file (it is a FIFO)\n');
      expect(result.stderr).toContain('special/big.yaml: is larger than 256 MiB, the limit for the desired state\n');
    }
  });
});

describe('saved plans', { timeout: 60_000 }, () => {
  it('resolve secret files against the repository apply runs in, never a folder the plan names', async () => {
    // Files outside the repository: planned from inside it, the plan names ../<folder>/desired.
    const elsewhere = mkdtempSync(join(tmpdir(), 'netform-contained-elsewhere-'));
    try {
      const psk = wgKey();
      write(join(elsewhere, 'desired', 'secrets', 'a.psk'), `${psk}\n`);
      write(
        join(elsewhere, 'desired', 'netform.yaml'),
        userWithDevices('saved@example.com', device('a', 'secrets/a.psk')),
      );
      const planPath = join(elsewhere, 'plan.json');
      const planned = await netform(['plan', '-f', join(elsewhere, 'desired'), '-o', planPath], repo);
      expect(planned.code, describeResult(planned)).toBe(2);

      // Applied from the repository: the secret lies outside it. Refused before any write.
      const refused = await netform(['apply', planPath], repo);
      expect(refused.code, describeResult(refused)).toBe(1);
      expect(refused.stderr).toContain("the saved plan's secrets cannot be read here; nothing was changed");
      expect(refused.stderr).toContain('secret file secrets/a.psk is outside the repository (.)');
      expect((await serverState(server)).users.map((u) => u.email)).not.toContain('saved@example.com');

      // Applied where the files are (no git: that folder is the boundary), the same plan works.
      const applied = await netform(['apply', planPath], elsewhere);
      expect(applied.code, describeResult(applied)).toBe(0);
      const state = await serverState(server);
      expect(state.devices.find((d) => d.name === 'a')?.preshared_key).toBe(psk);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
