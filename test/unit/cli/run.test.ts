/**
 * The command line as a function: run(argv, io) (src/cli/run.ts) imported from src/, no built
 * dist/, with its streams in memory. Each run is its own: its environment, its secrets, its
 * commander program; usage errors, help and the version come back as exit codes; a long-running
 * command stops through io's stop requests.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo, type MemoryIo } from '../../../src/cli/io.js';
import { run } from '../../../src/cli/run.js';
import { NETFORM_VERSION } from '../../../src/version.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import { runInProcess, startInProcess } from '../../helpers/run-in-process.js';
import type { TestServer } from '../../helpers/server-api.js';

let dir: string;
let desired: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-run-'));
  desired = join(dir, 'netform.yaml');
  writeFileSync(
    desired,
    'version: 1\nsettings: { manage: { users: ["*@run.test"] } }\nusers:\n  - email: carol@run.test\n    devices: []\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('run(argv, io)', () => {
  it('runs the sources, not a built dist/: every frame that writes the output is under src/', async () => {
    const io = memoryIo({ cwd: dir });
    const writers: string[] = [];
    const write = io.out.write.bind(io.out);
    io.out.write = ((chunk: string) => {
      writers.push(new Error('where').stack ?? '');
      return write(chunk);
    }) as typeof io.out.write;
    // `completion` loads every command's module through the registry.
    expect(await run(['completion', 'bash'], io)).toBe(0);
    expect(io.stdout()).toContain('_netform()');
    expect(writers.join('\n')).toMatch(/\/src\/cli\/commands\/completion\.ts:\d+/);
    expect(writers.join('\n')).not.toContain(fileURLToPath(new URL('../../../dist/', import.meta.url)));
  });

  it('returns the exit codes of --version, --help and a usage error, with their words on io', async () => {
    const version = memoryIo({ cwd: dir });
    expect(await run(['--version'], version)).toBe(0);
    expect(version.stdout()).toBe(`${NETFORM_VERSION}\n`);
    expect(version.stderr()).toBe('');

    const help = memoryIo({ cwd: dir });
    expect(await run(['plan', '--help'], help)).toBe(0);
    expect(help.stdout()).toMatch(/^Usage: netform plan \[options\]\n/);
    expect(help.stdout()).toContain('(env: NETFORM_TOKEN)');
    expect(help.stderr()).toBe('');

    const usage = memoryIo({ cwd: dir });
    expect(await run(['plan', '--url', 'http://127.0.0.1:9'], usage)).toBe(1);
    expect(usage.stdout()).toBe('');
    expect(usage.stderr()).toMatch(/^error: required option '-f, --file <path>' not specified\n\nUsage: netform plan/);

    const unknown = memoryIo({ cwd: dir });
    expect(await run(['no-such-command'], unknown)).toBe(1);
    expect(unknown.stderr()).toContain("error: unknown command 'no-such-command'");
    // Nothing went to the process: its exit code is untouched.
    expect(process.exitCode ?? 0).toBe(0);
  });

  it('keeps nothing between runs: each redacts its own secrets and sees only its own environment', async () => {
    const tokenA = 'nf_run_a_0123456789abcdef';
    const tokenB = 'nf_run_b_fedcba9876543210';
    const fileB = join(dir, 'token-b');
    writeFileSync(fileB, `${tokenB}\n`);
    // A bad --url that quotes both tokens: the message names it whole, the run's secrets cut out.
    const url = `ftp://example.test/${tokenA}/${tokenB}`;
    const a = memoryIo({ cwd: dir, env: { NETFORM_TOKEN: tokenA, NETFORM_URL: url } });
    const b = memoryIo({ cwd: dir });
    const [codeA, codeB] = await Promise.all([
      run(['plan', '-f', desired], a),
      run(['plan', '-f', desired, '--url', url, '--token-file', fileB], b),
    ]);
    expect([codeA, codeB]).toEqual([1, 1]);
    // A's token came from its environment; B's token from its file is B's secret alone.
    expect(a.stderr()).toBe(`error: --url: not an http(s) URL: ftp://example.test/(secret)/${tokenB}\n`);
    expect(b.stderr()).toBe(`error: --url: not an http(s) URL: ftp://example.test/${tokenA}/(secret)\n`);
    expect(a.secrets.redact(tokenB)).toBe(tokenB);
    expect(b.secrets.redact(tokenB)).toBe('(secret)');

    // A third run, without A's environment, has no server at all (and nothing of the process's).
    const c = memoryIo({ cwd: dir });
    expect(await run(['plan', '-f', desired], c)).toBe(1);
    expect(c.stderr()).toMatch(/^error: no server given: pass --url URL \(or set NETFORM_URL\)/);
  });

  it('reads `-f -` from io.in', async () => {
    const io = memoryIo({ cwd: dir, stdin: 'version: 1\nusers:\n  - email: x@run.test\n    bogus: 1\n' });
    expect(await run(['validate', '-f', '-'], io)).toBe(1);
    expect(io.stderr()).toContain('stdin:4');
  });
});

describe('run(argv, io) against a server in this process', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startInProcessServer({ logger: false });
  });
  afterAll(() => server?.stop());

  it('plans, then applies and plans again with nothing to do', async () => {
    const env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
    const plan = await runInProcess(['plan', '-f', desired], { env });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('+ user carol@run.test');
    expect(plan.stdout).not.toContain(server.token);

    const apply = await runInProcess(['apply', '-f', desired, '--yes'], { env });
    expect(apply.code).toBe(0);
    const { body } = await server.api('GET', '/v0/users');
    expect(JSON.stringify(body)).toContain('carol@run.test');

    const again = await runInProcess(['plan', '-f', 'netform.yaml'], { env, cwd: dir });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No changes');
  });

  it('saves a plan sealed with the token read once, and applies it', async () => {
    const env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
    const more = join(dir, 'saved.yaml');
    writeFileSync(
      more,
      'version: 1\nsettings: { manage: { users: ["*@run.test"] } }\nusers:\n  - email: carol@run.test\n    devices: []\n  - email: dave@run.test\n    devices: []\n',
    );
    const saved = join(dir, 'plan.json');
    const plan = await runInProcess(['plan', '-f', more, '-o', saved], { env });
    expect(plan.code).toBe(2);
    const apply = await runInProcess(['apply', saved], { env });
    expect(apply.stderr).toBe('');
    expect(apply.code).toBe(0);
    // Another token, another seal: refused before anything is opened.
    const other = await runInProcess(['apply', saved], { env: { ...env, NETFORM_TOKEN: 'nf_another_token_0000' } });
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^error: /);
    expect(other.stderr).not.toContain('nf_another_token_0000');
  });
});

describe('long-running commands in-process', () => {
  it('drift --every stops at a stop request on io, after its run', async () => {
    const server = await startInProcessServer({ logger: false });
    try {
      const env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
      // Once a year, and once at start: one run, then waiting.
      const running = startInProcess(['drift', '-f', desired, '--every', '0 0 1 1 *', '--run-at-start'], { env });
      await until(running.io, /"status":"drift"/);
      running.stop('SIGTERM');
      const { code, stdout, stderr } = await running.done;
      expect(code).toBe(0);
      expect(stdout.trim().split('\n')).toHaveLength(1);
      expect(stderr).toContain('drift: SIGTERM: stopping');
      expect(stderr).toContain('drift: stopped after 1 run(s)');
      expect(stderr).not.toContain(server.token);
    } finally {
      await server.stop();
    }
  });

  it('serve stops at a stop request on io, finishing as it does at SIGTERM', async () => {
    const running = startInProcess(['serve', '--db', join(dir, 'serve.db'), '--host', '127.0.0.1', '--port', '0'], {
      env: { NETFORM_LOG_LEVEL: 'silent' },
    });
    await until(running.io, /listening on (http:\/\/\S+)/);
    const url = /listening on (\S+)/.exec(running.io.stdout())![1]!;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    running.stop('SIGTERM');
    const { code, stderr } = await running.done;
    expect(code).toBe(0);
    expect(stderr).toContain('SIGTERM: finishing requests in flight');
  });

  it('a second stop request ends the run at once with its code', async () => {
    const running = startInProcess(['serve', '--db', join(dir, 'serve2.db'), '--host', '127.0.0.1', '--port', '0'], {
      env: { NETFORM_LOG_LEVEL: 'silent' },
    });
    await until(running.io, /listening on/);
    running.stop('SIGINT');
    running.stop('SIGINT');
    const { code, stderr } = await running.done;
    expect(stderr).toContain('SIGINT again: exiting without waiting');
    expect(code).toBe(1);
    expect(running.io.exits).toEqual([1]);
  });
});

/** Resolves once stdout matches; io's writes are synchronous, so each write is looked at. */
function until(io: MemoryIo, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`stdout never matched ${pattern}: ${io.stdout()}${io.stderr()}`)),
      20_000,
    );
    const check = () => {
      if (!pattern.test(io.stdout())) return;
      clearTimeout(timer);
      resolve();
    };
    const write = io.out.write.bind(io.out);
    io.out.write = ((chunk: string, ...rest: never[]) => {
      const written = write(chunk, ...rest);
      check();
      return written;
    }) as typeof io.out.write;
    check();
  });
}
