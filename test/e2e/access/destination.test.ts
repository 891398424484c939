/**
 * End to end, with the built CLI: a bare address or a block in `to:` is every protocol and port
 * (accept, drop or partial), the same answer from `test`, `explain` and `who-can-reach`, offline
 * from files and with --live against a real server; `ADDRESS/other` is one packet; `from: "*"`
 * with no device; `reach`'s `except` form. Build first (`npm test` does).
 */
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { create, netform, serverState, useServerAndWorkspace, wgKey, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const offline = (args: string[]) => netform(server, args, { NETFORM_URL: undefined, NETFORM_TOKEN: undefined });

/** The review's reproduction (newcomer 2026-11b §3.3): a global drop and a tcp 1 - 65534 accept. */
const POLICY = `version: 1
users:
  - email: u1@x.example
    devices:
      - { name: pc, public_key: "${wgKey()}" }
  - email: u2@x.example
    devices:
      - { name: pc, public_key: "${wgKey()}" }
rules:
  - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "1 - 65534" }
  - { action: drop, destination: 0.0.0.0/0 }
`;

const TESTS = `tests:
  - { name: u2 cannot reach the db host at all, from: u2@x.example, to: 10.1.2.3, expect: drop }
  - { name: u2 reaches part of the db host, from: u2@x.example, to: 10.1.2.3, expect: partial }
  - { name: u2 sends no GRE to the db host, from: u2@x.example, to: 10.1.2.3/other, expect: drop }
  - { name: everyone reaches part of the db block, from: "*", to: 10.1.0.0/16, expect: partial }
  - { name: nobody reaches 10.2/16, from: "*", to: 10.2.0.0/16, expect: drop }
`;

describe('a bare address or a block in to: (offline, from files)', () => {
  it('test: "cannot reach at all" fails as partial, naming what is accepted and by which rule', async () => {
    const file = ws.write('dest/p.yaml', POLICY + TESTS);
    const r = await offline(['test', '-f', file]);
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /p\.yaml:13: FAIL u2 cannot reach the db host at all: u2@x\.example -> 10\.1\.2\.3, expected drop, got partial: accepted 10\.1\.2\.3\/32 tcp 1-65534 by accept 10\.1\.0\.0\/16 tcp 1 - 65534 \(global\) at .*p\.yaml:10, global port-accept; dropped 10\.1\.2\.3\/32 tcp 0, 65535; .* by drop 0\.0\.0\.0\/0 \(global\) at .*p\.yaml:11, global portless-drop$/,
    );
    expect(lines[1]).toMatch(/PASS u2 reaches part of the db host: .*got partial: accepted/);
    expect(lines[2]).toMatch(/PASS u2 sends no GRE to the db host: .*got drop by drop 0\.0\.0\.0\/0/);
    expect(lines[3]).toMatch(/PASS everyone reaches part of the db block: .*got partial/);
    expect(lines[4]).toMatch(/PASS nobody reaches 10\.2\/16: .*got drop by drop 0\.0\.0\.0\/0/);
    expect(lines[5]).toBe('4 passed, 1 failed (against the declared rules: files only)');

    const json = JSON.parse((await offline(['test', '-f', file, '--format', 'json'])).stdout);
    expect(json.tests[0]).toMatchObject({
      pass: false,
      expect: 'drop',
      results: [
        {
          user: 'u2@x.example',
          device: 'pc',
          verdict: 'partial',
          parts: [
            {
              verdict: 'accept',
              by: 'rule',
              blocks: [{ addresses: ['10.1.2.3/32'], protocol: 'tcp', ports: '1-65534' }],
            },
            { verdict: 'drop', by: 'rule', rule: { destination: '0.0.0.0/0', stage: 'portless-drop' } },
          ],
        },
      ],
    });

    // validate runs the same tests: the failing one is an error at its line.
    const validate = await offline(['validate', '-f', file]);
    expect(validate.code).toBe(1);
    expect(validate.stdout + validate.stderr).toMatch(
      /p\.yaml:13:\d+.*access test fails: u2 cannot reach the db host at all/,
    );
  });

  it('explain and who-can-reach give the same answer on the same file', async () => {
    const file = ws.write('dest2/p.yaml', POLICY);
    const explain = await offline(['explain', 'u2@x.example', '10.1.2.3', '-f', file]);
    expect(explain.code, explain.stderr).toBe(0);
    const lines = explain.stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      'u2@x.example -> 10.1.2.3, against the declared rules (files only)',
      'u2@x.example/pc: PARTIAL',
    ]);
    expect(lines[2]).toMatch(
      /^ {2}accepted: 10\.1\.2\.3\/32 tcp 1-65534 by accept 10\.1\.0\.0\/16 tcp 1 - 65534 \(global\)/,
    );
    expect(lines[3]).toMatch(/^ {2}dropped: 10\.1\.2\.3\/32 tcp 0, 65535; .* by drop 0\.0\.0\.0\/0 \(global\)/);
    const other = await offline(['explain', 'u2@x.example', '10.1.2.3/other', '-f', file]);
    expect(other.stdout).toContain('u2@x.example/pc: DROP\n  decided by drop 0.0.0.0/0 (global)');
    const block = await offline(['explain', '*', '10.2.0.0/16', '-f', file, '--format', 'json']);
    expect(JSON.parse(block.stdout).results.map((r: { verdict: string }) => r.verdict)).toEqual(['drop', 'drop']);

    const who = await offline(['who-can-reach', '10.1.2.3', '-f', file]);
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toContain(
      '  2 users without own rules there (u1@x.example, u2@x.example), 2 devices, part of it:\n' +
        '    accepted: 10.1.2.3/32 tcp 1-65534 by accept 10.1.0.0/16 tcp 1 - 65534 (global)',
    );
    expect(who.stdout).toMatch(
      /\n {4}stopped by a drop: 10\.1\.2\.3\/32 tcp 0, 65535; .* by drop 0\.0\.0\.0\/0 \(global\)/,
    );
    const whoJson = JSON.parse(
      (await offline(['who-can-reach', '10.1.0.0/16', '-f', file, '--format', 'json'])).stdout,
    );
    expect(whoJson.accepted.entries[0]).toMatchObject({ verdict: 'partial', users: ['u1@x.example', 'u2@x.example'] });
  });

  it('from: "*" on a file that declares no device: test fails, validate warns, "*/*" tests the policy', async () => {
    const file = ws.write(
      'nodevice/netform.yaml',
      `version: 1
users:
  - email: newhire@x.example
rules:
  - { action: drop, destination: 10.9.0.0/16 }
tests:
  - { name: nobody reaches the vault, from: "*", to: 10.9.0.5, expect: drop }
  - { name: the policy keeps the vault shut, from: "*/*", to: 10.9.0.5, expect: drop }
`,
    );
    const r = await offline(['test', '-f', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /netform\.yaml:7: FAIL nobody reaches the vault: \* -> 10\.9\.0\.5, expected drop: no device to test from: write `\*\/\*` to test the policy\n/,
    );
    expect(r.stdout).toMatch(/PASS the policy keeps the vault shut: .*got drop by drop 10\.9\.0\.0\/16/);
    const validate = await offline(['validate', '-f', file]);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stderr).toMatch(
      /netform\.yaml:7:\d+: .*test "nobody reaches the vault": no device to test from: write `\*\/\*` to test the policy/,
    );
    const explain = await offline(['explain', '*', '10.9.0.5', '-f', file]);
    expect(explain.code).toBe(1);
    expect(explain.stderr).toContain('no device to test from: write `*/*` to test the policy');
    expect(explain.stderr).not.toMatch(/\n\s+at /);
  });

  it('reach writes a block with carve-outs as "except"', async () => {
    const file = ws.write(
      'except/netform.yaml',
      `version: 1
users:
  - email: carol@x.example
    devices:
      - { name: pc, public_key: "${wgKey()}" }
    rules:
      - { action: accept, destination: 10.20.0.0/16 }
rules:
  - { action: drop, destination: 10.0.0.0/8 }
`,
    );
    const r = await offline(['reach', 'carol@x.example', '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /\n {4}10\.0\.0\.0\/8 except 10\.3\.2\.1\/32, 10\.20\.0\.0\/16 \(all protocols\) by drop 10\.0\.0\.0\/8 \(global\) at .*netform\.yaml:9, global portless-drop\n/,
    );
  });
});

