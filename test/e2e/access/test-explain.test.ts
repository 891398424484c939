/**
 * End to end: access tests and explain with the built CLI, offline from YAML and from a CDKTF
 * stack, and with --live against a real server process; plan and apply refusing on a failing
 * test; access changes in plans. Build first (`npm test` does).
 */
import { App } from 'cdktf';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FirezoneStack } from '../../../src/cdktf/index.js';
import type { TestServer } from '../../helpers/server.js';
import { create, netform, serverState, useServerAndWorkspace, wgKey, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const RULES = `
users:
  - email: alice@example.com
    devices:
      - { name: laptop, public_key: "${wgKey()}" }
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "22" }
  - email: bob@example.com
rules:
  - { action: drop, destination: 10.0.0.0/8 }
`;

const PASSING = `
tests:
  - name: alice reaches git over ssh
    from: alice@example.com
    to: 10.1.2.3:22/tcp
    expect: accept
  - { name: nobody reaches the vault, from: "*/*", to: 10.9.0.5:8200/tcp, expect: drop }
  - { name: bob reaches the internet, from: bob@example.com/*, to: "[2001:db8::1]:443/tcp", expect: accept }
`;

const FAILING = `
tests:
  - { name: alice reaches git over ssh, from: alice@example.com/laptop, to: 10.1.2.3:22/tcp, expect: accept }
  - { name: bob reaches git, from: bob@example.com/*, to: 10.1.2.3:22/tcp, expect: accept }
`;

describe('netform test (offline, YAML)', () => {
  it('passes: one line per test with the deciding rule and its file:line, exit 0', async () => {
    const file = ws.write('pass/netform.yaml', `version: 1\n${RULES}${PASSING}`);
    const r = await netform(server, ['test', '-f', file], { NETFORM_URL: undefined });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      /netform\.yaml:14: PASS alice reaches git over ssh: .*got accept by accept 10\.1\.0\.0\/16 tcp 22 \(alice@example\.com\) at .*netform\.yaml:8, user port-accept$/,
    );
    expect(lines[1]).toMatch(
      /PASS nobody reaches the vault: .*got drop by drop 10\.0\.0\.0\/8 \(global\) at .*netform\.yaml:11, global portless-drop/,
    );
    expect(lines[2]).toMatch(/PASS bob reaches the internet: .*got accept: default/);
    expect(lines[3]).toBe('3 passed, 0 failed (against the declared rules: files only)');
  });

  it('fails: exit 1, the failing test named with its verdict; json and github formats', async () => {
    const file = ws.write('fail/netform.yaml', `version: 1\n${RULES}${FAILING}`);
    const r = await netform(server, ['test', '-f', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAIL bob reaches git: bob@example\.com\/\* -> 10\.1\.2\.3:22\/tcp, expected accept, got drop by drop 10\.0\.0\.0\/8 \(global\)/,
    );
    expect(r.stdout).toContain('1 passed, 1 failed');

    const json = await netform(server, ['test', '-f', file, '--format', 'json']);
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ passed: 1, failed: 1 });
    expect(doc.tests[1]).toMatchObject({
      name: 'bob reaches git',
      pass: false,
      line: 15,
      results: [
        {
          user: 'bob@example.com',
          device: '*',
          verdict: 'drop',
          rule: { action: 'drop', destination: '10.0.0.0/8', scope: 'global', stage: 'portless-drop' },
        },
      ],
    });

    const github = await netform(server, ['test', '-f', file, '--format', 'github']);
    expect(github.stdout).toMatch(/^::error file=.*netform\.yaml,line=15,col=\d+::FAIL bob reaches git/m);
  });

  it('bad tests are validation errors at their line', async () => {
    const file = ws.write(
      'bad/netform.yaml',
      `version: 1\n${RULES}tests:\n  - { name: x, from: carol@example.com, to: "10.0.0.1:22", expect: accept }\n`,
    );
    const r = await netform(server, ['validate', '-f', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/netform\.yaml:13:\d+: tests\[0\]\.from: no user carol@example\.com is declared/);
    expect(r.stderr).toMatch(/netform\.yaml:13:\d+: tests\[0\]\.to: .*a port needs \/tcp or \/udp/);
  });
});

