/**
 * Issue W3.1 end to end: with any kind of bad desired state, `plan` and `drift` against a real
 * server whose lists are still arriving exit 1 with the file's errors only (no stack trace, no
 * byte of the token), run after run; `drift --every` whose files turn invalid and then valid
 * again reports both and keeps running; the scheduler stops promptly on SIGTERM even mid-run, and
 * when its parent goes away (npx passes no signals on).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClock } from '../../../server/clock.js';
import { createDevice } from '../../../server/services/devices.js';
import { createUser } from '../../../server/services/users.js';
import { openStore } from '../../../server/store/index.js';
import { builtCli, runCli, runCliProcessNode, SHORT_LIVED_NODE, type CliResult } from '../../helpers/cli.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { startDrift } from '../../helpers/drift.js';

let server: TestServer;
let dir: string;

const RUNS = 10;
/**
 * Of each kind's runs, one is a process of the built CLI: the bin's own boundary, where an error
 * nobody handled used to crash the process with got's options printed. The kinds take the commands
 * in turn for it (five kinds, four commands: each command runs as a process at least once). The
 * others run in this process through run(argv, io): the same race with the arriving lists, and an
 * error nobody handled there fails this file (vitest reports it) as it would crash a process.
 * (Each process costs about half a CPU second, nearly all of it Node loading the CLI's modules.)
 */
const PROCESS_RUNS = 1;

/** Each kind of bad desired state the reviews tried; each must end in `error: the desired state has errors:`. */
const BAD_FILES: Record<string, string> = {
  'malformed YAML': 'version: 1\nusers:\n  - email: [a@example.com\n',
  'unknown key': 'version: 1\nusers:\n  - email: a@example.com\n    colour: blue\n',
  'invalid email': 'version: 1\nusers:\n  - email: not-an-email\n',
  // A missing variable is no longer an error (W3.6: secrets are read where they are used); a secret
  // file that breaks the containment rule is, everywhere.
  'secret file outside the repository':
    'version: 1\nusers:\n  - email: grace@example.com\n    password: { file: /etc/hostname }\n',
  'duplicate device': [
    'version: 1',
    'users:',
    '  - email: a@example.com',
    '    devices:',
    `      - { name: laptop, public_key: "${randomBytes(32).toString('base64')}" }`,
    `      - { name: laptop, public_key: "${randomBytes(32).toString('base64')}" }`,
    '',
  ].join('\n'),
};

beforeAll(async () => {
  [server, dir] = await Promise.all([startTestServer(), mkdtemp(join(tmpdir(), 'netform-boundary-'))]);
  // 240 devices (the default tunnel network holds 253), some with long allowed_ips lists: the device list is still arriving
  // when a bad file has been found (what made the crash likely in the reviews). Made through the
  // server's own services on its database, in one transaction each (what a POST does, without 280
  // HTTP requests: the seeding is not what this file tests).
  const store = await openStore(server.dbPath);
  try {
    const ctx = { store, clock: createClock(), legacyDeviceUpdates: false };
    const users: string[] = [];
    for (let u = 0; u < 40; u++) users.push((await createUser(ctx, { email: `user${u}@example.com` })).id);
    for (let d = 0; d < 240; d++) {
      const long = d % 60 === 0;
      const device: Record<string, unknown> = {
        user_id: users[d % users.length],
        name: `device${d}`,
        public_key: randomBytes(32).toString('base64'),
      };
      if (long) {
        device.use_default_allowed_ips = false;
        device.allowed_ips = Array.from({ length: 4000 }, (_, i) => `10.${d % 250}.${(i >> 8) & 255}.${i & 255}/32`);
      }
      await createDevice(ctx, device);
    }
  } finally {
    await store.close();
  }
  const listed = await server.api('GET', '/v0/devices');
  expect(listed.status).toBe(200);
  expect(listed.body.data).toHaveLength(240);
  expect(listed.body.data.filter((d: { allowed_ips: string[] }) => d.allowed_ips.length === 4000)).toHaveLength(4);
});

afterAll(async () => {
  await Promise.all([server?.stop(), rm(dir, { recursive: true, force: true })]);
});

function env(): Record<string, string | undefined> {
  return { NETFORM_URL: server.url, NETFORM_TOKEN: server.token, NETFORM_TEST_UNSET_PASSWORD: undefined };
}

