/**
 * `netform acknowledge` against a real server, in-process: it writes the entry with the live value
 * into the desired-state files, keeps every other byte (comments included), says which file it
 * wrote, and refuses an unknown key, a date in the past and a difference that does not exist.
 * An acknowledged broad live rule outside manage.rules no longer counts as access drift.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import {
  create,
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

const BOB_KEY = wgKey();

const SETTINGS = `# Team settings: reviewed by the network team.
version: 2
settings:
  prune: false   # keep what we do not declare
  manage: { users: ["*@corp.test"], rules: ["10.0.0.0/8"] }
rules:
  # Nothing inside the managed block unless a user's own rule says so.
  - { action: drop, destination: 10.0.0.0/8 }
`;

const BOB = `version: 2
# Bob's laptop; the endpoint is the office gateway.
users:
  - email: bob@corp.test
    devices:
      - name: laptop
        public_key: "${BOB_KEY}"
        endpoint: "198.51.100.1:51820"   # office
`;

describe('netform acknowledge', () => {
  let server: TestServer;
  let ws: Workspace;
  let dir: string;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      ws.write('repo/settings.yaml', SETTINGS);
      ws.write('repo/bob.yaml', BOB);
      dir = ws.path('repo');
      const r = await netform(s, ['apply', '-f', dir, '--yes']);
      expect(r.code, describeResult(r)).toBe(0);
    },
  );

  it('writes the live value into the file declaring the object, keeping every other byte', async () => {
    const laptop = (await serverState(server)).devices.find((d) => d.name === 'laptop');
    const res = await fetch(`${server.url}/v0/devices/${laptop.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ device: { endpoint: '203.0.113.9:51820' } }),
    });
    expect(res.status).toBe(200);
    const before = await netform(server, ['drift', '-f', dir]);
    expect(before.code, describeResult(before)).toBe(2);

    const args = ['acknowledge', 'device:bob@corp.test/laptop', 'endpoint', '-f', dir];
    const ack = await netform(server, [...args, '--until', '2099-12-31', '--reason', 'moved during incident 4711']);
    expect(ack.code, describeResult(ack)).toBe(0);
    expect(ack.stdout).toMatch(
      /^acknowledged device:bob@corp\.test\/laptop endpoint until 2099-12-31 \(moved during incident 4711\): written to .*bob\.yaml\n$/,
    );
    const written = readFileSync(ws.path('repo/bob.yaml'), 'utf8');
    expect(written).toBe(
      `${BOB}acknowledged:
  - key: "device:bob@corp.test/laptop"
    field: "endpoint"
    value: "203.0.113.9:51820"
    reason: "moved during incident 4711"
    until: "2099-12-31"
`,
    );
    expect(readFileSync(ws.path('repo/settings.yaml'), 'utf8')).toBe(SETTINGS);
    const after = await netform(server, ['drift', '-f', dir]);
    expect(after.code, describeResult(after)).toBe(0);
    expect(after.stdout).toContain('acknowledged until 2099-12-31 (moved during incident 4711)');

    // Nothing differs any more: nothing to acknowledge.
    const again = await netform(server, [...args, '--until', '2099-12-31', '--reason', 'again']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('nothing differs from the files now: nothing to acknowledge');
    expect(readFileSync(ws.path('repo/bob.yaml'), 'utf8')).toBe(written);
  });

  it('refuses an unknown key, an until in the past, and a field that does not differ', async () => {
    const unknown = await netform(server, [
      'acknowledge',
      'user:nobody@corp.test',
      '-f',
      dir,
      '--until',
      '2099-01-01',
      '--reason',
      'x',
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('user:nobody@corp.test: no such object on the server');
    const past = await netform(server, [
      'acknowledge',
      'user:bob@corp.test',
      'role',
      '-f',
      dir,
      '--until',
      '2001-01-01',
      '--reason',
      'x',
    ]);
    expect(past.code).toBe(1);
    expect(past.stderr).toContain('--until 2001-01-01 is not in the future');
    const same = await netform(server, [
      'acknowledge',
      'user:bob@corp.test',
      'role',
      '-f',
      dir,
      '--until',
      '2099-01-01',
      '--reason',
      'x',
    ]);
    expect(same.code).toBe(1);
    expect(same.stderr).toContain('user:bob@corp.test role: nothing differs from the files now');
  });

  it('silences a broad live rule outside manage.rules, which otherwise counts as access drift', async () => {
    await create(server, 'rules', { action: 'accept', destination: '10.0.0.0/7' });
    const drift = await netform(server, ['drift', '-f', dir]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain(
      'rule accept 10.0.0.0/7 (global, outside manage.rules) decides packets inside 10.0.0.0/8',
    );

    const settings = readFileSync(ws.path('repo/settings.yaml'), 'utf8');
    const bob = readFileSync(ws.path('repo/bob.yaml'), 'utf8');
    const ack = await netform(server, [
      'acknowledge',
      'rule:*|accept|10.0.0.0/7|any',
      '-f',
      dir,
      '--until',
      '2099-06-30T12:00:00Z',
      '--reason',
      'vendor VPN until the migration',
    ]);
    expect(ack.code, describeResult(ack)).toBe(0);
    // An acknowledged: list exists already (in bob.yaml): the entry joins it.
    expect(ack.stdout).toContain('written to');
    expect(ack.stdout).toContain('bob.yaml');
    expect(readFileSync(ws.path('repo/settings.yaml'), 'utf8')).toBe(settings);
    const added = readFileSync(ws.path('repo/bob.yaml'), 'utf8');
    expect(added.startsWith(bob)).toBe(true);
    expect(added.slice(bob.length)).toMatch(
      /^ {2}- key: "rule:\*\|accept\|10\.0\.0\.0\/7\|any"\n {4}field: "\*"\n {4}fingerprint: "sha256:[0-9a-f]{32}"\n {4}reason: "vendor VPN until the migration"\n {4}until: "2099-06-30T12:00:00Z"\n$/,
    );

    const after = await netform(server, ['drift', '-f', dir]);
    expect(after.code, describeResult(after)).toBe(0);
    expect(after.stdout).not.toContain('decides packets inside');
    expect(after.stdout).toContain(
      'rule accept 10.0.0.0/7 (global): acknowledged until 2099-06-30T12:00:00Z (vendor VPN until the migration)',
    );
    const later = await netform(server, ['drift', '-f', dir, '--now', '2099-07-01']);
    expect(later.code, describeResult(later)).toBe(2);
    expect(later.stdout).toContain('acknowledgement expired 2099-06-30T12:00:00Z');
  });
});
