/** `netform validate` as users run it: the built CLI in a child process. Build first. */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';

const FIXTURES = resolve('test/fixtures/desired');

describe('netform validate', () => {
  it('passes the examples with a one-line summary on stdout', async () => {
    const basic = await runCli(['validate', '-f', 'examples/basic/netform.yaml'], {
      env: { ALICE_PASSWORD: undefined },
    });
    expect(basic).toEqual({
      code: 0,
      stdout: 'examples/basic/netform.yaml is valid: 5 users, 6 devices, 7 rules\n',
      stderr: '',
    });
    const payments = await runCli(['validate', '-f', 'examples/multi-team/payments'], {
      env: { ALICE_PASSWORD: undefined },
    });
    expect(payments).toEqual({
      code: 0,
      stdout: 'examples/multi-team/payments is valid: 2 users, 2 devices, 3 rules\n',
      stderr: '',
    });
    const search = await runCli(['validate', '-f', 'examples/multi-team/search']);
    expect(search.stdout).toBe('examples/multi-team/search is valid: 2 users, 3 devices, 4 rules\n');
  });

  it('prints every error as file:line:column: path: message, relative to the current directory, and exits 1', async () => {
    const result = await runCli(['validate', '-f', 'rule-fields.yaml'], { cwd: FIXTURES });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'rule-fields.yaml:3:34: rules[0].destination: is invalid (expected an IP address or CIDR block such as 10.1.0.0/16)',
    );
    expect(lines.at(-1)).toBe('9 errors in rule-fields.yaml');
    expect(lines).toHaveLength(10);
    const fromRoot = await runCli(['validate', '-f', join(FIXTURES, 'rule-fields.yaml')]);
    expect(fromRoot.stderr.split('\n')[0]).toBe(
      'test/fixtures/desired/rule-fields.yaml:3:34: rules[0].destination: is invalid (expected an IP address or CIDR block such as 10.1.0.0/16)',
    );
  });

  it('--format github prints one workflow annotation per error on stdout', async () => {
    const result = await runCli(['validate', '-f', 'test/fixtures/desired/limits.yaml', '--format', 'github']);
    expect(result.code).toBe(1);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      '::error file=test/fixtures/desired/limits.yaml,line=4,col=13::settings.limits.delete: must be a count of objects (such as 5) or a percentage of the live objects (such as "10%25")',
      '::error file=test/fixtures/desired/limits.yaml,line=5,col=13::settings.limits.update: must be a count of objects (such as 5) or a percentage of the live objects (such as "10%25")',
      '::error file=test/fixtures/desired/limits.yaml,line=9,col=3::settings: settings are repository-wide and already declared differently at test/fixtures/desired/limits.yaml:3:3; declare them in one file',
    ]);
    expect(result.stderr).toBe('3 errors in test/fixtures/desired/limits.yaml\n');
    const missing = await runCli(['validate', '-f', 'no/such/path', '--format', 'github']);
    expect(missing.stdout).toBe('::error file=no/such/path::no such file or folder\n');
  });

  it('--format json prints the diagnostics as a JSON array, empty when valid', async () => {
    const result = await runCli(['validate', '-f', 'test/fixtures/desired/device-limit.yaml', '--format', 'json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual([
      {
        file: 'test/fixtures/desired/device-limit.yaml',
        line: 15,
        column: 9,
        path: 'users[0].devices[10]',
        message:
          'Maximum device limit reached. Remove an existing device before creating a new one. (alice@example.com declares 12 devices; the server allows 10 per user unless its limit was raised)',
        severity: 'error',
      },
    ]);
    const valid = await runCli(['validate', '-f', 'examples/multi-team/search', '--format', 'json']);
    expect(valid).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
  });

  it('refuses a missing -f and an unknown format', async () => {
    const noFile = await runCli(['validate']);
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toContain("required option '-f, --file <path>' not specified");
    const badFormat = await runCli(['validate', '-f', 'examples/basic', '--format', 'xml']);
    expect(badFormat.code).toBe(1);
    expect(badFormat.stderr).toContain("argument 'xml' is invalid");
  });
});