/** What no run may ever print: the token (or any part of it longer than its prefix), a stack, an inspected object. */
function expectNoLeak(result: Pick<CliResult, 'stdout' | 'stderr'>, token: string): void {
  const output = result.stdout + result.stderr;
  expect(output).not.toContain(token);
  expect(output).not.toContain(token.slice(-16));
  expect(output).not.toMatch(/authorization|Bearer|^\s+at /im);
  expect(output).not.toContain('node:events');
  expect(output).not.toContain('internal error');
}

/** A run of the built CLI as a process that lives a second or less (SHORT_LIVED_NODE: less CPU, the same output). */
const processRun = (args: string[], options: { env: Record<string, string | undefined> }) =>
  runCliProcessNode(SHORT_LIVED_NODE, args, options);

async function inBatches<T>(count: number, size: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < count; i += size) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(size, count - i) }, (_, j) => run(i + j)))));
  }
  return results;
}

describe('a bad desired state never prints the token (security review F1, newcomer review 2.1)', () => {
  for (const [k, [kind, text]] of Object.entries(BAD_FILES).entries()) {
    it(
      `plan and drift with ${kind}: exit 1, the file's errors only, ${RUNS} runs each (${PROCESS_RUNS} of all as processes)`,
      { timeout: 180_000 },
      async () => {
        const folder = join(dir, kind.replace(/ /g, '-'));
        await mkdir(folder, { recursive: true });
        await writeFile(join(folder, 'netform.yaml'), text);
        const commands = [
          ['plan', '-f', folder],
          ['plan', '-f', folder, '--format', 'json'],
          ['drift', '-f', folder],
          ['drift', '-f', folder, '--format', 'markdown'],
        ];
        // The kind's process runs are its first, starting at the command whose turn it is.
        const args = (i: number) => commands[(i + k) % commands.length]!;
        const results = await inBatches(RUNS * 2, 4, (i) =>
          (i < PROCESS_RUNS ? processRun : runCli)(args(i), { env: env() }).then((result) => ({
            args: args(i),
            result,
          })),
        );
        for (const { args, result } of results) {
          expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(1);
          expect(result.stderr).toMatch(/^error: the desired state has errors:\n {2}\S/);
          // One line per diagnostic, each naming the file: nothing else on stderr.
          for (const line of result.stderr.trimEnd().split('\n').slice(1))
            expect(line).toMatch(/^ {2}\S.*netform\.yaml/);
          expect(result.stdout).toBe('');
          expectNoLeak(result, server.token);
        }
      },
    );
  }
});

