/** examples/ci/drift.yml's `expire` job: `apply --expired-only` on the schedule, with its own token and read-only repository access. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const workflow = parse(readFileSync(new URL('../../../examples/ci/drift.yml', import.meta.url), 'utf8'));

describe('examples/ci/drift.yml expiries', () => {
  it('applies expiries only, with its own token, before the drift check (which runs whatever it did)', () => {
    const job = workflow.jobs.expire;
    expect(job.permissions).toEqual({ contents: 'read' });
    const step = job.steps.find((s: { id?: string }) => s.id === 'expire');
    expect(step.uses).toMatch(/\/netform@/);
    expect(step.with).toMatchObject({ command: 'apply', args: '--expired-only', 'fail-on-changes': 'false' });
    expect(step.with.token).toBe('${{ secrets.NETFORM_EXPIRY_TOKEN }}');
    expect(workflow.jobs.drift.needs).toBe('expire');
    expect(workflow.jobs.drift.if).toContain('always()');
  });
});
