/**
 * The test server: its own temp folder and database (a file there, or its own PostgreSQL database
 * when the run is on PostgreSQL: test/helpers/store.ts), port 0, an admin token.
 *
 * `startTestServer` runs it inside the test process (test/helpers/in-process-server.ts): the /v0
 * contract, the CLI against a server, everything but the process. `startServerProcess` runs a real
 * `netform serve` (build first: `npm test` does) for the tests whose subject is the process:
 * serve's flags and environment, TLS, signals, replicas and failover, operations.
 *
 *   const server = await startTestServer();
 *   const { status, body } = await server.api('GET', '/v0/users');
 *   await server.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtCli } from './cli.js';
import { startInProcessServer, type InProcessServerOptions } from './in-process-server.js';
import { disposeLocation, freshLocation } from './store.js';
import { callApi, Output, TEST_ADMIN_EMAIL, type TestServer } from './server-api.js';

export { TEST_ADMIN_EMAIL, type ApiResponse, type TestServer } from './server-api.js';

/** What the in-process test server takes: `startServer`'s options (`legacyDeviceUpdates`, ...), `keep`, `location`. */
export type TestServerOptions = InProcessServerOptions;

/** A test server inside the test process (see the top of this file). */
export function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  return startInProcessServer(options);
}

export interface ServerProcessOptions {
  /** Extra `serve` arguments. */
  args?: string[];
  env?: Record<string, string>;
  /** Keep the temp folder after stop(). */
  keep?: boolean;
  /** The `--db` that `serve` gets, from the database made for it (say, the same one through a proxy). */
  serveDb?: (dbPath: string) => string;
  /** An empty database to use (and drop on stop) instead of a fresh one of the run's store. */
  location?: string;
}
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

interface Started {
  child: ChildProcess;
  url: string;
  stdout: Output;
  stderr: Output;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnServer(dbPath: string, options: ServerProcessOptions): Promise<Started> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
  const db = options.serveDb ? options.serveDb(dbPath) : dbPath;
  const child = spawn(process.execPath, [builtCli(), 'serve', '--port', '0', '--db', db, ...(options.args ?? [])], {
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const stderr = new Output();
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.append(chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  const stdoutText = new Output();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => stdoutText.append(chunk));
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`netform serve did not report listening within ${START_TIMEOUT_MS} ms\nstderr:\n${stderr.text}`),
      );
    }, START_TIMEOUT_MS);
    const onData = (chunk: string) => {
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline === -1) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      const match = /^listening on (https?:\/\/\S+)$/.exec(stdout.slice(0, newline).trim());
      if (!match) {
        child.kill('SIGKILL');
        reject(
          new Error(`unexpected first line from netform serve: ${stdout.slice(0, newline)}\nstderr:\n${stderr.text}`),
        );
        return;
      }
      resolve({ child, url: match[1]!, stdout: stdoutText, stderr, exited });
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(`netform serve exited (code ${code}, signal ${signal}) before listening\nstderr:\n${stderr.text}`),
      );
    });
  });
}

async function terminate(started: Started): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return started.exited;
  started.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      started.child.kill('SIGKILL');
      reject(
        new Error(
          `netform serve did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM\nstderr:\n${started.stderr.text}`,
        ),
      );
    }, STOP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([started.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
/**
 * A real `netform serve` process, for the tests whose subject is the process. Its admin token is
 * issued in the test process (what `netform server token create` does, without a second process).
 */
export async function startServerProcess(options: ServerProcessOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'netform-test-'));
  const dbPath = options.location ?? (await freshLocation(dir));
  const cleanUp = async () => {
    if (options.keep) return;
    rmSync(dir, { recursive: true, force: true });
    await disposeLocation(dbPath);
  };
  try {
    // Loaded here so that files which never start a server process do not load the server for it.
    const { issueToken } = await import('../../server/index.js');
    const { token } = await issueToken({ dbPath, email: TEST_ADMIN_EMAIL });
    let current = await spawnServer(dbPath, options);

    const server: TestServer = {
      url: current.url,
      token,
      dbPath,
      dir,
      lastExit: null,
      async stop() {
        try {
          server.lastExit = await terminate(current);
        } finally {
          await cleanUp();
        }
      },
      async restart() {
        server.lastExit = await terminate(current);
        current = await spawnServer(dbPath, options);
        server.url = current.url;
      },
      api: (method, path, body, callOptions) => callApi(server.url, token, method, path, body, callOptions),
      stdout: () => current.stdout.text,
      stderr: () => current.stderr.text,
      waitForStderr: (pattern, timeoutMs) => current.stderr.waitFor(pattern, timeoutMs),
      pid: () => current.child.pid,
      exited: () => current.exited,
    };
    return server;
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
/**
 * Another `netform serve` process on the database of `primary` (a replica), with the same admin
 * token. Its stop() leaves the database to `primary`; kill() ends it with SIGKILL.
 */
export async function startReplica(
  primary: TestServer,
  options: ServerProcessOptions = {},
): Promise<TestServer & { kill(): Promise<void> }> {
  let current = await spawnServer(primary.dbPath, options);
  const replica: TestServer & { kill(): Promise<void> } = {
    url: current.url,
    token: primary.token,
    dbPath: primary.dbPath,
    dir: primary.dir,
    lastExit: null,
    async stop() {
      replica.lastExit = await terminate(current);
    },
    async restart() {
      replica.lastExit = await terminate(current);
      current = await spawnServer(primary.dbPath, options);
      replica.url = current.url;
    },
    async kill() {
      current.child.kill('SIGKILL');
      replica.lastExit = await current.exited;
    },
    api: (method, path, body, callOptions) => callApi(replica.url, primary.token, method, path, body, callOptions),
    stdout: () => current.stdout.text,
    stderr: () => current.stderr.text,
    waitForStderr: (pattern, timeoutMs) => current.stderr.waitFor(pattern, timeoutMs),
    pid: () => current.child.pid,
    exited: () => current.exited,
  };
  return replica;
}
