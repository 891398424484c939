/**
 * A test server inside the test process, through `server/`'s `startServer`: no build needed, so
 * unit tests may use it. The same shape as test/helpers/server.ts's process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartServerOptions } from '../../server/index.js';
import { callApi, Output, TEST_ADMIN_EMAIL, type TestServer } from './server-api.js';
import { disposeLocation, freshLocation } from './store.js';

export type InProcessServerOptions = Omit<Partial<StartServerOptions>, 'dbPath' | 'port'> & {
  /** Keep the temp folder after stop(). */
  keep?: boolean;
  /** An empty database to use (and drop on stop) instead of a fresh one of the run's store. */
  location?: string;
};

/**
 * The test server of test/helpers/server.ts's startTestServer: it runs inside the test process
 * through `startServer` (no process boundary is under test; `startServerProcess` is the process).
 * Like `netform serve` by default, it logs requests at level info; `stderr()` returns those logs.
 */
export async function startInProcessServer(options: InProcessServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'netform-test-'));
  const { keep, location, ...serverOptions } = options;
  const dbPath = location ?? (await freshLocation(dir));
  const logs = new Output();
  const logStream = { write: (chunk: string) => (logs.append(chunk), true) };
  const cleanUp = async () => {
    if (keep) return;
    rmSync(dir, { recursive: true, force: true });
    await disposeLocation(dbPath);
  };
  // Loaded here so that tests of the real process never load the server into the test process.
  const { issueToken, startServer } = await import('../../server/index.js');
  const start = () =>
    startServer({ logger: true, logLevel: 'info', ...serverOptions, logStream, dbPath, port: 0, host: '127.0.0.1' });
  try {
    const { token } = await issueToken({ dbPath, email: TEST_ADMIN_EMAIL });
    let current = await start();
    const server: TestServer = {
      url: current.url,
      token,
      dbPath,
      dir,
      lastExit: null,
      async stop() {
        try {
          await current.close();
        } finally {
          await cleanUp();
        }
      },
      async restart() {
        await current.close();
        current = await start();
        server.url = current.url;
      },
      api: (method, path, body, callOptions) => callApi(server.url, token, method, path, body, callOptions),
      stdout: () => '',
      stderr: () => logs.text,
      waitForStderr: (pattern, timeoutMs) => logs.waitFor(pattern, timeoutMs),
      pid: () => {
        throw new Error('an in-process test server has no process of its own: use startServerProcess');
      },
      exited: () => new Promise(() => {}),
    };
    return server;
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
