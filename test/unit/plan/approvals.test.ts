/** The approvals file, which approvals count, and the changes withheld without them. */
import { describe, expect, it } from 'vitest';
import { approvedHandles, parseApprovals, withholdUnapproved, ApprovalsError } from '../../../src/plan/approvals.js';
import { approvalsProblemText } from '../../../src/views/plan-approvals.js';
import { WITHHELD_REASONS, type ReviewedIntersection } from '../../../src/plan/reviewed.js';
import { planChanges } from '../../../src/plan/index.js';
import { desired, liveState, liveUser, OPTIONS, rule, user } from '../../helpers/plan-fixtures.js';

const HEAD = 'a'.repeat(40);
const OLDER = 'b'.repeat(40);

describe('parseApprovals', () => {
  it('reads a list of approvals', () => {
    expect(
      parseApprovals(JSON.stringify([{ login: 'dana', teams: ['@org/db-team'], commit: HEAD }]), 'a.json'),
    ).toEqual([{ login: 'dana', teams: ['@org/db-team'], commit: HEAD }]);
  });

  it.each([
    ['{', 'a.json: not JSON'],
    ['{}', 'a.json: expected a JSON list'],
    ['[1]', 'a.json: entry 1: expected an object'],
    [`[{"login":"x","teams":[],"commit":"${HEAD}","role":"admin"}]`, 'a.json: entry 1: unknown field "role"'],
    [`[{"login":"org/x","teams":[],"commit":"${HEAD}"}]`, 'a.json: entry 1: "login" must be a GitHub login'],
    [`[{"login":"x","teams":["db team"],"commit":"${HEAD}"}]`, 'a.json: entry 1: "teams"[0] must be a handle'],
    ['[{"login":"x","teams":[],"commit":"main"}]', 'a.json: entry 1: "commit" must be a commit hash'],
  ])('refuses %s, naming the entry and field', (text, message) => {
    expect(() => parseApprovals(text, 'a.json')).toThrow(ApprovalsError);
    const refused = (() => {
      try {
        parseApprovals(text, 'a.json');
      } catch (error) {
        return error as ApprovalsError;
      }
    })();
    expect(approvalsProblemText(refused!.problem)).toContain(message);
  });
});

describe('approvedHandles', () => {
  const pr = { head: HEAD, author: 'Carol' };
  it('counts approvals of the head commit by others, for their teams and their own handle', () => {
    const handles = approvedHandles(
      [
        { login: 'dana', teams: ['@Org/DB-Team'], commit: HEAD },
        { login: 'erin', teams: ['@org/web-team'], commit: OLDER },
        { login: 'carol', teams: ['@org/ops'], commit: HEAD },
      ],
      pr,
    );
    expect([...handles].sort()).toEqual(['@dana', '@org/db-team']);
  });

  it('counts nothing without a pull request recorded', () => {
    expect(approvedHandles([{ login: 'dana', teams: ['@org/db-team'], commit: HEAD }], undefined).size).toBe(0);
  });
});

describe('withholdUnapproved', () => {
  it('withholds a change missing a reviewer, and what depends on it', () => {
    const files = desired({ users: [user('kim@example.com', { rules: [rule('10.20.0.0/16')] })] });
    const plan = planChanges(files, liveState({ users: [liveUser('admin@example.com', { role: 'admin' })] }), OPTIONS);
    const ruleId = plan.changes.find((c) => c.kind === 'rule')!.id;
    const userId = plan.changes.find((c) => c.kind === 'user')!.id;
    const result: ReviewedIntersection = { plan, withheld: [], notNeeded: [] };
    const needed = new Map([[userId, ['@org/db-team']]]);
    const held = withholdUnapproved(result, needed, new Set());
    expect(held.missing).toEqual(['@org/db-team']);
    expect(held.plan.changes).toEqual([]);
    expect(held.withheld.map((w) => [w.change.id, w.reason])).toEqual([
      [userId, WITHHELD_REASONS.needsApproval],
      [ruleId, WITHHELD_REASONS.dependsOnWithheld],
    ]);
    expect(withholdUnapproved(result, needed, new Set(['@org/db-team'])).plan.changes).toHaveLength(2);
  });
});
