/**
 * Files named on the command line (security review 2026-11b, G5 and G7), as the built CLI handles
 * them: an output path that is already a symlink (a pull request can commit one) is replaced, its
 * target left alone; `export -o` still refuses a file (or link) already there. Files the operator
 * names (`--token-file`, `--ca-file`, the embedded server's token, a saved plan; `--tls-cert` and
 * `--tls-key` in test/integration/server/tls.test.ts) are regular files within a bound: `/dev/zero`,
 * a FIFO and an oversized file are refused at once, naming the flag and the path.
 */
import { execFileSync } from 'node:child_process';
import {
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  mkdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { describeResult } from '../../helpers/workspace.js';

let dir: string;
let desired: string;
let fifo: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-operator-files-'));
  execFileSync('git', ['init', '-q', dir]);
  desired = join(dir, 'desired');
  mkdirSync(desired);
  writeFileSync(join(desired, 'n.yaml'), 'version: 1\nusers:\n  - email: a@example.com\n');
  fifo = join(dir, 'a.fifo');
  execFileSync('mkfifo', [fifo]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NO_SERVER = { NETFORM_URL: 'http://127.0.0.1:1', NETFORM_TOKEN: undefined, NETFORM_PLAN_KEY: undefined };

/** Refused at once (exit 1), with one `error:` line that says `expected`, and nothing on stdout. */
function expectRefused(result: CliResult, expected: string): void {
  expect(result.code, describeResult(result)).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toBe(`error: ${expected}\n`);
}

describe('output paths that are symlinks (G5)', () => {
  it('plan -o replaces a symlink at the path with the saved plan, and the link target is unchanged', async () => {
    const victim = join(dir, 'victim-script.sh');
    writeFileSync(victim, 'echo original script\n');
    symlinkSync(victim, join(dir, 'plan.json'));
    const planned = await runCli(['plan', '--embedded', './e.db', '-f', 'desired', '-o', 'plan.json'], {
      cwd: dir,
      env: { NETFORM_PLAN_KEY: undefined, NETFORM_URL: undefined },
    });
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(lstatSync(join(dir, 'plan.json')).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')).format).toBe('netform.plan');
    expect(readFileSync(victim, 'utf8')).toBe('echo original script\n');
    // No temporary file is left beside it.
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('operator-named files: regular files within a bound (G7)', () => {
  it('--token-file /dev/zero, a FIFO or a file over 64 KiB is refused at once, naming the flag and the path', async () => {
    const big = join(dir, 'big.token');
    writeFileSync(big, 'x'.repeat(64 * 1024 + 1));
    const started = Date.now();
    const plan = (tokenFile: string) =>
      runCli(['plan', '-f', desired, '--token-file', tokenFile], { env: NO_SERVER, timeoutMs: 20_000 });
    expectRefused(await plan('/dev/zero'), '--token-file: /dev/zero is not a regular file (it is a device)');
    expectRefused(await plan(fifo), `--token-file: ${fifo} is not a regular file (it is a FIFO)`);
    expectRefused(await plan(big), `--token-file: ${big} is larger than 64 KiB, the limit for a token file`);
    expectRefused(await plan(join(dir, 'absent')), `--token-file: cannot read ${join(dir, 'absent')} (no such file)`);
    // Each run is refused before reading: none of them grows for seconds as /dev/zero did.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('--ca-file /dev/zero or a file over 1 MiB is refused', async () => {
    const big = join(dir, 'big.pem');
    writeFileSync(big, '#'.repeat(1024 * 1024 + 1));
    const plan = (ca: string) =>
      runCli(['plan', '-f', desired, '--token', 'x', '--ca-file', ca], { env: NO_SERVER, timeoutMs: 20_000 });
    expectRefused(await plan('/dev/zero'), '--ca-file: /dev/zero is not a regular file (it is a device)');
    expectRefused(await plan(big), `--ca-file: ${big} is larger than 1 MiB, the limit for a PEM file`);
  });

  it('the embedded server token (<database>.token) must be a small regular file', async () => {
    const db = join(dir, 'fifo.db');
    execFileSync('mkfifo', [`${db}.token`]);
    const planned = await runCli(['plan', '--embedded', db, '-f', desired], {
      env: { NETFORM_PLAN_KEY: undefined, NETFORM_URL: undefined },
      timeoutMs: 20_000,
    });
    expectRefused(planned, `the embedded token: ${db}.token is not a regular file (it is a FIFO)`);
    // apply PLANFILE reads it first, for the key that checks the plan's seal: the same words.
    const applied = await runCli(['apply', join(dir, 'any-plan.json'), '--embedded', db], {
      env: { NETFORM_PLAN_KEY: undefined, NETFORM_URL: undefined },
      timeoutMs: 20_000,
    });
    expectRefused(applied, `the embedded token: ${db}.token is not a regular file (it is a FIFO)`);
  });

  it('a saved plan is a regular file: apply /dev/zero and a FIFO are refused', async () => {
    const apply = (plan: string) =>
      runCli(['apply', plan, '--token', 'x'], { env: { ...NO_SERVER, NETFORM_TOKEN: undefined }, timeoutMs: 20_000 });
    expectRefused(await apply('/dev/zero'), '/dev/zero: is not a regular file (it is a device)');
    expectRefused(await apply(fifo), `${fifo}: is not a regular file (it is a FIFO)`);
  });
});
