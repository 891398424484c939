/**
 * W3.6 end to end with the built CLI and a real server: access review anyone can run.
 * - validate, test, explain and drift with every password (and preshared key) unset: warnings, the
 *   preshared key "not checked", never "matches"; plan shows a secret it cannot read as read at
 *   apply (not pinned), and apply stops, naming the variable, for a change that would send it;
 * - a plan whose access test fails still writes its whole document, failures first, in every
 *   format, writes no saved plan and exits 1; passing plans say how many tests passed;
 * - a user with no devices has no tunnel; EMAIL/* tests the user's rules;
 * - SARIF from validate and test, valid against the OASIS 2.1.0 schema, each result at its line;
 * - hostile test names are escaped in the new text.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'cdktf';
import { describe, expect, it } from 'vitest';
import { FirezoneStack } from '../../../src/cdktf/index.js';
import { sarifSchemaErrors } from '../../helpers/sarif.js';
import type { TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const PSK = wgKey();
const SECRETS = { GRACE_PASSWORD: 'grace-has-a-long-password', GRACE_LAPTOP_PSK: PSK };
const UNSET = { GRACE_PASSWORD: undefined, GRACE_LAPTOP_PSK: undefined };

const RULES = `version: 1
users:
  - email: grace@example.com
    password: { env: GRACE_PASSWORD }
    devices:
      - { name: laptop, public_key: "${wgKey()}", preshared_key: { env: GRACE_LAPTOP_PSK } }
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "22" }
  - email: erin@example.com
  - { email: admin@example.com, role: admin } # the test server's admin: declared, so nothing is pending (W3.5)
rules:
  - { action: drop, destination: 10.0.0.0/8 }
`;

const PASSING = `tests:
  - { name: grace reaches git, from: grace@example.com, to: 10.1.2.3:22/tcp, expect: accept }
  - { name: erin has no tunnel, from: erin@example.com, to: 10.1.2.3:22/tcp, expect: drop }
  - { name: erin's policy, from: erin@example.com/*, to: "[2001:db8::1]:443/tcp", expect: accept }
`;

/** The 1-based line of the first line holding `text`. */
function lineOf(yaml: string, text: string): number {
  const index = yaml.split('\n').findIndex((line) => line.includes(text));
  if (index < 0) throw new Error(`${text} is not in the file`);
  return index + 1;
}

