/**
 * W3.6 in the plan's renderings: fields not checked (never "matches") and the access tests (how
 * many passed; failures first), with hostile strings from the files made inert; drift's report
 * and webhook text say "not checked" too.
 */
import { describe, expect, it } from 'vitest';
import { reportFromPlan } from '../../../src/drift/report.js';
import { driftText } from '../../../src/views/drift.js';
import { wordedPlan } from '../../../src/views/notes.js';
import { planChanges, type Plan } from '../../../src/plan/index.js';
import { renderPlan } from '../../../src/views/plan.js';
import { desired, liveState, liveUser, OPTIONS, user } from '../../helpers/plan-fixtures.js';

function emptyPlan(extra: Partial<Plan>): Plan {
  // The admin is declared: an undeclared admin would keep the plan pending (W3.5), and these
  // tests are about a plan that changes nothing.
  const plan = planChanges(
    desired({ users: [user('admin@example.com', { role: 'admin' })] }),
    liveState({ users: [liveUser('admin@example.com', { role: 'admin' })] }),
    OPTIONS,
  );
  return { ...plan, ...extra };
}

const HOSTILE = 'x\u001b[2J\u202e`|*';

describe('not checked', () => {
  const plan = emptyPlan({
    not_checked: [
      {
        id: 'device:alice@example.com/laptop',
        label: 'device alice@example.com/laptop',
        field: 'preshared_key',
        reason: `environment variable ${HOSTILE} is not set`,
      },
    ],
  });

  it('text and markdown list it, inert, and the summary never says "matches"', () => {
    const text = renderPlan(plan, 'text', { color: false });
    expect(text).toContain(
      'not checked: preshared key of alice@example.com/laptop (environment variable x\\u001b[2J\\u202e`|* is not set)',
    );
    expect(text).not.toMatch(/matches|\u001b|\u202e/);
    const md = renderPlan(plan, 'markdown', { color: false });
    expect(md).toContain(
      '- ``not checked: preshared key of alice@example.com/laptop (environment variable x\\u001b[2J\\u202e`|* is not set)``',
    );
    expect(md).not.toMatch(/matches|\u001b|\u202e/);
  });

  it("drift's report carries it, and its webhook text is not 'clean' nor 'matches'", () => {
    const report = reportFromPlan(wordedPlan(plan), { startedAt: 0, finishedAt: 1, skippedTicks: 0 });
    expect(report.status).toBe('clean');
    expect(report.not_checked).toHaveLength(1);
    const said = driftText(report, 'drift');
    expect(said).toMatch(
      /^netform drift on .*: no differences in what was compared; not checked: preshared key of alice@example\.com\/laptop/,
    );
    expect(said).not.toMatch(/matches|\u001b|\u202e/);
  });
});

describe('access tests in a plan', () => {
  it('a passing run is counted in text and markdown', () => {
    const plan = emptyPlan({ tests: { passed: 14, failed: 0, failures: [] } });
    expect(renderPlan(plan, 'text', { color: false })).toContain('Access tests (files only): all 14 passed.');
    expect(renderPlan(plan, 'markdown', { color: false })).toContain('Access tests (files only): all 14 passed.');
  });

  it('failures come first, with place, expectation, outcome and deciding rule, inert', () => {
    const plan = emptyPlan({
      tests: {
        passed: 1,
        failed: 1,
        failures: [
          {
            name: HOSTILE,
            at: 'desired/tests.yaml:12',
            from: 'erin@example.com',
            to: '10.1.5.5:443/tcp',
            expected: 'drop',
            got: 'accept',
            decided_by: 'accept 10.1.0.0/17 tcp 443 (global) at desired/a.yaml:3, global port-accept',
            source: 'erin@example.com/laptop',
          },
        ],
      },
    });
    const line =
      'FAIL x\\u001b[2J\\u202e`|* at desired/tests.yaml:12: erin@example.com -> 10.1.5.5:443/tcp (from erin@example.com/laptop): ' +
      'expected drop, got accept; decided by accept 10.1.0.0/17 tcp 443 (global) at desired/a.yaml:3, global port-accept';
    const text = renderPlan(plan, 'text', { color: false });
    expect(text.split('\n').slice(0, 4)).toEqual([
      expect.stringMatching(/^netform plan for /),
      '',
      '1 access test fails: this plan cannot be applied (nothing was saved)',
      `  ${line}`,
    ]);
    expect(text).toContain('Access tests (files only): 1 of 2 failed, 1 passed.');
    const md = renderPlan(plan, 'markdown', { color: false });
    expect(md.split('\n').slice(0, 7)).toEqual([
      '<!-- netform-plan -->',
      '### netform plan',
      '',
      '> [!CAUTION]',
      '> 1 access test fails: this plan cannot be applied.',
      '',
      `- \`\`${line}\`\``,
    ]);
    expect(md).not.toMatch(/\u001b|\u202e/);
  });
});
