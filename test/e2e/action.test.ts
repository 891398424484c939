/**
 * action.yml: parsed, and its steps run the way the GitHub Actions runner runs a composite action
 * (expressions substituted, each `run` in bash with the step's env, outputs read from
 * $GITHUB_OUTPUT), against a real server. `actions/setup-node` is the one step not run: this
 * machine already has Node.js 20.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { closedPortUrl } from '../helpers/net.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../helpers/server.js';
import { serverState, workspace, type Workspace } from './reconcile-helpers.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8'));

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  'working-directory'?: string;
  with?: Record<string, string>;
}

/**
 * Runs the action's steps with these inputs in `workspaceDir`, as one step of a job whose
 * RUNNER_TEMP is `runnerTemp`; returns its outputs and the last step's status.
 */
function runAction(
  inputs: Record<string, string>,
  workspaceDir: string,
  jobTemp?: string,
): { status: number | null; outputs: Record<string, string>; stdout: string; stderr: string; summary: string } {
  const given: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs as Record<string, { default?: string }>))
    given[name] = inputs[name] ?? spec.default ?? '';
  const temp = mkdtempSync(join(tmpdir(), 'netform-action-runner-'));
  const runnerTemp = jobTemp ?? temp;
  const stepOutputs: Record<string, Record<string, string>> = {};
  const expand = (text: string) =>
    text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
      if (expr === 'github.action_path') return ROOT;
      const input = /^inputs\.([\w-]+)$/.exec(expr);
      if (input) return given[input[1]!] ?? '';
      const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
      if (output) return stepOutputs[output[1]!]?.[output[2]!] ?? '';
      throw new Error(`expression not supported by this test: ${expr}`);
    });
  let last = { status: 0 as number | null, stdout: '', stderr: '' };
  const summaryPath = join(temp, 'summary.md');
  writeFileSync(summaryPath, '');
  try {
    for (const step of action.runs.steps as Step[]) {
      if (step.uses) {
        expect(step.uses).toMatch(/^actions\/setup-node@/);
        continue;
      }
      const outputPath = join(temp, `output-${step.id ?? 'step'}`);
      writeFileSync(outputPath, '');
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        GITHUB_OUTPUT: outputPath,
        GITHUB_STEP_SUMMARY: summaryPath,
        RUNNER_TEMP: runnerTemp,
        NO_COLOR: '1',
        NETFORM_RETRY_DELAY_MS: '5',
      };
      delete env.NETFORM_URL;
      delete env.NETFORM_TOKEN;
      for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(v);
      const cwd = step['working-directory'] ? expand(step['working-directory']) : workspaceDir;
      expect(step.shell).toBe('bash');
      const result = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', expand(step.run!)], {
        cwd,
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
      last = { status: result.status, stdout: result.stdout, stderr: result.stderr };
      if (step.id) {
        stepOutputs[step.id] = Object.fromEntries(
          readFileSync(outputPath, 'utf8')
            .split('\n')
            .filter((l) => l.includes('='))
            .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
        );
      }
      if (result.status !== 0) break;
    }
    const outputs = Object.fromEntries(
      Object.entries(action.outputs as Record<string, { value: string }>).map(([k, v]) => [k, expand(v.value)]),
    );
    return { ...last, outputs, summary: readFileSync(summaryPath, 'utf8') };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

describe('action.yml', () => {
  it('is a composite action with the inputs and outputs CI needs', () => {
    expect(action.runs.using).toBe('composite');
    for (const input of ['command', 'path', 'format', 'url', 'token', 'token-user', 'plan-file', 'args'])
      expect(action.inputs).toHaveProperty(input);
    for (const output of ['exit-code', 'plan-file', 'output-file']) expect(action.outputs).toHaveProperty(output);
    const install = (action.runs.steps as Step[]).find((s) => s.run?.includes('action-install.sh'))!;
    expect(install['working-directory']).toBe('${{ github.action_path }}');
  });

  describe('run as the Action would run it', () => {
    let server: TestServer;
    let ws: Workspace;
    beforeAll(async () => {
      server = await startTestServer();
      ws = workspace();
      ws.write('desired/netform.yaml', 'version: 1\nusers:\n  - email: action@ci.test\n');
    });
    afterAll(async () => {
      await server.stop();
      ws.cleanup();
    });
    const secrets = () => ({ url: server.url, token: server.token, 'token-user': TEST_ADMIN_EMAIL });

    it('validate, plan (markdown + saved plan), apply the saved plan, then drift is clean', async () => {
      const validated = runAction({ command: 'validate' }, ws.dir);
      expect(validated.status, validated.stderr).toBe(0);
      expect(validated.outputs['exit-code']).toBe('0');

      const job = mkdtempSync(join(tmpdir(), 'netform-action-job-'));
      const planned = runAction({ command: 'plan', ...secrets() }, ws.dir, job);
      expect(planned.status, planned.stderr).toBe(0);
      expect(planned.outputs['exit-code']).toBe('2');
      expect(planned.stdout.startsWith('<!-- netform-plan -->')).toBe(true);
      expect(planned.summary).toContain('+ user action@ci.test');
      expect(planned.stdout + planned.stderr).not.toContain(server.token);
      const planFile = planned.outputs['plan-file']!;
      expect(planFile).toBe(join(job, 'netform-plan.json'));
      expect(JSON.parse(readFileSync(planFile, 'utf8')).format).toBe('netform.plan');

      const applied = runAction({ command: 'apply', 'plan-file': planFile, ...secrets() }, ws.dir, job);
      expect(applied.status, applied.stderr).toBe(0);
      expect(applied.outputs['exit-code']).toBe('0');
      expect(applied.stdout).toContain('created user action@ci.test');
      expect((await serverState(server)).users.map((u) => u.email)).toContain('action@ci.test');

      const drift = runAction({ command: 'drift', ...secrets() }, ws.dir);
      expect(drift.status, drift.stderr).toBe(0);
      expect(drift.outputs['exit-code']).toBe('0');
      rmSync(job, { recursive: true, force: true });
    });

    it('fails the step on exit 1, and on exit 2 only with fail-on-changes', async () => {
      const down = runAction({ command: 'plan', url: await closedPortUrl(), token: 'nf_x' }, ws.dir);
      expect(down.status).toBe(1);
      expect(down.outputs['exit-code']).toBe('1');
      ws.write('desired/netform.yaml', 'version: 1\nusers:\n  - email: action@ci.test\n  - email: more@ci.test\n');
      const strict = runAction({ command: 'drift', 'fail-on-changes': 'true', format: 'json', ...secrets() }, ws.dir);
      expect(strict.status).toBe(2);
      expect(strict.outputs['exit-code']).toBe('2');
      expect(JSON.parse(strict.stdout).changes).toHaveLength(1);
    });
  });
});
