/**
 * examples/ci/*.yml use the netform Action with inputs it declares, cut no bytes, and have shell
 * steps bash parses; the pull-request workflow saves the plan the merge workflow applies.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const dir = new URL('../../../examples/ci/', import.meta.url);
const action = parse(readFileSync(new URL('../../../action.yml', import.meta.url), 'utf8'));
const files = readdirSync(dir).filter((f) => f.endsWith('.yml'));

interface Step {
  name?: string;
  id?: string;
  if?: string;
  run?: string;
  uses?: string;
  with?: Record<string, string>;
}

function stepsOf(file: string): Step[] {
  const workflow = parse(readFileSync(new URL(file, dir), 'utf8'));
  return Object.values(workflow.jobs as Record<string, { steps: Step[] }>).flatMap((job) => job.steps);
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
      expect(['validate', 'test', 'plan', 'apply', 'drift', 'review']).toContain(step.with?.command);
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

describe('the reviewed-plan flow', () => {
  const plan = stepsOf('plan-pr.yml');
  const merge = stepsOf('apply-on-merge.yml');

  it('the pull request uploads its saved plan under its last commit, and the merge downloads that name', () => {
    const upload = plan.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
    expect(upload.with!.name).toBe('netform-plan-${{ github.event.pull_request.head.sha }}');
    expect(upload.with!.path).toContain('${{ steps.plan.outputs.plan-file }}');
    const find = merge.find((s) => s.id === 'reviewed')!;
    expect(find.run).toContain('--name "netform-plan-$head"');
    expect(find.run).toContain('.head.repo.full_name == env.GITHUB_REPOSITORY'); // never a fork's artifact
  });

  it('the merge applies with reviewed-plan, and never without a reviewed plan', () => {
    const applies = merge.filter((s) => s.uses?.includes('/netform@') && s.with?.command === 'apply');
    const onPush = applies.find((s) => s.id === 'apply')!;
    expect(onPush.with!['reviewed-plan']).toBe('${{ steps.reviewed.outputs.plan }}');
    expect(onPush.if).toBe("steps.reviewed.outputs.plan != ''");
    // The only other apply is of a saved plan, after approval.
    for (const step of applies.filter((s) => s !== onPush)) expect(step.with!['plan-file']).toBeTruthy();
  });

  it('exit 5 opens or updates the netform-unreviewed issue with the markdown of what is left', () => {
    const issue = merge.find((s) => s.name === 'Open or update the netform-unreviewed issue')!;
    expect(issue.if).toContain("steps.apply.outputs.exit-code == '5'");
    expect(JSON.stringify(issue)).toContain('steps.apply.outputs.unreviewed-file');
    expect(readFileSync(new URL('apply-on-merge.yml', dir), 'utf8')).toContain('ISSUE_LABEL: netform-unreviewed');
  });
});

describe('the access review workflow', () => {
  const text = readFileSync(new URL('access-review.yml', dir), 'utf8');
  const workflow = parse(text);
  const steps = stepsOf('access-review.yml');

  it('runs monthly and keeps the review as an artifact that expires', () => {
    expect(workflow.on.schedule[0].cron).toMatch(/^\d+ \d+ 1 \* \*$/);
    const reviews = steps.filter((s) => s.with?.command === 'review');
    expect(reviews.map((s) => s.with?.format)).toEqual(['markdown', 'csv']);
    const upload = steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
    expect(Number(upload.with!['retention-days'])).toBeGreaterThan(0);
    for (const s of reviews) expect(upload.with!.path).toContain(`steps.${s.id}.outputs.output-file`);
  });

  it('posts the review only when the repository opts in', () => {
    const posting = steps.filter((s) => s.run?.includes('gh issue'));
    expect(posting).toHaveLength(1);
    expect(posting[0]!.if).toBe("vars.NETFORM_REVIEW_ISSUE == 'true'");
  });
});
