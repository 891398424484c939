/**
 * examples/ci/adopt-pr.yml: drift commits the adoption on a branch; the branch is pushed and the
 * pull request opened with a token that starts workflows (an App's or a fine-grained one, never
 * the job's GITHUB_TOKEN); the proposal is planned with a base and the plan posted as a comment.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const text = readFileSync(new URL('../../../examples/ci/adopt-pr.yml', import.meta.url), 'utf8');
const workflow = parse(text);
const steps = workflow.jobs.adopt.steps as {
  id?: string;
  if?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}[];
const step = (id: string) => steps.find((s) => s.id === id)!;

describe('examples/ci/adopt-pr.yml', () => {
  it('gives the job token read access only, and documents why another token opens the pull request', () => {
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(text).toContain('a pull request opened with');
    expect(text).toContain("the workflow's own GITHUB_TOKEN starts no workflows");
    expect(text).toContain('"Contents: read and write"');
    expect(text).toContain('"Pull requests: read and write"');
  });

  it('commits the adoption with drift --adopt-branch, then pushes and opens the pull request with the App or fine-grained token', () => {
    expect(step('drift').with).toMatchObject({ command: 'drift', args: '--adopt-branch netform/adopt' });
    const pr = step('pr');
    expect(pr.if).toBe("steps.drift.outputs.exit-code == '2'");
    expect(pr.env!.GH_TOKEN).toBe('${{ steps.app.outputs.token || secrets.NETFORM_ADOPT_TOKEN }}');
    expect(text).not.toContain('github.token');
    expect(pr.run).toContain('git log -1 --format=%s "$BRANCH" > title.txt');
    expect(pr.run).toContain('--body-file body.md');
  });

  it('plans the proposal against its base and posts the plan as a comment', () => {
    expect(step('plan').with).toMatchObject({
      command: 'plan',
      base: '${{ steps.pr.outputs.base }}',
      format: 'markdown',
    });
    const post = steps.find((s) => s.run?.includes('issues/$PR/comments'))!;
    expect(post.run).toContain('cat "$PLAN_MD"');
    expect(post.env!.GH_TOKEN).toBe(step('pr').env!.GH_TOKEN);
  });
});