describe('every password and preshared key unset', () => {
  it('validate, test and explain warn and run; nothing is needed to evaluate rules', async () => {
    const file = ws.write('unset/netform.yaml', `${RULES}${PASSING}`);
    const validate = await netform(server, ['validate', '-f', file], UNSET);
    expect(validate.code, describeResult(validate)).toBe(0);
    expect(validate.stderr).toMatch(
      /warning: .*netform\.yaml:4:\d+: users\[0\]\.password: environment variable GRACE_PASSWORD is not set \(read only when it is sent: when plan or apply creates the user, or with --rotate-passwords\)/,
    );
    expect(validate.stderr).toMatch(
      /users\[0\]\.devices\[0\]\.preshared_key: environment variable GRACE_LAPTOP_PSK is not set/,
    );
    expect(validate.stdout).toMatch(/is valid \(2 warnings\)/);

    const tested = await netform(server, ['test', '-f', file], UNSET);
    expect(tested.code, describeResult(tested)).toBe(0);
    expect(tested.stdout).toContain('3 passed, 0 failed (against the declared rules: files only)');
    expect(tested.stdout).toMatch(/PASS erin has no tunnel: .*got no tunnel \(no device\)/);
    expect(tested.stderr).toMatch(/warning: .*GRACE_PASSWORD is not set/);

    const explained = await netform(server, ['explain', 'erin@example.com', '10.1.2.3:22/tcp', '-f', file], UNSET);
    expect(explained.code, describeResult(explained)).toBe(0);
    expect(explained.stdout).toBe(
      'erin@example.com -> 10.1.2.3:22/tcp, against the declared rules (files only)\nerin@example.com: NO TUNNEL (no device)\n',
    );
    const policy = await netform(server, ['explain', 'erin@example.com/*', '10.1.2.3:22/tcp', '-f', file], UNSET);
    expect(policy.stdout).toMatch(/erin@example\.com\/\*: DROP\n {2}decided by drop 10\.0\.0\.0\/8 \(global\)/);
  });

  it('plan shows a variable it cannot read as read at apply (W4.7); apply stops, naming it, and writes nothing', async () => {
    const file = ws.write('create/netform.yaml', RULES);
    const before = await serverState(server);
    const plan = await netform(server, ['plan', '-f', file], { ...SECRETS, GRACE_PASSWORD: undefined });
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stdout).toContain('password from environment variable GRACE_PASSWORD, read at apply: not pinned');
    const r = await netform(server, ['apply', '--yes', '-f', file], { ...SECRETS, GRACE_PASSWORD: undefined });
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stderr).toMatch(
      /netform\.yaml:\d+:\d+: user grace@example\.com is created with its password, and environment variable GRACE_PASSWORD is not set/,
    );
    const psk = await netform(server, ['plan', '-f', file], { ...SECRETS, GRACE_LAPTOP_PSK: '' });
    expect(psk.code, describeResult(psk)).toBe(2);
    expect(psk.stdout).toContain('preshared_key from environment variable GRACE_LAPTOP_PSK, read at apply: not pinned');
    const pskApply = await netform(server, ['apply', '--yes', '-f', file], { ...SECRETS, GRACE_LAPTOP_PSK: '' });
    expect(pskApply.code).toBe(1);
    expect(pskApply.stderr).toContain(
      'device grace@example.com/laptop is created with its preshared key, and environment variable GRACE_LAPTOP_PSK is empty',
    );
    expect(await serverState(server)).toEqual(before);
  });

  it('drift and plan after the create: the password is never read; the key is "not checked", never "matches"', async () => {
    const file = ws.write('drift/netform.yaml', RULES);
    const applied = await netform(server, ['apply', '-f', file, '--yes'], SECRETS);
    expect(applied.code, describeResult(applied)).toBe(0);

    // With every secret: clean.
    const clean = await netform(server, ['drift', '-f', file], SECRETS);
    expect(clean.code, describeResult(clean)).toBe(0);
    expect(clean.stdout).toContain('No changes: the server matches the desired state.');
    // No password at all (drift never sends one): clean, and no warning about it.
    const noPassword = await netform(server, ['drift', '-f', file], { ...SECRETS, GRACE_PASSWORD: undefined });
    expect(noPassword.code, describeResult(noPassword)).toBe(0);
    expect(noPassword.stdout).toContain('No changes: the server matches the desired state.');
    expect(noPassword.stdout + noPassword.stderr).not.toContain('GRACE_PASSWORD');

    // Nothing set: the key is not compared, and the summary says so; the exit code is unchanged.
    for (const command of ['drift', 'plan']) {
      const r = await netform(server, [command, '-f', file], UNSET);
      expect(r.code, describeResult(r)).toBe(0);
      expect(r.stdout).toContain(
        'not checked: preshared key of grace@example.com/laptop (environment variable GRACE_LAPTOP_PSK is not set)',
      );
      expect(r.stdout).not.toMatch(/matches/);
      expect(r.stdout.trim().split('\n').at(-1)).toBe(
        'No changes in what was compared; 1 field was not checked (their secret cannot be read here).',
      );
    }
    const json = JSON.parse((await netform(server, ['drift', '-f', file, '--format', 'json'], UNSET)).stdout);
    expect(json.not_checked).toEqual([
      {
        id: 'device:grace@example.com/laptop',
        label: 'device grace@example.com/laptop',
        field: 'preshared_key',
        reason: 'environment variable GRACE_LAPTOP_PSK is not set',
      },
    ]);
    const md = await netform(server, ['plan', '-f', file, '--format', 'markdown'], UNSET);
    expect(md.stdout).toContain(
      '- `not checked: preshared key of grace@example.com/laptop (environment variable GRACE_LAPTOP_PSK is not set)`',
    );
    expect(md.stdout).not.toMatch(/matches/);

    // A key that differs is still found when it can be read.
    const other = await netform(server, ['drift', '-f', file], { ...SECRETS, GRACE_LAPTOP_PSK: wgKey() });
    expect(other.code, describeResult(other)).toBe(2);
    expect(other.stdout).toContain('preshared_key: (sensitive value changed)');
  }, 90_000); // a dozen CLI runs against the server
});

