/**
 * The plan's codes in words (src/views/plan-*.ts): the sentences the planner wrote before it
 * carried codes, byte for byte, for those no end-to-end test prints.
 */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../../src/plan/index.js';
import type { Plan } from '../../../src/plan/types.js';
import { wordedPlan } from '../../../src/views/notes.js';
import { baseNoteText } from '../../../src/views/ops-plan.js';
import { renderPlan } from '../../../src/views/plan.js';
import { outcomeText } from '../../../src/views/plan-outcome.js';
import { planProblemText } from '../../../src/views/plan-problems.js';
import { warningText } from '../../../src/views/plan-warnings.js';
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

describe('the words of codes no end-to-end test prints', () => {
  it('problems', () => {
    expect([
      planProblemText({ code: 'rename_from_declared', at: 'a.yaml:3', email: 'b@x.test', from: 'a@x.test' }),
      planProblemText({ code: 'device_rename_both_live', name: 'new', owner: 'a@x.test', from: 'old' }),
      planProblemText({
        code: 'value_held',
        label: 'device a@x.test/pc',
        field: 'ipv4',
        value: '10.3.2.9',
        holder: 'device b@x.test/pc (of b@x.test)',
      }),
      planProblemText({
        code: 'rule_overlaps',
        label: 'rule accept 10.0.0.0/8 (global)',
        live: 'rule accept 10.2.0.0/16 (global)',
        prune: true,
      }),
      planProblemText({ code: 'configuration_unread' }),
      planProblemText({
        code: 'secret_unsendable',
        ref: { env: 'PSK' },
        send: 'psk_changed',
        key: 'a@x.test/pc',
        unreadable: 'environment variable PSK is not set',
      }),
      planProblemText({
        code: 'secret_unsendable',
        at: 'a.yaml:9',
        ref: { env: 'PSK' },
        send: 'device_replaced',
        key: 'a@x.test/pc',
        unreadable: 'environment variable PSK is not set',
      }),
    ]).toEqual([
      'a.yaml:3: user b@x.test has renamed_from: a@x.test, which the files also declare',
      'device new of a@x.test has renamed_from: old, but both devices exist on the server; delete one of them or remove renamed_from',
      'device a@x.test/pc needs ipv4 10.3.2.9, which the live device b@x.test/pc (of b@x.test) holds, and the plan neither deletes nor changes it: free it on device b@x.test/pc (of b@x.test) first, or give device a@x.test/pc another ipv4',
      'rule accept 10.0.0.0/8 (global) overlaps the live rule rule accept 10.2.0.0/16 (global) (same owner and action), which no file declares and the plan does not delete (outside settings.manage): the server would refuse it; declare or delete that rule, or change this one',
      'the live state holds no configuration although the desired state declares one',
      'device a@x.test/pc gets a new preshared key, and environment variable PSK is not set',
      'a.yaml:9: device a@x.test/pc is replaced, and created again with its preshared key, and environment variable PSK is not set',
    ]);
  });

  it('warnings and outcome items', () => {
    const source = { file: 'a.yaml', line: 4 };
    expect([
      warningText({ code: 'acknowledged_declared', what: 'rule:*|accept|10.0.0.0/8|any', source }),
      warningText({ code: 'acknowledged_field_undeclared', what: 'user:a@x.test role', key: 'user:a@x.test' }),
      warningText({ code: 'target_unmatched', target: 'user:a@x.test', near: 'user:a@x.text' }),
      outcomeText({ code: 'role_ignored', label: 'user a@x.test', role: 'admin' }),
      outcomeText({ code: 'field_ignored', key: 'a@x.test/pc', field: 'mtu', value: 1280 }),
      outcomeText({
        code: 'acknowledged',
        name: 'user a@x.test: role',
        whole: false,
        value: 'admin',
        until: '2027-01-01',
        reason: 'incident',
      }),
    ]).toEqual([
      'acknowledged: rule:*|accept|10.0.0.0/8|any: a file declares this rule as it is: nothing to acknowledge (a.yaml:4)',
      'acknowledged: user:a@x.test role: no file declares user:a@x.test; acknowledge it as a whole ("*")',
      '--target user:a@x.test: no change is planned for it (already as declared, or not a key of these files) (did you mean user:a@x.text?)',
      'user a@x.test: role is admin on the server, not managed (ignore_changes)',
      'device a@x.test/pc: mtu is 1280 on the server, not managed (ignore_changes)',
      'user a@x.test: role is "admin" on the server, acknowledged until 2027-01-01 (incident)',
    ]);
  });
});