describe('drift --every survives a bad desired state', () => {
  it('reports the failed run, then the clean one when the file is valid again, and keeps running', async () => {
    const folder = join(dir, 'scheduled');
    await mkdir(folder, { recursive: true });
    // Scoped to user0: the server's admin, in no file, would keep the run \`drift\` (W3.5).
    const good =
      'version: 1\nsettings: { prune: false, manage: { users: [user0@example.com], rules: [] } }\nusers:\n  - email: user0@example.com\n';
    await writeFile(join(folder, 'netform.yaml'), good);
    const drift = startDrift(['-f', folder, '--every', '*/1 * * * * *', '--run-at-start'], env());
    try {
      await drift.waitForReport((r) => r.status === 'clean');
      await writeFile(join(folder, 'netform.yaml'), BAD_FILES['secret file outside the repository']!);
      const failedAt = drift.reports.length;
      const failed = await drift.waitForReport((r) => r.status === 'failed', { from: failedAt });
      expect(JSON.stringify(failed)).toContain('secret file /etc/hostname is outside');
      // Another failed run: the process lived past the abandoned reads of the first one.
      const again = drift.reports.indexOf(failed) + 1;
      await drift.waitForReport((r) => r.status === 'failed', { from: again });
      await writeFile(join(folder, 'netform.yaml'), good);
      await drift.waitForReport((r) => r.status === 'clean', { from: drift.reports.length });
      drift.child.kill('SIGTERM');
      const exit = await drift.exited;
      expect(exit.code).toBe(0);
      expectNoLeak({ stdout: JSON.stringify(drift.reports), stderr: drift.stderr() }, server.token);
      expect(drift.stderr()).toContain('drift: SIGTERM: stopping');
    } finally {
      drift.kill();
    }
  });

  it('stops within seconds of SIGTERM while a run waits on a server that does not answer', async () => {
    // A server that accepts connections and never answers: the run would wait for its 60 s timeout.
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const folder = join(dir, 'silent');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'netform.yaml'), 'version: 1\nsettings: { prune: false }\n');
    // Checking the settings at start sends no request; --run-at-start then begins a run that hangs.
    const drift = startDrift(['-f', folder, '--every', '0 0 1 1 *', '--run-at-start', '--timeout', '60'], {
      NETFORM_URL: url,
      NETFORM_TOKEN: server.token,
    });
    try {
      await drift.waitForStderr('drift: checking');
      await new Promise<void>((resolve) => (sockets.size > 0 ? resolve() : silent.once('connection', () => resolve())));
      const signalled = Date.now();
      drift.child.kill('SIGTERM');
      const exit = await drift.exited;
      expect(exit.code).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(5_000);
      expect(drift.stderr()).toContain('the run in progress is cancelled');
      expect(drift.reports).toEqual([]);
      expectNoLeak({ stdout: '', stderr: drift.stderr() }, server.token);
    } finally {
      drift.kill();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  for (const command of ['drift', 'serve'] as const) {
    it(`${command} stops when its parent exits without passing a signal on (as npx does)`, async () => {
      const folder = join(dir, `orphan-${command}`);
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, 'netform.yaml'), 'version: 1\nsettings: { prune: false }\n');
      const args =
        command === 'drift'
          ? ['drift', '-f', folder, '--every', '0 0 1 1 *']
          : ['serve', '--port', '0', '--db', join(folder, 'orphan.db'), '--log-level', 'silent'];
      // The parent starts netform with the same stderr, then waits to be killed, as npx does.
      const parentScript = `
        const { spawn } = require('node:child_process');
        spawn(process.execPath, [process.env.NETFORM_CLI, ...JSON.parse(process.env.ARGS)], { stdio: ['ignore', 'inherit', 'inherit'] });
        setInterval(() => {}, 1 << 30);
      `;
      const parent = spawn(process.execPath, ['-e', parentScript], {
        env: {
          ...withoutNpmMarks(),
          // As npx marks the processes it starts.
          npm_command: 'exec',
          npm_lifecycle_event: 'npx',
          NETFORM_CLI: builtCli(),
          ARGS: JSON.stringify(args),
          NETFORM_URL: server.url,
          NETFORM_TOKEN: server.token,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const closed = Promise.all([
        new Promise<void>((resolve) => parent.stderr.on('end', () => resolve())),
        new Promise<void>((resolve) => parent.stdout.on('end', () => resolve())),
      ]);
      await new Promise<void>((resolve, reject) => {
        const check = (chunk: string) => {
          output += chunk;
          if (/drift: checking|listening on/.test(output)) resolve();
        };
        parent.stderr.setEncoding('utf8').on('data', check);
        parent.stdout.setEncoding('utf8').on('data', check);
        parent.once('exit', () => reject(new Error(`the parent exited early:\n${output}`)));
      });
      parent.removeAllListeners('exit');
      parent.kill('SIGKILL');
      // The pipes end once every process holding them has exited: the parent, then netform.
      await closed;
      expect(output).toMatch(
        command === 'drift' ? /drift: parent exited: stopping/ : /parent exited: finishing requests/,
      );
    });
  }

  it('serve started in the background by a shell that exits keeps serving (nohup, start scripts)', async () => {
    const db = join(dir, 'background.db');
    const script = `"${process.execPath}" "${builtCli()}" serve --port 0 --db "${db}" --log-level silent & echo "pid:$!"`;
    const shell = spawn('sh', ['-c', script], { env: withoutNpmMarks(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const shellExited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
    const url = await new Promise<string>((resolve) => {
      shell.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        const listening = /listening on (http:\/\/\S+)/.exec(output);
        if (listening && /pid:\d+/.test(output)) resolve(listening[1]!);
      });
    });
    const pid = Number(/pid:(\d+)/.exec(output)![1]);
    try {
      await shellExited;
      // The parent is looked at every second: answered throughout 1.5 s after the shell exited,
      // the server outlived at least one look.
      const until = Date.now() + 1_500;
      let answered = 0;
      while (Date.now() < until) {
        const health = await fetch(`${url}/healthz`);
        expect(health.status).toBe(200);
        answered++;
      }
      expect(answered).toBeGreaterThan(0);
      expect(() => process.kill(pid, 0)).not.toThrow();
    } finally {
      process.kill(pid, 'SIGTERM');
    }
  });
});

/** process.env without the marks npm and npx give their children (tests may run under npm or npx). */
function withoutNpmMarks(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
}
