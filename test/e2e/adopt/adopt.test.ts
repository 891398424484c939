/**
 * `netform adopt` against a real server: a repository of several teams' files, with comments,
 * anchors, flow and block styles, is applied; then each kind of hand change is made on the server
 * and adopted (or refused) as small edits. Afterwards `plan` is clean for the adopted objects,
 * and every other byte of the files is as it was.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
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

const K = { a1: wgKey(), a2: wgKey(), b1: wgKey(), c1: wgKey(), c2: wgKey(), d1: wgKey(), e1: wgKey(), f1: wgKey() };
const PSK = Buffer.alloc(32, 7).toString('base64');
const ENV = { BOB_PSK: PSK };

const TEAM_A = `version: 2
# Platform team. Keep this list short.
settings:
  manage: { users: ["*@adopt.test"], rules: ["10.50.0.0/16"] }
  protect: { users: ["root@adopt.test"] }

users:
  # Alice runs the on-call rota.
  - email: alice@adopt.test   # lead
    role: admin
    devices:
      - name: laptop
        public_key: "${K.a1}"
        mtu: 1400            # the VPN over hotel wifi
        dns: &office-dns [10.50.0.53, 10.50.0.54]
      - { name: phone, public_key: '${K.a2}', dns: *office-dns }

  - email: 'bob@adopt.test'
    devices:
      - name: desktop
        public_key: ${K.b1}
        preshared_key: { env: BOB_PSK }
    rules:
      - { action: accept, destination: 10.50.1.0/24, port_type: tcp, port_range: "443" }
rules:
  # The lab is closed.
  - action: drop
    destination: 10.50.9.0/24
`;

const TEAM_B = `version: 2
users:
  - email: carol@adopt.test
    devices:
      - name: tablet
        public_key: ${K.c1}

  # Dan left in March; his laptop is gone.
  - email: dan@adopt.test
    devices: [{ name: old, public_key: ${K.d1} }]

  - email: erin@adopt.test       # renamed by hand later
    devices:
      - { name: laptop, public_key: ${K.e1} }
`;

describe('netform adopt', () => {
  let server: TestServer;
  let ws: Workspace;
  useServerAndWorkspace((started) => ({ server, ws } = started));
  const run = (args: string[]) => netform(server, args, ENV);
  const repo = () => ws.path('repo');
  const read = (name: string) => readFileSync(join(repo(), name), 'utf8');
  const files = () =>
    Object.fromEntries(
      readdirSync(repo())
        .sort()
        .map((n) => [n, read(n)]),
    );
  const deviceId = async (email: string, name: string) => {
    const state = await serverState(server);
    const user = state.users.find((u) => u.email === email);
    return state.devices.find((d) => d.user_id === user.id && d.name === name).id as string;
  };

  beforeAll(async () => {
    ws.write('repo/team-a.yaml', TEAM_A);
    ws.write('repo/team-b.yaml', TEAM_B);
    const applied = await run(['apply', '-f', repo(), '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    // The hand changes.
    await server.api('PATCH', `/v0/devices/${await deviceId('alice@adopt.test', 'laptop')}`, { device: { mtu: 1280 } });
    await server.api('PATCH', `/v0/devices/${await deviceId('alice@adopt.test', 'phone')}`, {
      device: { dns: ['9.9.9.9'] },
    });
    await server.api('PATCH', '/v0/users/alice@adopt.test', { user: { role: 'unprivileged' } });
    const carol = (await serverState(server)).users.find((u) => u.email === 'carol@adopt.test');
    await create(server, 'devices', { user_id: carol.id, name: 'phone', public_key: K.c2 });
    const frank = await create(server, 'users', { email: 'frank@adopt.test' });
    await create(server, 'devices', { user_id: frank.id, name: 'laptop', public_key: K.f1 });
    await create(server, 'rules', { user_id: frank.id, action: 'accept', destination: '10.50.3.0/24' });
    await create(server, 'rules', { action: 'accept', destination: '10.50.7.0/24' });
    await server.api('DELETE', '/v0/users/dan@adopt.test');
    await server.api('PATCH', '/v0/users/erin@adopt.test', { user: { email: 'erin.new@adopt.test' } });
    await server.api('PATCH', `/v0/devices/${await deviceId('bob@adopt.test', 'desktop')}`, {
      device: { preshared_key: Buffer.alloc(32, 9).toString('base64') },
    });
    await create(server, 'users', { email: 'root@adopt.test' });
  });

  /** team-a.yaml as adopt leaves it: only the lines of the changed fields, and the new global rule. */
  const teamAAdopted = () =>
    TEAM_A.replace('    role: admin\n', '    role: unprivileged\n')
      .replace('mtu: 1400            #', 'mtu: 1280            #')
      .replace('dns: *office-dns }', 'dns: [9.9.9.9] }')
      .replace(
        '    destination: 10.50.9.0/24\n',
        '    destination: 10.50.9.0/24\n  - action: accept\n    destination: 10.50.7.0/24\n',
      );
  const teamBAdopted = () =>
    TEAM_B.replace(
      `        public_key: ${K.c1}\n`,
      `        public_key: ${K.c1}\n      - name: phone\n        public_key: ${K.c2}\n`,
    ).replace(
      '  - email: erin@adopt.test       # renamed by hand later\n',
      '  - email: erin.new@adopt.test       # renamed by hand later\n    renamed_from: erin@adopt.test\n',
    );

  it('--dry-run prints the diff and writes nothing', async () => {
    const before = files();
    // Run in the repository: the diff names the files as git does.
    const dry = await netform(server, ['adopt', '-f', '.', '--all-drift', '--dry-run'], ENV, repo());
    expect(dry.code, describeResult(dry)).toBe(0);
    expect(files()).toEqual(before);
    expect(dry.stdout).toContain(
      '--- a/team-a.yaml\n+++ b/team-a.yaml\n@@ -7,13 +7,13 @@\n users:\n   # Alice runs the on-call rota.\n   - email: alice@adopt.test   # lead\n',
    );
    expect(dry.stdout).toContain('-    role: admin\n+    role: unprivileged\n');
    expect(dry.stdout).toContain('--- /dev/null\n+++ b/frank@adopt.test.yaml\n@@ -0,0 +1,8 @@\n+version: 2\n');
    expect(dry.stderr).toContain('would write (dry run, nothing written) 3 file(s)');
  });

  it('--all-drift writes each hand change as a small edit and refuses what it must not write', async () => {
    const done = await run(['adopt', '-f', repo(), '--all-drift']);
    expect(done.code, describeResult(done)).toBe(0);
    // Every other byte of the files is as it was.
    expect(read('team-a.yaml')).toBe(teamAAdopted());
    expect(read('team-b.yaml')).toBe(teamBAdopted());
    expect(read('frank@adopt.test.yaml')).toBe(
      `version: 2\nusers:\n  - email: frank@adopt.test\n    devices:\n      - name: laptop\n        public_key: ${K.f1}\n    rules:\n      - { action: accept, destination: 10.50.3.0/24 }\n`,
    );
    const err = done.stderr;
    expect(err).toContain('  ~ device alice@adopt.test/laptop: mtu (');
    expect(err).toMatch(
      / {2}\+ user frank@adopt\.test: into .*frank@adopt\.test\.yaml, a new file \(the file export --split writes it to\)/,
    );
    expect(err).toMatch(/ {2}\+ device carol@adopt\.test\/phone: into .*team-b\.yaml \(the file declaring its user\)/);
    expect(err).toMatch(
      / {2}\+ rule \*\|accept\|10\.50\.7\.0\/24\|any: into .*team-a\.yaml \(the file declaring global rules\)/,
    );
    expect(err).toContain('  ~ user erin.new@adopt.test: renamed by hand from erin@adopt.test');
    expect(err).toContain(
      "  device bob@adopt.test/desktop: preshared_key differs: adopt cannot write secrets: set the reference's value",
    );
    expect(err).toMatch(
      / {2}user dan@adopt\.test: deleted from the server by hand, still declared in .*team-b\.yaml: left \(--remove-deleted removes it\)/,
    );
    expect(err).toContain('  user root@adopt.test: protected (settings.protect): adopt does not write it');
    // The plan is clean for every adopted object; what is left is what adopt refused.
    const json = await run(['plan', '-f', repo(), '--format', 'json']);
    expect(json.code, describeResult(json)).toBe(2);
    expect((JSON.parse(json.stdout) as { changes: { id: string }[] }).changes.map((c) => c.id).sort()).toEqual([
      'device:bob@adopt.test/desktop',
      'device:dan@adopt.test/old',
      'user:dan@adopt.test',
    ]);
    const plan = await run(['plan', '-f', repo()]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain(
      '  ~ device bob@adopt.test/desktop\n      preshared_key: (sensitive value changed)\n',
    );
    expect(plan.stdout).toContain('  + user dan@adopt.test\n');
    expect(plan.stdout).toContain('Plan: 2 to create, 1 to update, 0 to replace, 0 to delete.');
    // The reference stays.
    expect(read('team-a.yaml')).toContain('        preshared_key: { env: BOB_PSK }\n');
  });

  it('--remove-deleted removes a declaration deleted by hand, with its comment', async () => {
    const done = await run(['adopt', '-f', repo(), 'user:dan@adopt.test', '--remove-deleted']);
    expect(done.code, describeResult(done)).toBe(0);
    expect(done.stdout).toContain(
      `-  # Dan left in March; his laptop is gone.\n-  - email: dan@adopt.test\n-    devices: [{ name: old, public_key: ${K.d1} }]\n`,
    );
    expect(read('team-b.yaml')).toBe(
      teamBAdopted().replace(
        `  # Dan left in March; his laptop is gone.\n  - email: dan@adopt.test\n    devices: [{ name: old, public_key: ${K.d1} }]\n\n`,
        '',
      ),
    );
    // Only the changed secret, which adopt never writes, is left.
    const json = await run(['plan', '-f', repo(), '--format', 'json']);
    expect((JSON.parse(json.stdout) as { changes: { id: string }[] }).changes.map((c) => c.id)).toEqual([
      'device:bob@adopt.test/desktop',
    ]);
  });

  it('named keys: nothing to adopt, outside manage, unknown; bad requests change nothing', async () => {
    const before = files();
    const named = await run([
      'adopt',
      '-f',
      repo(),
      'user:alice@adopt.test',
      'user:zed@elsewhere.test',
      'device:carol@adopt.test/none',
    ]);
    expect(named.code, describeResult(named)).toBe(0);
    expect(named.stdout).toBe('');
    expect(named.stderr).toContain('adopt: no file changed\n');
    expect(named.stderr).toContain(
      '  user alice@adopt.test: nothing to adopt, the files declare it as the server holds it\n',
    );
    expect(named.stderr).toContain('  user zed@elsewhere.test: outside settings.manage: adopt does not write it\n');
    expect(named.stderr).toContain('  device carol@adopt.test/none: neither the server nor the files have it\n');
    const both = await run(['adopt', '-f', repo(), 'user:alice@adopt.test', '--all-drift']);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('not both');
    const none = await run(['adopt', '-f', repo()]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('or give --all-drift');
    const bad = await run(['adopt', '-f', repo(), 'printer:x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('printer:x: expected user:EMAIL');
    expect(files()).toEqual(before);
  });
});
