/**
 * `--target`, `netform show` and `netform completion`, in-process (run(argv, io)) against a real
 * server. The same commands as processes of the built CLI: plan, apply -f, show and validate in the
 * safety net (e2e/cli/safety-net.test.ts), the bin itself in e2e/cli/process-path.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import type { TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  wgKey,
  type Workspace,
  useServerAndWorkspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const LAPTOP = wgKey();
const YAML = `version: 1
users:
  - email: alice@target.test
    devices:
      - { name: laptop, public_key: "${LAPTOP}" }
    rules:
      - { action: accept, destination: 10.20.0.0/16 }
  - email: bob@target.test
rules:
  - { action: drop, destination: 10.99.0.0/16 }
`;

describe('--target', () => {
  it('limits plan and apply to the targets and what they need; repeatable; a later full run does the rest', async () => {
    const file = ws.write('netform.yaml', YAML);
    const device = await netform(server, [
      'plan',
      '-f',
      file,
      '--target',
      'device:Alice@target.test/laptop',
      '--format',
      'json',
    ]);
    expect(device.code, describeResult(device)).toBe(2);
    const doc = JSON.parse(device.stdout);
    expect(doc.changes.map((c: { id: string }) => c.id)).toEqual([
      'user:alice@target.test',
      'device:alice@target.test/laptop',
    ]);
    expect(doc.summary).toMatchObject({ create: 2, update: 0, delete: 0 });
    expect(doc.warnings).toContain(
      'limited by --target device:alice@target.test/laptop: 3 other change(s) are left out of this plan; a run without --target makes them',
    );

    const applied = await netform(server, [
      'apply',
      '-f',
      file,
      '--yes',
      '--target',
      'user:bob@target.test',
      '--target',
      'rule:*|drop|10.99.0.0/16|any',
    ]);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stdout).toContain('Apply: 2 done, 0 failed, 0 not attempted.');
    const state = await serverState(server);
    expect(state.users.map((u) => u.email).sort()).toEqual(['admin@example.com', 'bob@target.test']);
    expect(state.rules.map((r) => r.destination)).toEqual(['10.99.0.0/16']);

    const rest = await netform(server, ['plan', '-f', file]);
    expect(rest.stdout).toContain('Plan: 3 to create, 0 to update, 0 to replace, 0 to delete.');
  });

  it('refuses a target that is not in the plan key notation, before touching the server', async () => {
    const file = ws.path('netform.yaml');
    const bad = await netform(server, ['plan', '-f', file, '--target', 'alice@target.test']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'error: --target alice@target.test: expected user:EMAIL, device:EMAIL/NAME, rule:KEY or configuration',
    );
  });
});

describe('netform show', () => {
  it('prints live objects as desired-state YAML, all or by key; the output validates', async () => {
    const file = ws.path('netform.yaml');
    expect((await netform(server, ['apply', '-f', file, '--yes'])).code).toBe(0);
    const all = await netform(server, ['show']);
    expect(all.code, describeResult(all)).toBe(0);
    expect(all.stdout).toContain('email: alice@target.test');
    expect(all.stdout).toContain('email: bob@target.test');

    const one = await netform(server, ['show', 'device:alice@target.test/laptop', '--document']);
    expect(one.code, describeResult(one)).toBe(0);
    expect(one.stdout).toContain('email: alice@target.test');
    expect(one.stdout).toContain(`public_key: ${LAPTOP}`);
    expect(one.stdout).not.toContain('bob@target.test');
    expect(one.stdout).not.toContain('10.20.0.0/16');

    const validated = await runCli(['validate', '-f', '-'], { input: all.stdout });
    expect(validated.code, describeResult(validated)).toBe(0);
    expect(all.stdout).toMatch(/^# /);

    const missing = await netform(server, ['show', 'user:nobody@target.test']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error: the server has no user:nobody@target.test');
  });
});

describe('netform show KEY', () => {
  it('prints only the fragments of the objects named, no header, indented to paste; pasted, they plan clean', async () => {
    const file = ws.path('netform.yaml');
    expect((await netform(server, ['apply', '-f', file, '--yes'])).code).toBe(0);
    const shown = await netform(server, [
      'show',
      'user:bob@target.test',
      'device:alice@target.test/laptop',
      'rule:alice@target.test|accept|10.20.0.0/16|any',
      'rule:*|drop|10.99.0.0/16|any',
    ]);
    expect(shown.code, describeResult(shown)).toBe(0);
    expect(shown.stdout).toBe(
      [
        '  - email: bob@target.test',
        '      - name: laptop',
        `        public_key: ${LAPTOP}`,
        '        ipv4: 10.3.2.2',
        '        ipv6: fd00::3:2:2',
        '      - { action: accept, destination: 10.20.0.0/16 }',
        '  - { action: drop, destination: 10.99.0.0/16 }',
        '',
      ].join('\n'),
    );
    expect(shown.stderr).toBe('');

    // Pasted under the keys they are indented for, the fragments are the desired state again.
    const lines = shown.stdout.split('\n');
    const [bob, own, global] = [lines[0]!, lines[5]!, lines[6]!];
    const laptop = lines.slice(1, 5);
    const yaml = ['version: 1', 'users:', '  - email: alice@target.test', '    devices:', ...laptop, '    rules:', own];
    const admin = (await netform(server, ['show', 'user:admin@example.com'])).stdout;
    const pasted = ws.write('pasted.yaml', [...yaml, bob, admin, 'rules:', global, ''].join('\n'));
    const plan = await netform(server, ['plan', '-f', pasted]);
    expect(plan.code, describeResult(plan)).toBe(0);
    expect(plan.stdout).toContain('No changes: the server matches the desired state.');

    // Without keys, or with --document: a whole document as export writes it.
    const document = await netform(server, ['show', 'user:bob@target.test', '--document']);
    expect(document.stdout).toMatch(/^# /);
    expect(document.stdout).toContain('version: 2');
  });
});

describe('netform completion', () => {
  it('bash: completes commands, subcommands and options', async () => {
    const script = await runCli(['completion', 'bash']);
    expect(script.code).toBe(0);
    const complete = (words: string[]) => {
      const program = `${script.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _netform; echo "\${COMPREPLY[*]}"`;
      const result = spawnSync('bash', ['-c', program], { encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      return result.stdout.trim();
    };
    expect(complete(['netform', 'pl'])).toBe('plan');
    expect(complete(['netform', 's'])).toBe('show serve server');
    expect(complete(['netform', 'server', 't'])).toBe('token');
    expect(complete(['netform', 'apply', '--ta'])).toBe('--target');
    expect(complete(['netform', 'plan', '--ti'])).toBe('--timeout');
  });

  it('bash: completes every command of the registry, the access commands and their options included', async () => {
    const script = await runCli(['completion', 'bash']);
    const complete = (words: string[]) => {
      const program = `${script.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _netform; echo "\${COMPREPLY[*]}"`;
      return spawnSync('bash', ['-c', program], { encoding: 'utf8' }).stdout.trim();
    };
    expect(complete(['netform', 't'])).toBe('test');
    expect(complete(['netform', 'ex'])).toBe('export explain');
    expect(complete(['netform', 'test', '--li'])).toBe('--live');
    expect(complete(['netform', 'completion', 'z'])).toBe('zsh');
  });

  it.each([
    ['zsh', ['-n']],
    ['fish', ['-n']],
  ] as const)('%s: a script the shell parses', async (shell, args) => {
    const script = await runCli(['completion', shell]);
    expect(script.code).toBe(0);
    expect(script.stdout).toContain('netform');
    const available = spawnSync(shell, ['--version']).status === 0;
    if (!available) return; // the shell is not installed here: the script was still produced
    const parsed = spawnSync(shell, [...args], { input: script.stdout, encoding: 'utf8' });
    expect(parsed.status, parsed.stderr).toBe(0);
  });

  it('refuses an unknown shell', async () => {
    const result = await runCli(['completion', 'tcsh']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('completion: unknown shell "tcsh"; choose one of bash, zsh, fish');
  });
});
