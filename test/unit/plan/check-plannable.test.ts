/**
 * checkPlannable (what adopt checks its own edits with): the refusal planChanges gives, the same
 * problems, without the plan document; nothing when the state plans.
 */
import { describe, expect, it } from 'vitest';
import { checkPlannable, planChanges, PlanError } from '../../../src/plan/index.js';
import { desired, device, liveState, liveUser, OPTIONS, user } from '../../helpers/plan-fixtures.js';

const problemsOf = (run: () => unknown): unknown[] | null => {
  try {
    run();
  } catch (error) {
    if (error instanceof PlanError) return error.problems;
    throw error;
  }
  return null;
};

describe('checkPlannable', () => {
  const live = liveState({ users: [liveUser('admin@example.com', { role: 'admin' })] });
  const networks = { ipv4: '10.3.2.0/29', ipv6: 'fd00::3:2:0/120' };
  const users = (count: number) =>
    Array.from({ length: count }, (_, i) => user(`u${i}@example.com`, { devices: [device('laptop')] }));

  it('refuses with the problems planChanges refuses with', () => {
    const state = desired({ users: users(6), settings: { tunnel_networks: networks } });
    const refused = problemsOf(() => planChanges(state, live, OPTIONS));
    expect(refused).not.toBeNull();
    expect(problemsOf(() => checkPlannable(state, live, OPTIONS))).toEqual(refused);
    // The token user unknown to the server: another stage's problem, the same answer.
    const stranger = { ...OPTIONS, tokenUser: 'nobody@example.com' };
    const unknown = problemsOf(() => planChanges(desired({ users: users(1) }), live, stranger));
    expect(unknown).not.toBeNull();
    expect(problemsOf(() => checkPlannable(desired({ users: users(1) }), live, stranger))).toEqual(unknown);
  });

  it('passes what planChanges plans', () => {
    const state = desired({ users: users(5), settings: { tunnel_networks: networks } });
    expect(planChanges(state, live, OPTIONS).summary.create).toBe(10);
    expect(problemsOf(() => checkPlannable(state, live, OPTIONS))).toBeNull();
  });
});