describe('secrets never reach the output', () => {
  let dir: string;
  const planted = {
    goodPassword: `PLANTED-good-${randomBytes(6).toString('hex')}`,
    shortPassword: `PL${randomBytes(3).toString('hex')}`,
    goodPsk: randomBytes(32).toString('base64'),
    badPsk: `PLANTEDpsk${randomBytes(4).toString('hex')}`,
    literal: `PLANTED-literal-${randomBytes(6).toString('hex')}`,
  };
  const env = { NF_GOOD_PASSWORD: planted.goodPassword, NF_SHORT_PASSWORD: planted.shortPassword };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netform-validate-secrets-'));
    // A repository: the secret files one folder up are inside it.
    mkdirSync(join(dir, '.git'));
    mkdirSync(join(dir, 'valid'));
    mkdirSync(join(dir, 'invalid'));
    writeFileSync(join(dir, 'good.psk'), `${planted.goodPsk}\n`);
    writeFileSync(join(dir, 'bad.psk'), `${planted.badPsk}\n`);
    const device = (name: string, key: string, psk: string) =>
      `      - { name: ${name}, public_key: "${key}", preshared_key: { file: ../${psk} } }\n`;
    writeFileSync(
      join(dir, 'valid', 'netform.yaml'),
      'version: 1\nusers:\n  - email: a@example.com\n    password: { env: NF_GOOD_PASSWORD }\n    devices:\n' +
        device('laptop', 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=', 'good.psk'),
    );
    writeFileSync(
      join(dir, 'invalid', 'netform.yaml'),
      'version: 1\nusers:\n  - email: a@example.com\n    password: { env: NF_SHORT_PASSWORD }\n    devices:\n' +
        device('laptop', 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=', 'bad.psk') +
        device('phone', 'czTQMxaFqFgu1WLW8vVpN8eaaNkb4fCB491C7dz4iks=', 'good.psk') +
        `  - email: b@example.com\n    password: ${planted.literal}\n`,
    );
    // A syntax error on the line of a literal: the parser's excerpt of the source must not be shown.
    writeFileSync(
      join(dir, 'invalid', 'broken.yaml'),
      `version: 1\nusers:\n  - email: c@example.com\n    password: [${planted.literal}\n`,
    );
    writeFileSync(
      join(dir, 'invalid', 'more.yaml'),
      `version: 1\nusers:\n  - email: d@example.com\n    password: { env: NF_GOOD_PASSWORD }\n    devices: [{ name: x, public_key: "a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=", preshared_key: { file: ../good.psk } }]\n`,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('in every format, valid or not', async () => {
    const outputs: string[] = [];
    for (const format of ['text', 'github', 'json']) {
      const valid = await runCli(['validate', '-f', join(dir, 'valid'), '--format', format], { env });
      expect(valid.code, valid.stderr).toBe(0);
      const invalid = await runCli(['validate', '-f', join(dir, 'invalid'), '--format', format], { env });
      expect(invalid.code).toBe(1);
      outputs.push(valid.stdout, valid.stderr, invalid.stdout, invalid.stderr);
    }
    const all = outputs.join('\n');
    // The invalid folder's errors were found; the secrets were not even read (W3.6: a value is read,
    // and checked, where it is sent or compared: plan-unreadable-secrets.test.ts) ...
    expect(all).toContain('YAML syntax');
    expect(all).not.toContain('should be at least 12 character(s)');
    expect(all).not.toContain('must be a base64-encoded string');
    // ... and none of the values appears anywhere.
    for (const [name, value] of Object.entries(planted)) expect(all.includes(value), name).toBe(false);
    expect(all).not.toContain('PLANTED');
  });
});

describe('validate without secrets, and -f -', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netform-validate-nosecrets-'));
    writeFileSync(
      join(dir, 'netform.yaml'),
      'version: 1\nusers:\n  - email: a@example.com\n    password: { env: NF_UNSET_PASSWORD }\n    devices:\n' +
        '      - { name: laptop, public_key: "a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=", preshared_key: { file: secrets/laptop.psk } }\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('checks the files with secrets unset: warnings, exit 0; plan does not stop at the files for them', async () => {
    const env = { NF_UNSET_PASSWORD: undefined };
    const text = await runCli(['validate', '-f', dir], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/is valid \(2 warnings\): 1 user, 1 device, 0 rules\n$/);
    expect(text.stderr).toContain('warning: ');
    expect(text.stderr).toMatch(
      /netform\.yaml:4:\d+: users\[0\]\.password: environment variable NF_UNSET_PASSWORD is not set \(read only when it is sent: when plan or apply creates the user, or with --rotate-passwords\)/,
    );
    expect(text.stderr).toMatch(
      /users\[0\]\.devices\[0\]\.preshared_key: secret file secrets\/laptop\.psk cannot be read .*no such file \(read by plan, apply and drift of this device, which compare it with the server\)/,
    );
    const github = await runCli(['validate', '-f', dir, '--format', 'github'], { env });
    expect(github.code).toBe(0);
    expect(github.stdout).toMatch(
      /^::warning file=[^,]+netform\.yaml,line=4,col=\d+::users\[0\]\.password: environment variable NF_UNSET_PASSWORD is not set/m,
    );
    const json = await runCli(['validate', '-f', dir, '--format', 'json'], { env });
    expect(JSON.parse(json.stdout).map((d: { severity: string }) => d.severity)).toEqual(['warning', 'warning']);

    // A GitHub secret a fork cannot see is set to the empty string: also a warning only.
    expect((await runCli(['validate', '-f', dir], { env: { NF_UNSET_PASSWORD: '' } })).code).toBe(0);

    const plan = await runCli(['plan', '-f', dir], {
      env: { ...env, NETFORM_URL: 'http://127.0.0.1:9', NETFORM_TOKEN: 'x' },
    });
    // A secret is needed only where it is sent or compared (W3.6): the files are not the problem,
    // the server that is not there is (the e2e review-without-secrets.test.ts plans against one).
    expect(plan.code).toBe(1);
    expect(plan.stderr).not.toContain('the desired state has errors');
    expect(plan.stderr).not.toContain('NF_UNSET_PASSWORD');
  });

  it('refuses a secret file outside the repository, in validate too, without reading it', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'netform-validate-repo-'));
    try {
      mkdirSync(join(repo, '.git'));
      mkdirSync(join(repo, 'desired'));
      writeFileSync(join(repo, 'outside.psk'), 'not a secret of this repository\n');
      writeFileSync(
        join(repo, 'desired', 'netform.yaml'),
        'version: 1\nusers:\n  - email: a@example.com\n    password: { file: /etc/hostname }\n    devices:\n' +
          '      - { name: laptop, public_key: "a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=", preshared_key: { file: ../../outside.psk } }\n' +
          '  - email: b@example.com\n    password: { file: ../secrets/b.password }\n',
      );
      const result = await runCli(['validate', '-f', join(repo, 'desired')], { cwd: repo });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /netform\.yaml:4:\d+: users\[0\]\.password: secret file \/etc\/hostname is outside the repository \(\.\); keep secret files inside it, or use \{ env: NAME \}/,
      );
      expect(result.stderr).toMatch(
        /users\[0\]\.devices\[0\]\.preshared_key: secret file \.\.\/\.\.\/outside\.psk is outside the repository/,
      );
      // Inside the repository but not present (a fork's checkout): only a warning.
      expect(result.stderr).toMatch(
        /warning: .*users\[1\]\.password: secret file \.\.\/secrets\/b\.password cannot be read/,
      );
      expect(result.stderr).not.toContain('not a secret of this repository');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('-f - reads one YAML document stream from standard input', async () => {
    const input =
      'version: 1\nusers:\n  - email: a@example.com\n---\nversion: 1\nrules:\n  - { action: drop, destination: 10.9.0.0/16 }\n';
    const ok = await runCli(['validate', '-f', '-'], { input });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('stdin is valid: 1 user, 0 devices, 1 rule\n');
    const bad = await runCli(['validate', '-f', '-'], {
      input: 'version: 1\nusers:\n  - email: a@example.com\n    role: superuser\n',
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^stdin:4:\d+: users\[0\]\.role: /m);
  });
});
