/**
 * The plan's codes in words (src/views/plan-*.ts): the sentences the planner wrote before it
 * carried codes, byte for byte, for those no end-to-end test prints.
 */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../../src/plan/index.js';
import type { Plan } from '../../../src/plan/types.js';
import { wordedPlan } from '../../../src/views/notes.js';
import { baseNoteText } from '../../../src/views/plan-base.js';
import { renderPlan } from '../../../src/views/plan.js';
import { desired, liveState, liveUser, OPTIONS } from '../../helpers/plan-fixtures.js';

describe('a base whose files cannot be planned', () => {
  const admin = liveUser('admin@example.com', { role: 'admin' });
  const plan: Plan = {
    ...planChanges(desired(), liveState({ users: [admin] }), OPTIONS),
    base: {
      ref: 'origin/main',
      note: {
        code: 'base_unplannable',
        ref: 'origin/main',
        problems: [{ code: 'token_user_unknown', given: 'x@y.z' }],
      },
    },
  };

  it('says why, in the plan and in its JSON', () => {
    const words =
      "origin/main's files cannot be planned (--token-user/NETFORM_TOKEN_USER x@y.z names no user on the server; " +
      'give the email of the admin the API token belongs to): every change counts as introduced by this pull request';
    expect(baseNoteText(plan.base!.note!)).toBe(words);
    expect(wordedPlan(plan).base!.note).toBe(words);
    expect(renderPlan(plan, 'text', { color: false })).toContain(`! ${words}`);
  });

  it('names a refused target with its flag', () => {
    expect(
      baseNoteText({ code: 'base_unplannable', ref: 'main', target: { code: 'device', target: 'device:x' } }),
    ).toBe(
      "main's files cannot be planned (--target device:x: a device is device:EMAIL/NAME): every change counts as introduced by this pull request",
    );
  });
});