describe('netform validate', () => {
  it('warns about a rule that never decides anything, naming both rules, and still exits 0', async () => {
    const file = ws.write(
      'shadow/netform.yaml',
      `version: 1\n${RULES}  - { action: accept, destination: 0.0.0.0/0 }\n`,
    );
    const r = await netform(server, ['validate', '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /warning: .*netform\.yaml:11:\d+: rules\[0\]: rule drop 10\.0\.0\.0\/8 \(global\) never decides anything: accept 0\.0\.0\.0\/0 \(global\) at .*netform\.yaml:12 \(portless-accept\)/,
    );
    const github = await netform(server, ['validate', '-f', file, '--format', 'github']);
    expect(github.stdout).toMatch(/^::warning file=.*netform\.yaml,line=11,/m);
  });
});

describe('netform explain', () => {
  it('from YAML: verdict, deciding rule and stage, later matches', async () => {
    const file = ws.write('explain/netform.yaml', `version: 1\n${RULES}`);
    const r = await netform(server, ['explain', 'alice@example.com', '10.1.2.3:22/tcp', '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('alice@example.com -> 10.1.2.3:22/tcp, against the declared rules (files only)');
    expect(lines[1]).toBe('alice@example.com/laptop: ACCEPT');
    expect(lines[2]).toMatch(
      /^ {2}decided by accept 10\.1\.0\.0\/16 tcp 22 \(alice@example\.com\) at .*netform\.yaml:8, user port-accept$/,
    );
    expect(lines[3]).toMatch(
      /^ {2}also matches, evaluated later: drop 10\.0\.0\.0\/8 \(global\) at .*netform\.yaml:11, global portless-drop$/,
    );
    const json = await netform(server, ['explain', '*', '10.1.2.3/icmp', '-f', file, '--format', 'json']);
    const doc = JSON.parse(json.stdout);
    expect(doc.results.map((x: any) => [x.user, x.verdict])).toEqual([['alice@example.com', 'drop']]);
    // "*" is every device of every user: bob has none, so he is not a source there, only named.
    expect(doc.without_device).toEqual(['bob@example.com']);
  });

  it('refuses bad notations with a clear error', async () => {
    const file = ws.write('explain2/netform.yaml', `version: 1\n${RULES}`);
    const r = await netform(server, ['explain', 'alice@example.com', '10.1.2.3/tcp', '-f', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: TO .*\/tcp needs a port/);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('tests and explain from a CDKTF stack', async () => {
    const outdir = ws.path('cdktf.out');
    const app = new App({ outdir });
    new FirezoneStack(app, 'company', {
      users: [
        {
          email: 'alice@example.com',
          rules: [{ action: 'accept', destination: '10.1.0.0/16', portType: 'tcp', portRange: '22' }],
        },
      ],
      rules: [{ action: 'drop', destination: '10.0.0.0/8' }],
      tests: [
        // alice declares no device: her rules as any device of hers would see them (W3.6).
        { name: 'alice reaches ssh', from: 'alice@example.com/*', to: '10.1.2.3:22/tcp', expect: 'accept' },
        { name: 'alice reaches telnet', from: 'alice@example.com/*', to: '10.1.2.3:23/tcp', expect: 'accept' },
      ],
    });
    app.synth();
    const stack = join(outdir, 'stacks', 'company');
    const tested = await netform(server, ['test', '-f', stack]);
    expect(tested.code).toBe(1);
    expect(tested.stdout).toMatch(
      /cdk\.tf\.json:\d+: PASS alice reaches ssh: .*got accept by accept 10\.1\.0\.0\/16 tcp 22 \(alice@example\.com\) at .*cdk\.tf\.json:\d+, user port-accept/,
    );
    expect(tested.stdout).toMatch(
      /cdk\.tf\.json:\d+: FAIL alice reaches telnet: .*got drop by drop 10\.0\.0\.0\/8 \(global\)/,
    );
    expect(tested.stdout).toContain('1 passed, 1 failed');
    const r = await netform(server, ['explain', 'alice@example.com/*', '10.1.2.3:23/tcp', '-f', stack]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('alice@example.com/*: DROP');
    expect(r.stdout).toMatch(/decided by drop 10\.0\.0\.0\/8 \(global\) at .*cdk\.tf\.json:\d+, global portless-drop/);
  });
});

describe('against a live server', () => {
  it('plan shows a failing test first and exits 1, apply refuses, writing nothing; pass when tests pass; then --live', async () => {
    const failing = ws.write('live-fail/netform.yaml', `version: 1\n${RULES}${FAILING}`);
    const before = await serverState(server);
    const planned = await netform(server, ['plan', '-f', failing]);
    expect(planned.code).toBe(1);
    expect(planned.stdout).toMatch(/1 access test fails: this plan cannot be applied/);
    expect(planned.stderr).toMatch(/1 access test failed \(listed first in the plan\); no saved plan was written/);
    const refused = await netform(server, ['apply', '--yes', '-f', failing]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /1 access test failed on the server as it would be after apply; nothing was written:\n {2}FAIL bob reaches git at .*netform\.yaml:15/,
    );
    expect(await serverState(server)).toEqual(before);

    // The users first, then the rules: the plan of the rules says what changes for them.
    const usersOnly = ws.write(
      'live-users/netform.yaml',
      `version: 1\n${RULES.replace(/\n {4}rules:\n.*\nrules:\n.*\n/s, '\n')}`,
    );
    const base = await netform(server, ['apply', '-f', usersOnly, '--yes']);
    expect(base.code, base.stdout + base.stderr).toBe(0);
    const passing = ws.write('live/netform.yaml', `version: 1\n${RULES}${PASSING}`);
    const plan = await netform(server, ['plan', '-f', passing]);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toContain('Access changes after apply (compared with the server now):');
    expect(plan.stdout).toMatch(
      /all users \(except where own rules of alice@example\.com apply\): now blocked 10\.0\.0\.0\/8 \(all protocols\)/,
    );
    expect(plan.stdout).toMatch(
      /alice@example\.com \(within its own rules\): now blocked 10\.1\.0\.0\/16 tcp 0-21, 23-65535/,
    );
    const applied = await netform(server, ['apply', '-f', passing, '--yes']);
    expect(applied.code, applied.stderr).toBe(0);

    // A rule made by hand on the server: --live sees it, the offline run does not.
    const bob = (await serverState(server)).users.find((u: any) => u.email === 'bob@example.com');
    await create(server, 'rules', { action: 'accept', destination: '10.9.0.0/16', user_id: bob.id });
    const offline = await netform(server, ['test', '-f', passing]);
    expect(offline.code).toBe(0);
    const live = await netform(server, ['test', '-f', passing, '--live']);
    expect(live.code).toBe(1);
    expect(live.stdout).toMatch(
      /FAIL nobody reaches the vault: .*got accept by accept 10\.9\.0\.0\/16 \(bob@example\.com\) at id [\w-]+, user portless-accept \(from bob@example\.com\/\*\)/,
    );
    expect(live.stdout).toContain('(against the live server: live now)');
    // bob has no device on the server: no tunnel; his rules as any device of his would see them accept.
    const noDevice = await netform(server, ['explain', 'bob@example.com', '10.9.0.5:8200/tcp', '--live']);
    expect(noDevice.stdout).toContain('bob@example.com: NO TUNNEL (no device)');
    const explain = await netform(server, ['explain', 'bob@example.com/*', '10.9.0.5:8200/tcp', '--live']);
    expect(explain.code, explain.stderr).toBe(0);
    expect(explain.stdout).toMatch(
      /bob@example\.com\/\*: ACCEPT\n {2}decided by accept 10\.9\.0\.0\/16 \(bob@example\.com\) at id [\w-]+, user portless-accept/,
    );

    // The plan that removes the hand-made rule says what bob loses, in markdown and json too.
    const pruned = ws.write(
      'live-prune/netform.yaml',
      `version: 1\nsettings: { prune: true, manage: { users: ["*@example.com"] } }\n${RULES}${PASSING}`,
    );
    const md = await netform(server, ['plan', '-f', pruned, '--format', 'markdown']);
    expect(md.stdout).toContain('<summary>Access changes after apply (compared with the server now)</summary>');
    expect(md.stdout).toContain('- `bob@example.com`: now blocked 10.9.0.0/16 (all protocols)');
    const json = JSON.parse((await netform(server, ['plan', '-f', pruned, '--format', 'json'])).stdout);
    expect(json.access).toEqual({
      users: [
        {
          user: 'bob@example.com',
          reachable: [],
          blocked: [{ family: 4, addresses: ['10.9.0.0/16'], protocol: 'all' }],
        },
      ],
    });
  }, 60_000); // a dozen CLI runs against the server
});
