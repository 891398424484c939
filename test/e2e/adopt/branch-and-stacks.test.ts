/**
 * Adopt around the files: `drift --adopt-branch` commits the adoption on a branch of a temporary
 * git repository without touching its checkout; a desired-state file that is a symlink inside the
 * repository is written at its target; `--into` places a new user; a value other values share
 * through an anchor is listed, not rewritten; a CDKTF stack gets construct calls and no edit.
 */
import { App } from 'cdktf';
import { lstatSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FirezoneStack } from '../../../src/cdktf/index.js';
import { git } from '../../helpers/git.js';
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

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

describe('adopt around the files', () => {
  let server: TestServer;
  let ws: Workspace;
  useServerAndWorkspace((started) => ({ server, ws } = started));
  const run = (args: string[]) => netform(server, args, GIT_ENV);
  const deviceId = async (email: string, name: string) => {
    const state = await serverState(server);
    const user = state.users.find((u) => u.email === email);
    return state.devices.find((d) => d.user_id === user.id && d.name === name).id as string;
  };

  it('drift --adopt-branch commits the adoption on a branch; the checkout stays as it was', async () => {
    const key = wgKey();
    const repo = ws.path('git-repo');
    const text = `version: 2
settings: { manage: { users: ["*@branch.test"], rules: [] } }
users:
  # Gina is on the night shift.
  - email: gina@branch.test
    devices:
      - name: laptop
        public_key: "${key}"
        mtu: 1400   # hotel wifi
`;
    ws.write('git-repo/desired/team.yaml', text);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'desired state');
    const head = git(repo, 'rev-parse', 'HEAD');
    const desired = join(repo, 'desired');
    expect((await run(['apply', '-f', desired, '--yes'])).code).toBe(0);
    await server.api('PATCH', `/v0/devices/${await deviceId('gina@branch.test', 'laptop')}`, { device: { mtu: 1280 } });

    const drift = await run(['drift', '-f', desired, '--adopt-branch', 'netform/adopt']);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stderr).toMatch(
      /drift: adoption of 1 file\(s\) committed as [0-9a-f]{12} on branch netform\/adopt \(from [0-9a-f]{12}\)/,
    );
    // The checkout: same HEAD, same branch, same files, nothing staged.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(desired, 'team.yaml'), 'utf8')).toBe(text);
    // The branch: one commit on HEAD, holding the adopted file.
    expect(git(repo, 'rev-parse', 'netform/adopt^')).toBe(head);
    const adopted = git(repo, 'show', 'netform/adopt:desired/team.yaml');
    expect(`${adopted}\n`).toBe(text.replace('mtu: 1400   #', 'mtu: 1280   #'));
    const message = git(repo, 'log', '-1', '--format=%B', 'netform/adopt');
    expect(message).toMatch(/^netform: adopt 1 hand change from http:\/\/127\.0\.0\.1:\d+\n\n/);
    expect(message).toContain('```\n  ~ device gina@branch.test/laptop: mtu (');
    // Checked out, the branch plans clean.
    git(repo, 'checkout', '-q', 'netform/adopt');
    expect((await run(['plan', '-f', desired])).code).toBe(0);
    git(repo, 'checkout', '-q', 'main');
    // The branch checked out is refused; a schedule is refused.
    const same = await run(['drift', '-f', desired, '--adopt-branch', 'main']);
    expect(same.code).toBe(1);
    expect(same.stderr).toContain('--adopt-branch main is the branch checked out here');
    const every = await run(['drift', '-f', desired, '--adopt-branch', 'x', '--every', '* * * * *']);
    expect(every.code).toBe(1);
    expect(every.stderr).toContain('--adopt-branch is for a single check');
    // The branch is written: the adoption judges expiries at the run's own clock, never at --now.
    const now = await run(['drift', '-f', desired, '--adopt-branch', 'y', '--now', '2099-01-01']);
    expect(now.code).toBe(1);
    expect(now.stderr).toContain('--now cannot be given with --adopt-branch');
    expect(() => git(repo, 'rev-parse', '--verify', '-q', 'y')).toThrow();
  });

  it('a symlinked file inside the repository is written at its target; --into places a new user', async () => {
    const key = wgKey();
    const repo = ws.path('linked-repo');
    const text = `version: 2
settings: { manage: { users: ["*@linked.test"], rules: [] } }
users:
  - email: hal@linked.test
    devices: [{ name: laptop, public_key: "${key}", mtu: 1400 }]
`;
    ws.write('linked-repo/shared/hal.yaml', text);
    ws.write('linked-repo/desired/README.md', 'not read\n');
    symlinkSync('../shared/hal.yaml', join(repo, 'desired', 'hal.yaml'));
    git(repo, 'init', '-q', '-b', 'main');
    const desired = join(repo, 'desired');
    expect((await run(['apply', '-f', desired, '--yes'])).code).toBe(0);
    await server.api('PATCH', `/v0/devices/${await deviceId('hal@linked.test', 'laptop')}`, { device: { mtu: 1300 } });
    await create(server, 'users', { email: 'ivy@linked.test' });
    const done = await run(['adopt', '-f', desired, '--all-drift', '--into', join(desired, 'hal.yaml')]);
    expect(done.code, describeResult(done)).toBe(0);
    expect(done.stderr).toMatch(/hal\.yaml is a symlink: written to .*shared\/hal\.yaml/);
    expect(done.stderr).toMatch(/ {2}\+ user ivy@linked\.test: into .*hal\.yaml \(the file --into names\)/);
    expect(lstatSync(join(desired, 'hal.yaml')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(desired, 'hal.yaml'))).toBe('../shared/hal.yaml');
    expect(readFileSync(join(repo, 'shared', 'hal.yaml'), 'utf8')).toBe(
      text.replace('mtu: 1400 }', 'mtu: 1300 }') + '  - email: ivy@linked.test\n',
    );
    expect((await run(['plan', '-f', desired])).code).toBe(0);
  });

  it('a value other values share through an anchor is listed, not rewritten', async () => {
    const [k1, k2] = [wgKey(), wgKey()];
    const text = `version: 2
settings: { manage: { users: ["*@anchor.test"], rules: [] } }
users:
  - email: jo@anchor.test
    devices:
      - { name: a, public_key: "${k1}", dns: &dns [10.0.0.53] }
      - { name: b, public_key: "${k2}", dns: *dns }
`;
    const file = ws.write('anchor/team.yaml', text);
    expect((await run(['apply', '-f', file, '--yes'])).code).toBe(0);
    await server.api('PATCH', `/v0/devices/${await deviceId('jo@anchor.test', 'a')}`, {
      device: { dns: ['10.0.0.99'] },
    });
    const done = await run(['adopt', '-f', file, 'device:jo@anchor.test/a']);
    expect(done.code, describeResult(done)).toBe(0);
    expect(done.stderr).toContain(
      '  device jo@anchor.test/a: adopt does not write its dns, whose value is the anchor &dns other values may use: edit it by hand\n',
    );
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('the configuration the files give is adopted field by field', async () => {
    const text = `version: 2
settings: { manage: { users: ["*@config.test"], rules: [] } }
configuration:
  default_client_mtu: 1380 # the office link
  default_client_dns: [10.0.0.53]
`;
    const file = ws.write('config/desired.yaml', text);
    expect((await run(['apply', '-f', file, '--yes'])).code).toBe(0);
    const patched = await server.api('PATCH', '/v0/configuration', { configuration: { default_client_mtu: 1300 } });
    expect(patched.status).toBe(200);
    const done = await run(['adopt', '-f', file, '--all-drift']);
    expect(done.code, describeResult(done)).toBe(0);
    expect(done.stderr).toContain('  ~ configuration: default_client_mtu (');
    expect(readFileSync(file, 'utf8')).toBe(text.replace('mtu: 1380 #', 'mtu: 1300 #'));
    expect((await run(['plan', '-f', file])).code).toBe(0);
  });

  it('a CDKTF stack: adopt prints the construct calls and edits nothing', async () => {
    const key = wgKey();
    const out = ws.path('cdktf-out');
    const app = new App({ outdir: out });
    new FirezoneStack(app, 'team', {
      users: [{ email: 'kim@cdktf.test', devices: [{ name: 'laptop', publicKey: key, mtu: 1400 }] }],
      settings: { manage: { users: ['*@cdktf.test'], rules: [] } },
    });
    app.synth();
    const stack = join(out, 'stacks', 'team');
    const before = readFileSync(join(stack, 'cdk.tf.json'), 'utf8');
    const applied = await run(['apply', '-f', stack, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    await server.api('PATCH', `/v0/devices/${await deviceId('kim@cdktf.test', 'laptop')}`, { device: { mtu: 1280 } });
    const done = await run(['adopt', '-f', stack, '--all-drift']);
    expect(done.code, describeResult(done)).toBe(0);
    expect(done.stdout).toContain('adopt edits nothing');
    expect(done.stdout).toContain(
      `// device:kim@cdktf.test/laptop\nnew Device(this, "kim_cdktf_test_laptop", {\n  userId: kim_cdktf_test.id,\n  name: "laptop",\n  publicKey: "${key}",\n  mtu: 1280,\n});\n`,
    );
    expect(readFileSync(join(stack, 'cdk.tf.json'), 'utf8')).toBe(before);
  });
});
