/**
 * `-f -` and `-o -` as shells expect, and no hint that would overwrite an input file. Reading a
 * real stdin pipe is the built CLI as a process; the rest runs in-process (run(argv, io)), its
 * process paths (apply PLANFILE, export -o, plan -o) in the safety net (e2e/cli/safety-net.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runCliProcessNode, SHORT_LIVED_NODE } from '../../helpers/cli.js';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  type Workspace,
  useServerAndWorkspace,
} from '../../helpers/workspace.js';

/** The built CLI as a process that lives a second or less (SHORT_LIVED_NODE: less CPU, the same output). */
const runCliProcess: typeof runCli = (args, options) => runCliProcessNode(SHORT_LIVED_NODE, args, options);

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const YAML = 'version: 1\nusers:\n  - email: stdin@shell.test\n';
const env = () => ({ NETFORM_URL: server.url, NETFORM_TOKEN: server.token, NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL });

describe('shell conventions', () => {
  it('plan -f - reads stdin; -o - writes the saved plan to stdout and the plan for people to stderr', async () => {
    const result = await runCliProcess(['plan', '-f', '-', '-o', '-'], { input: YAML, env: env() });
    expect(result.code, describeResult(result)).toBe(2);
    const saved = JSON.parse(result.stdout);
    expect(saved).toMatchObject({ format: 'netform.plan', sources: ['stdin'] });
    expect(saved.changes.map((c: { id: string }) => c.id)).toEqual(['user:stdin@shell.test']);
    expect(result.stderr).toContain('+ user stdin@shell.test');
    // The saved plan from stdout applies as is.
    const planPath = ws.write('from-stdout.json', result.stdout);
    const applied = await netform(server, ['apply', planPath]);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect((await serverState(server)).users.map((u) => u.email)).toContain('stdin@shell.test');
  });

  it('apply -f - applies a YAML stream from stdin', async () => {
    const result = await runCliProcess(['apply', '-f', '-', '--yes'], {
      input: `${YAML}  - email: stdin2@shell.test\n`,
      env: env(),
    });
    expect(result.code, describeResult(result)).toBe(0);
    expect(result.stdout).toContain('created user stdin2@shell.test');
  });

  it('export -o - prints to stdout and creates no folder named -', async () => {
    const result = await runCli(['export', '-o', '-'], { env: env(), cwd: ws.dir });
    expect(result.code, describeResult(result)).toBe(0);
    expect(result.stdout).toContain('email: stdin@shell.test');
    expect(existsSync(join(ws.dir, '-'))).toBe(false);
  });

  it('never suggests, nor does, overwriting an input file', async () => {
    const file = ws.write('desired/netform.yaml', YAML);
    const wrong = await netform(server, ['apply', file]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(
      `not a saved plan (not JSON). To apply desired-state files, pass them with -f: netform apply -f ${file}`,
    );
    expect(wrong.stderr).not.toMatch(/plan -o \S*netform\.yaml/);
    for (const out of [file, ws.path('desired/plan.yaml')]) {
      const refused = await netform(server, ['plan', '-f', out === file ? file : ws.path('desired'), '-o', out]);
      expect(refused.code, describeResult(refused)).toBe(1);
      expect(refused.stderr).toContain(`-o ${out} would overwrite the desired state read from`);
    }
    expect(readFileSync(file, 'utf8')).toBe(YAML);
  });
});
