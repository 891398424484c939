/**
 * The model's refusals as the command line prints them, byte for byte: the model returns a code
 * and its values, and src/views/model-*.ts words it where the error is printed. run(argv, io) on
 * the sources, no server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../../../src/cli/io.js';
import { run } from '../../../src/cli/run.js';
import { OpError } from '../../../src/ops/errors.js';
import { readApprovals } from '../../../src/ops/owners.js';
import { opErrorText } from '../../../src/views/op-errors.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-model-words-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function netform(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await run(argv, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

const USERS = 'version: 1\nsettings: { manage: { users: ["*@words.test"] } }\nusers:\n';

describe('instants', () => {
  it('--now names the day that does not exist', async () => {
    const path = file('now.yaml', `${USERS}  - email: a@words.test\n`);
    const r = await netform('validate', '-f', path, '--now', '2026-02-30');
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('--now: no such day: 2026-02-30 (got 2026-02-30)');
  });

  it('expires: names the file, the line and what is expected', async () => {
    const path = file('expires.yaml', `${USERS}  - email: a@words.test\n    expires: "2026-12-31T18:00"\n`);
    const r = await netform('validate', '-f', path);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /expires\.yaml:5:\d+: .*expires: expected a date \(2026-12-31\) or a date-time with an offset \(2026-12-31T18:00:00Z\)\n/,
    );
  });
});

describe('tunnel networks', () => {
  it('names the family a block must be, and the longest prefix that leaves room for devices', async () => {
    const path = file(
      'tunnel.yaml',
      'version: 1\nsettings:\n  tunnel_networks: { ipv4: "fd00::/64", ipv6: "fd00::/127" }\nusers: []\n',
    );
    const r = await netform('validate', '-f', path);
    expect(r.code).toBe(1);
    expect(r.err).toContain('settings.tunnel_networks.ipv4: must be an IPv4 CIDR block such as 10.3.2.0/24\n');
    expect(r.err).toContain('settings.tunnel_networks.ipv6: must leave room for devices (prefix at most /126)\n');
  });
});

describe('email globs', () => {
  it('names the reversed range, in the files (manage.users, owners) and in --except', async () => {
    const path = file(
      'globs.yaml',
      'version: 1\nsettings:\n  manage: { users: ["[z-a]@words.test"] }\n  owners:\n    - { users: ["[z-a]@words.test"], reviewers: ["@org/team"] }\nusers: []\n',
    );
    const r = await netform('validate', '-f', path);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      'settings.manage.users[0]: has the range z-a, whose ends are in the wrong order (an email glob)\n',
    );
    expect(r.err).toContain('users[0]: the email glob has the range z-a, whose ends are in the wrong order\n');
    const except = await netform(
      'check',
      'no-access-to',
      '10.0.0.0/8',
      '-f',
      file('ok.yaml', `${USERS}  - email: a@words.test\n`),
      '--except',
      '[z-a]@x',
    );
    expect(except.err).toContain('--except [z-a]@x: has the range z-a, whose ends are in the wrong order\n');
  });
});

describe('reviewer handles', () => {
  it('names a handle of the wrong form and a team without its @', async () => {
    const path = file(
      'handles.yaml',
      'version: 1\nsettings:\n  owners:\n    - { users: ["*@words.test"], reviewers: ["not a handle", "org/team"] }\nusers: []\n',
    );
    const r = await netform('validate', '-f', path);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      'settings.owners[0].reviewers[0]: "not a handle" is not a reviewer handle: write @org/team, @login or login (letters, digits, -; a team also _ and .)\n',
    );
    expect(r.err).toContain('settings.owners[0].reviewers[1]: "org/team" is a team: write it with its @ (@org/team)\n');
  });
});

describe('files that cannot be read', () => {
  it('--approvals names the path and why: a device, a missing file, one over its bound', () => {
    const said = (path: string): string => {
      try {
        readApprovals(path);
      } catch (error) {
        if (error instanceof OpError) return opErrorText(error);
        throw error;
      }
      throw new Error('read, not refused');
    };
    expect(said('/dev/zero')).toBe('--approvals /dev/zero: is not a regular file (it is a device)');
    expect(said(join(dir, 'absent.json'))).toBe(`--approvals ${join(dir, 'absent.json')}: no such file`);
    const big = file('big.json', ' '.repeat(64 * 1024 + 1));
    expect(said(big)).toBe(`--approvals ${big}: is larger than 64 KiB, the limit for an approvals file`);
  });

  it('--token-file names the flag, the path and why', async () => {
    const path = file('plain.yaml', `${USERS}  - email: a@words.test\n`);
    const r = await netform('plan', '-f', path, '--url', 'http://127.0.0.1:9', '--token-file', dir);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`--token-file: ${dir} is not a regular file (it is a folder)`);
  });
});
