/** examples/ci/drift.yml: a well-formed scheduled workflow whose shell steps parse and follow drift's exit codes. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const workflow = parse(readFileSync(new URL('../../../examples/ci/drift.yml', import.meta.url), 'utf8'));
const steps = workflow.jobs.drift.steps as {
  name?: string;
  run?: string;
  if?: string;
  id?: string;
  uses?: string;
  with?: Record<string, string>;
}[];

describe('examples/ci/drift.yml', () => {
  it('runs on a schedule and by hand, one run at a time, allowed to write issues only', () => {
    expect(workflow.on.schedule[0].cron).toMatch(/^\S+ \S+ \S+ \S+ \S+$/);
    expect(workflow.on).toHaveProperty('workflow_dispatch');
    expect(workflow.permissions).toEqual({ contents: 'read', issues: 'write' });
    expect(workflow.concurrency.group).toBeTruthy();
  });

  it('checks drift in markdown with the netform Action and acts on exit codes 0, 2 and others', () => {
    const check = steps.find((s) => s.id === 'drift')!;
    expect(check.uses).toMatch(/\/netform@/);
    expect(check.with).toMatchObject({ command: 'drift', format: 'markdown' });
    const issue = steps.find((s) => s.name?.startsWith('Open or update'))!;
    expect(issue.if).toContain("steps.drift.outputs.exit-code == '2'");
    expect(issue.run).toMatch(/gh issue edit/);
    expect(issue.run).toMatch(/gh issue create/);
    expect(steps.find((s) => s.name?.startsWith('Close'))!.if).toContain("exit-code == '0'");
    const fail = steps.find((s) => s.name === 'Fail on drift')!;
    expect(fail.if).toContain("exit-code == '2'");
    expect(fail.run).toMatch(/exit 1/);
  });

  it('has shell steps that bash can parse', () => {
    for (const step of steps.filter((s) => s.run)) {
      const result = spawnSync('bash', ['-n'], { input: step.run, encoding: 'utf8' });
      expect(result.status, `${step.name}: ${result.stderr}`).toBe(0);
    }
  });
});
