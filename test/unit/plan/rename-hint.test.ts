/**
 * The hint for an email changed without `renamed_from` says what else the rename takes when the
 * old email lies outside settings.manage.users: validate refuses a rename from outside the scope,
 * so following the hint alone would end in that error.
 */
import { describe, expect, it } from 'vitest';
import { PlanError, planChanges } from '../../../src/plan/planner.js';
import { planProblemsText } from '../../../src/views/plan-problems.js';
import { warningText } from '../../../src/views/plan-warnings.js';
import { desired, device, KEY_A, liveDevice, liveState, liveUser, OPTIONS, user } from '../../helpers/plan-fixtures.js';

function hintOf(manage: string[] | null): string {
  const admin = liveUser('admin@example.com', { role: 'admin' });
  const old = liveUser('erin@old.example');
  const state = desired({
    users: [user('erin@new.example', { devices: [device('laptop', { public_key: KEY_A })] })],
    ...(manage ? { settings: { manage: { users: manage, rules: null } } } : {}),
  });
  const live = liveState({ users: [admin, old], devices: [liveDevice(old, 'laptop')] });
  try {
    const plan = planChanges(state, live, OPTIONS);
    return plan.warnings.map(warningText).find((w) => w.includes('renamed_from')) ?? '';
  } catch (error) {
    if (!(error instanceof PlanError)) throw error;
    return planProblemsText(error.problems);
  }
}

describe('the hint to write renamed_from', () => {
  it('inside the scope: write renamed_from', () => {
    const hint = hintOf(null);
    expect(hint).toContain('if it is erin@old.example renamed, write renamed_from: erin@old.example under it');
    expect(hint).not.toContain('widen');
  });

  it('outside the scope: also widen settings.manage.users', () => {
    expect(hintOf(['*@new.example'])).toContain(
      'write renamed_from: erin@old.example under it (one update of its email; its devices and rules stay), and widen settings.manage.users to include erin@old.example, not a delete and a create',
    );
  });
});
