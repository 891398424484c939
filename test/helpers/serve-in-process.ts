/**
 * `netform serve ARGS` run inside the test process through run(argv, io) (test/helpers/run-in-process.ts),
 * on a fresh database of the run's store with an admin token issued in-process: for tests of what
 * serve makes of its flags and environment variables, without a process. stop() is a stop
 * request, as SIGTERM is to the process. Where the process itself is the subject (signals, its
 * exit code, its streams), use startServerProcess (test/helpers/server.ts).
 *
 *   const server = await startServeInProcess({ env: { NETFORM_LEGACY_DEVICE_UPDATES: '1' } });
 *   await server.api('GET', '/v0/users');
 *   await server.stop();
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MemoryIo } from '../../src/cli/io.js';
import { startInProcess, type InProcessResult } from './run-in-process.js';
import { callApi, TEST_ADMIN_EMAIL, type ApiCallOptions, type ApiResponse } from './server-api.js';
import { disposeLocation, freshLocation } from './store.js';

export interface ServeInProcessOptions {
  /** Extra `serve` arguments (after `--port 0 --db DB`). */
  args?: string[];
  /** Over this process's environment, as runCli's `env`. */
  env?: Record<string, string | undefined>;
}

export interface ServeInProcess {
  url: string;
  token: string;
  dbPath: string;
  api(method: string, path: string, body?: unknown, options?: ApiCallOptions): Promise<ApiResponse>;
  stdout(): string;
  stderr(): string;
  /** A stop request; resolves with the run's exit code and output; removes the database. */
  stop(): Promise<InProcessResult>;
}

const START_TIMEOUT_MS = 30_000;

/** Resolves with the URL of serve's first stdout line (io's writes are synchronous: each is looked at). */
function listening(io: MemoryIo, done: Promise<InProcessResult>): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve did not report listening within ${START_TIMEOUT_MS} ms\n${io.stderr()}`)),
      START_TIMEOUT_MS,
    );
    const check = () => {
      const match = /^listening on (https?:\/\/\S+)\n/.exec(io.stdout());
      if (!match) return false;
      clearTimeout(timer);
      resolve(match[1]!);
      return true;
    };
    const write = io.out.write.bind(io.out);
    io.out.write = ((chunk: string, ...rest: never[]) => {
      const written = write(chunk, ...rest);
      check();
      return written;
    }) as typeof io.out.write;
    if (check()) return;
    void done.then(({ code, stdout, stderr }) => {
      clearTimeout(timer);
      reject(new Error(`serve ended (exit ${code}) before listening\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, reject);
  });
}

export async function startServeInProcess(options: ServeInProcessOptions = {}): Promise<ServeInProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'netform-serve-'));
  const dbPath = await freshLocation(dir);
  const cleanUp = async () => {
    rmSync(dir, { recursive: true, force: true });
    await disposeLocation(dbPath);
  };
  try {
    const { issueToken } = await import('../../server/index.js');
    const { token } = await issueToken({ dbPath, email: TEST_ADMIN_EMAIL });
    const running = startInProcess(['serve', '--port', '0', '--db', dbPath, ...(options.args ?? [])], {
      env: options.env,
    });
    let url: string;
    try {
      url = await listening(running.io, running.done);
    } catch (error) {
      running.stop('SIGTERM');
      await running.done.catch(() => undefined);
      throw error;
    }
    return {
      url,
      token,
      dbPath,
      api: (method, path, body, callOptions) => callApi(url, token, method, path, body, callOptions),
      stdout: () => running.io.stdout(),
      stderr: () => running.io.stderr(),
      async stop() {
        running.stop('SIGTERM');
        try {
          return await running.done;
        } finally {
          await cleanUp();
        }
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
