/**
 * `netform ARGS` in this process with the run's clock set (memoryIo's `clock`): the instant apply,
 * drift and every other command judge the files' expiries at, without `--now`. Against a test
 * server, as its admin.
 */
import { memoryIo } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import type { CliResult } from './cli.js';
import { inProcessEnv } from './run-in-process.js';
import { TEST_ADMIN_EMAIL, type TestServer } from './server.js';

export async function netformAt(
  server: TestServer,
  at: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  const instant = new Date(at);
  const io = memoryIo({
    env: inProcessEnv({
      NETFORM_URL: server.url,
      NETFORM_TOKEN: server.token,
      NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL,
      ...env,
    }),
    cwd: process.cwd(),
    clock: () => instant,
  });
  const code = await run(args, io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}