describe('--live against a real server', () => {
  it('the same verdicts from the server, and a rule made by hand changes them', async () => {
    const file = ws.write(
      'live/p.yaml',
      `${POLICY}tests:
  - { name: u2 reaches part of the db host, from: u2@x.example, to: 10.1.2.3, expect: partial }
  - { name: nobody reaches 10.2/16, from: "*", to: 10.2.0.0/16, expect: drop }
`,
    );
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const same = await netform(server, ['test', '-f', file, '--live']);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    // The server's admin (who runs the tests' token) has no device: not a source of "*", a note.
    expect(same.stdout).toMatch(
      /PASS nobody reaches 10\.2\/16: .*\n {2}note: 1 user without a device is not a source of "\*"/,
    );

    const u2 = (await serverState(server)).users.find((u: { email: string }) => u.email === 'u2@x.example');
    await create(server, 'rules', { action: 'accept', destination: '10.1.2.0/24', user_id: u2.id });
    const live = await netform(server, ['test', '-f', file, '--live']);
    expect(live.code).toBe(1);
    expect(live.stdout).toMatch(
      /FAIL u2 reaches part of the db host: .*expected partial, got accept by accept 10\.1\.2\.0\/24 \(u2@x\.example\) at id [\w-]+, user portless-accept/,
    );
    const explain = await netform(server, ['explain', 'u2@x.example', '10.1.2.3', '--live']);
    expect(explain.stdout).toContain('u2@x.example/pc: ACCEPT');
    const who = await netform(server, ['who-can-reach', '10.1.2.3', '--live', '--format', 'json']);
    const entries = JSON.parse(who.stdout).accepted.entries as { users: string[]; verdict: string }[];
    expect(entries.map((e) => [e.users, e.verdict])).toEqual([
      [['u2@x.example'], 'accept'],
      [['u1@x.example'], 'partial'],
    ]);
  }, 60_000); // a handful of CLI runs against the server
});
