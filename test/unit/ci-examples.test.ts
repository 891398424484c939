/** examples/ci/*.yml use the netform Action with inputs it declares, cut no bytes, and have shell steps bash parses. */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const dir = new URL('../../examples/ci/', import.meta.url);
const action = parse(readFileSync(new URL('../../action.yml', import.meta.url), 'utf8'));
const files = readdirSync(dir).filter((f) => f.endsWith('.yml'));

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  with?: Record<string, string>;
}

describe.each(files)('examples/ci/%s', (file) => {
  const text = readFileSync(new URL(file, dir), 'utf8');
  const workflow = parse(text);
  const steps = Object.values(workflow.jobs as Record<string, { steps: Step[] }>).flatMap((job) => job.steps);

  it('runs netform through the Action, with declared inputs only', () => {
    const uses = steps.filter((s) => s.uses?.includes('/netform@'));
    expect(uses.length).toBeGreaterThan(0);
    for (const step of uses) {
      for (const input of Object.keys(step.with ?? {})) expect(Object.keys(action.inputs)).toContain(input);
      expect(['validate', 'plan', 'apply', 'drift']).toContain(step.with?.command);
    }
    expect(text).not.toMatch(/npx netform|npm ci/);
  });

  it('cuts no bytes off netform output', () => {
    expect(text).not.toMatch(/head -c|tail -c/);
  });

  it('has shell steps that bash can parse', () => {
    for (const step of steps.filter((s) => s.run)) {
      const result = spawnSync('bash', ['-n'], { input: step.run, encoding: 'utf8' });
      expect(result.status, `${step.name}: ${result.stderr}`).toBe(0);
    }
  });
});
