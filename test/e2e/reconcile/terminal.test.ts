/**
 * On a terminal (a pseudo-terminal made by `script`): apply asks for confirmation and only "yes"
 * applies; output has colours unless NO_COLOR is set; long applies show a progress line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli } from '../../helpers/cli.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { serverState, workspace, type Workspace } from '../../helpers/workspace.js';

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
let server: TestServer;
let ws: Workspace;

beforeAll(async () => {
  if (!hasScript) return;
  server = await startTestServer();
  ws = workspace();
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

/** Runs the CLI on a pseudo-terminal; answers `answer` once the question shows. */
function onTerminal(
  args: string[],
  answer: string | null,
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, builtCli(), ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: {
      ...process.env,
      NETFORM_URL: server.url,
      NETFORM_TOKEN: server.token,
      NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL,
      NO_COLOR: '',
      ...env,
      TERM: 'xterm',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let answered = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    if (answer !== null && !answered && output.includes('Only "yes" applies:')) {
      answered = true;
      child.stdin.write(`${answer}\n`);
    }
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe.skipIf(!hasScript)('on a terminal', () => {
  it('asks before applying: anything but "yes" cancels, "yes" applies; colours unless NO_COLOR', async () => {
    const users = Array.from({ length: 12 }, (_, i) => `  - email: tty-${i}@corp.test`).join('\n');
    const file = ws.write('netform.yaml', `version: 1\nusers:\n${users}\n`);

    const cancelled = await onTerminal(['apply', '-f', file], 'no');
    expect(cancelled.code, cancelled.output).toBe(1);
    expect(cancelled.output).toContain('Apply cancelled. Nothing was changed.');
    expect(cancelled.output).toMatch(/ {2}\x1b\[32m\+ user tty-0@corp\.test/);
    expect((await serverState(server)).users).toHaveLength(1);

    const applied = await onTerminal(['apply', '-f', file], 'yes', { NO_COLOR: '1' });
    expect(applied.code, applied.output).toBe(0);
    expect(applied.output).not.toMatch(/\x1b\[3\dm/);
    expect(applied.output).toMatch(/Applying: \d+\/12 settled/);
    expect(applied.output).toContain('Apply: 12 done, 0 failed, 0 not attempted.');
    expect((await serverState(server)).users).toHaveLength(13);
  });
});