describe('a plan whose access test fails', () => {
  const FAILING = `tests:
  - { name: grace reaches git, from: grace@example.com, to: 10.1.2.3:22/tcp, expect: accept }
  - name: "erin reaches git \\e[2J\\u202e"
    from: erin@example.com
    to: 10.1.2.3:22/tcp
    expect: accept
`;

  it('writes its whole document in every format, failures first, no saved plan, exit 1', async () => {
    const text = `${RULES}${FAILING}`;
    const file = ws.write('failing/netform.yaml', text);
    const line = lineOf(text, 'erin reaches git');
    for (const format of ['markdown', 'text', 'json']) {
      const out = ws.path(`failing-${format}.json`);
      const r = await netform(server, ['plan', '-f', file, '--format', format, '-o', out], SECRETS);
      expect(r.code, describeResult(r)).toBe(1);
      expect(r.stdout.length).toBeGreaterThan(0);
      expect(existsSync(out)).toBe(false);
      expect(r.stderr).toContain('1 access test failed (listed first in the plan); no saved plan was written');
      if (format === 'json') {
        const doc = JSON.parse(r.stdout);
        expect(Object.keys(doc)[0]).toBe('tests');
        expect(doc.seal).toBeUndefined();
        expect(doc.tests).toMatchObject({
          passed: 1,
          failed: 1,
          failures: [
            {
              name: 'erin reaches git \u001b[2J\u202e',
              at: expect.stringMatching(new RegExp(`netform\\.yaml:${line}$`)),
              from: 'erin@example.com',
              to: '10.1.2.3:22/tcp',
              expected: 'accept',
              got: 'no tunnel',
              decided_by: 'no device',
            },
          ],
        });
        continue;
      }
      const failure = new RegExp(
        `FAIL erin reaches git \\\\u001b\\[2J\\\\u202e at .*netform\\.yaml:${line}: erin@example\\.com -> 10\\.1\\.2\\.3:22/tcp: expected accept, got no tunnel; decided by no device`,
      );
      expect(r.stdout).toMatch(failure);
      // Hostile characters of a test name are escaped in the text and markdown.
      expect(r.stdout).not.toMatch(/\u001b|\u202e/);
      // Failures first: before the plan's summary.
      expect(r.stdout.search(failure)).toBeLessThan(r.stdout.indexOf('No changes'));
      expect(r.stdout).toContain('Access tests (after apply): 1 of 2 failed, 1 passed.');
    }
  });

  it('a passing plan says how many tests passed, in every format', async () => {
    const file = ws.write('passing/netform.yaml', `${RULES}${PASSING}`);
    for (const format of ['text', 'markdown']) {
      const r = await netform(server, ['plan', '-f', file, '--format', format], SECRETS);
      expect([0, 2], describeResult(r)).toContain(r.code);
      expect(r.stdout).toContain('Access tests (after apply): all 3 passed.');
    }
    const json = JSON.parse((await netform(server, ['plan', '-f', file, '--format', 'json'], SECRETS)).stdout);
    expect(json.tests).toEqual({ evaluated: 'after-apply', passed: 3, failed: 0, failures: [] });
  });
});

