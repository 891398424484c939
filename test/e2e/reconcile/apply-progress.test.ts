/**
 * Apply without a terminal, as in CI: each write's line arrives while apply still runs; SIGINT and
 * SIGTERM stop new writes, print the summary and exit 130/143, and a re-run converges; a server
 * that goes away mid-apply ends the apply quickly with the rest not attempted. A loopback proxy
 * that holds back each answer makes the apply slow enough to observe, without sleeps.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SHORT_LIVED_NODE, startCliNode, type RunningCli } from '../../helpers/cli.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { describeResult, netform, serverState, workspace, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let proxy: TcpProxy;
let ws: Workspace;
let apply: RunningCli | undefined;

beforeEach(async () => {
  server = await startTestServer();
  proxy = await startTcpProxy(server.url);
  ws = workspace();
});
afterEach(async () => {
  apply?.kill();
  apply = undefined;
  await Promise.all([server.stop(), proxy.close()]);
  ws.cleanup();
});

const USERS = 16;
function desiredFile(): string {
  const users = Array.from({ length: USERS }, (_, i) => `  - email: u${String(i).padStart(2, '0')}@slow.test\n`).join(
    '',
  );
  return ws.write('netform.yaml', `version: 1\nusers:\n  - { email: admin@example.com, role: admin }\n${users}`);
}

function startApply(file: string, extraEnv: Record<string, string> = {}): RunningCli {
  // An apply of a few seconds: V8's optimizing compiler off (SHORT_LIVED_NODE) saves its CPU.
  return startCliNode(SHORT_LIVED_NODE, ['apply', '-f', file, '--yes', '--parallelism', '2'], {
    env: {
      NETFORM_URL: proxy.url,
      NETFORM_TOKEN: server.token,
      NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL,
      NETFORM_RETRY_DELAY_MS: '5',
      ...extraEnv,
    },
  });
}

describe('apply progress without a terminal', () => {
  it('prints each write when it finishes, and a running count, while apply still runs', async () => {
    const file = desiredFile();
    proxy.setDelay(150);
    apply = startApply(file, { NETFORM_PROGRESS_EVERY_MS: '200' });
    await apply.waitForStdout(/^created user u\d\d@slow\.test \(\d+\.\d s\)$/m);
    expect(apply.child.exitCode, 'a line was read before apply ended').toBeNull();
    await apply.waitForStderr(/^progress: \d+\/16 settled \(0 failed\), \d+ in flight, \d+\.\d s elapsed$/m);
    expect(apply.child.exitCode).toBeNull();
    const { code } = await apply.exited;
    expect(code, apply.stderr()).toBe(0);
    expect(apply.stdout().match(/^created user /gm)).toHaveLength(USERS);
    // Each write is logged once: its line as it settles; the summary adds only the count.
    expect(apply.stdout()).not.toMatch(/^done +/m);
    expect(apply.stdout().match(/^created user u00@slow\.test /gm)).toHaveLength(1);
    expect(apply.stdout()).toMatch(/\(\d+\.\d s\)\n\nApply: 16 done, 0 failed, 0 not attempted\.\n$/);
  });
});

describe('interrupts', () => {
  for (const [signal, exitCode] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal}: no new writes, the summary, exit ${exitCode}; a re-run converges`, async () => {
      const file = desiredFile();
      proxy.setDelay(150);
      apply = startApply(file);
      await apply.waitForStdout(/^created user /m);
      apply.child.kill(signal);
      const { code } = await apply.exited;
      expect(code, `${apply.stdout()}\n${apply.stderr()}`).toBe(exitCode);
      expect(apply.stderr()).toMatch(
        new RegExp(`^${signal}: starting no new writes; waiting up to 30\\.0 s for the \\d+ in flight`, 'm'),
      );
      const summary = /Apply: (\d+) done, (\d+) failed, (\d+) not attempted\./.exec(apply.stdout());
      expect(summary, apply.stdout()).not.toBeNull();
      const [done, failed, notAttempted] = summary!.slice(1).map(Number) as [number, number, number];
      expect(failed).toBe(0);
      expect(notAttempted).toBeGreaterThan(0);
      expect(done + notAttempted).toBe(USERS);
      expect(apply.stdout()).toContain(`not started: apply was interrupted (${signal})`);
      expect(apply.stderr()).toContain(`Interrupted by ${signal}.`);
      // What the summary says was done is what the server has.
      const created = (await serverState(server)).users.filter((u) => u.email.endsWith('@slow.test'));
      expect(created).toHaveLength(done);

      proxy.setDelay(0);
      const rerun = await netform(server, ['apply', '-f', file, '--yes']);
      expect(rerun.code, describeResult(rerun)).toBe(0);
      expect(rerun.stdout).toContain(`Apply: ${notAttempted} done, 0 failed, 0 not attempted.`);
      const converged = await netform(server, ['plan', '-f', file]);
      expect(converged.code, describeResult(converged)).toBe(0);
    });
  }
});

describe('a second signal', () => {
  it('exits at once, saying writes in flight may or may not have happened', async () => {
    const file = desiredFile();
    proxy.setDelay(300);
    apply = startApply(file);
    await apply.waitForStdout(/^created user /m);
    apply.child.kill('SIGINT');
    await apply.waitForStderr(/^SIGINT: starting no new writes/m);
    apply.child.kill('SIGINT');
    const { code } = await apply.exited;
    expect(code).toBe(130);
    expect(apply.stderr()).toContain(
      'SIGINT again: exiting now. Writes in flight may or may not have happened; netform plan shows where the server is.',
    );
  });
});

describe('a server that goes away mid-apply', () => {
  it('starts no new writes after consecutive unanswered writes and reports the rest as not attempted', async () => {
    const file = desiredFile();
    proxy.setDelay(150);
    apply = startApply(file);
    await apply.waitForStdout(/^created user /m);
    const goneAt = Date.now();
    await proxy.close();
    const { code } = await apply.exited;
    expect(Date.now() - goneAt).toBeLessThan(30_000);
    expect(code, `${apply.stdout()}\n${apply.stderr()}`).toBe(1);
    expect(apply.stderr()).toMatch(
      /^the server stopped answering \(3 writes in a row: .+ at http:\/\/127\.0\.0\.1:\d+\): starting no new writes$/m,
    );
    expect(apply.stdout()).toMatch(
      /^not attempted: create user u\d\d@slow\.test: not started: the server stopped answering/m,
    );
    const summary = /Apply: (\d+) done, (\d+) failed, (\d+) not attempted\./.exec(apply.stdout());
    expect(Number(summary![3])).toBeGreaterThan(0);
  });
});