describe('SARIF', () => {
  it('validate and test: valid SARIF 2.1.0, URIs relative to the repository root, each result at its line', async () => {
    mkdirSync(ws.path('repo/.git'), { recursive: true });
    // A global accept of everything: the drop before it never decides anything (a warning at its line).
    const text = `${RULES}  - { action: accept, destination: 0.0.0.0/0 }
tests:
  - { name: grace reaches git, from: grace@example.com, to: 10.1.2.3:22/tcp, expect: accept }
  - { name: erin reaches git, from: erin@example.com, to: 10.1.2.3:22/tcp, expect: accept }
`;
    ws.write('repo/desired/netform.yaml', text);
    const cwd = ws.path('repo/desired');
    const validate = await netform(server, ['validate', '-f', '.', '--format', 'sarif'], UNSET, cwd);
    expect(validate.code, describeResult(validate)).toBe(1); // a test fails
    const log = JSON.parse(validate.stdout);
    expect(sarifSchemaErrors(log)).toEqual([]);
    const at = (r: any) => [
      r.ruleId,
      r.locations[0].physicalLocation.artifactLocation.uri,
      r.locations[0].physicalLocation.region.startLine,
    ];
    expect(log.runs[0].results.map(at)).toEqual([
      ['desired-state/warning', 'desired/netform.yaml', lineOf(text, 'password: { env: GRACE_PASSWORD }')],
      ['desired-state/warning', 'desired/netform.yaml', lineOf(text, 'preshared_key: { env: GRACE_LAPTOP_PSK }')],
      ['desired-state/warning', 'desired/netform.yaml', lineOf(text, 'destination: 10.0.0.0/8')],
      ['access-test/failed', 'desired/netform.yaml', lineOf(text, 'name: erin reaches git')],
    ]);
    expect(log.runs[0].results[3].message.text).toMatch(/erin reaches git.*got no tunnel \(no device\)/);

    const tested = await netform(
      server,
      ['test', '-f', 'desired/netform.yaml', '--format', 'sarif'],
      UNSET,
      ws.path('repo'),
    );
    expect(tested.code).toBe(1);
    const testLog = JSON.parse(tested.stdout);
    expect(sarifSchemaErrors(testLog)).toEqual([]);
    expect(testLog.runs[0].results.filter((r: any) => r.ruleId === 'access-test/failed').map(at)).toEqual([
      ['access-test/failed', 'desired/netform.yaml', lineOf(text, 'name: erin reaches git')],
    ]);

    // A valid desired state: an empty, valid log, exit 0.
    const good = await netform(
      server,
      ['validate', '-f', ws.write('repo/ok/netform.yaml', RULES), '--format', 'sarif'],
      SECRETS,
    );
    expect(good.code, describeResult(good)).toBe(0);
    expect(sarifSchemaErrors(JSON.parse(good.stdout))).toEqual([]);
  });

  it('a CDKTF stack: results without a location (its cdk.tf.json is usually not committed), still valid', async () => {
    mkdirSync(ws.path('repo/.git'), { recursive: true });
    const outdir = ws.path('repo/cdktf.out');
    const app = new App({ outdir });
    new FirezoneStack(app, 'company', {
      users: [{ email: 'alice@example.com', rules: [{ action: 'accept', destination: '10.1.0.0/16' }] }],
      tests: [{ name: 'alice reaches ssh', from: 'alice@example.com', to: '10.1.2.3:22/tcp', expect: 'accept' }],
    });
    app.synth();
    const stack = join(outdir, 'stacks', 'company');
    const r = await netform(server, ['test', '-f', stack, '--format', 'sarif'], {}, ws.path('repo'));
    expect(r.code, describeResult(r)).toBe(1); // alice has no device: no tunnel
    const log = JSON.parse(r.stdout);
    expect(sarifSchemaErrors(log)).toEqual([]);
    expect(log.runs[0].results).toEqual([
      expect.objectContaining({
        ruleId: 'access-test/failed',
        message: { text: expect.stringMatching(/alice reaches ssh.*no tunnel \(no device\)/) },
      }),
    ]);
    expect(log.runs[0].results[0].locations).toBeUndefined();
  });
});
