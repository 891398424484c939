/** Undeclared objects are never silent: listed in the plan document and every rendering, with their fate. */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../../src/plan/index.js';
import { renderPlan } from '../../../src/views/plan.js';
import {
  desired,
  device,
  liveDevice,
  liveRule,
  liveState,
  liveUser,
  OPTIONS,
  rule,
  user,
} from '../../helpers/plan-fixtures.js';
import { keptReasonText } from '../../../src/views/notes.js';

function scenario(prune: boolean) {
  const admin = liveUser('admin@example.com', { role: 'admin' });
  const alice = liveUser('alice@example.com');
  const bob = liveUser('bob@example.com');
  const live = liveState({
    users: [admin, alice, bob],
    devices: [liveDevice(alice, 'laptop'), liveDevice(alice, 'old-phone'), liveDevice(bob, 'phone')],
    rules: [
      liveRule({ destination: '10.1.0.0/16', user_id: alice.id, port_type: 'tcp', port_range: '22' }),
      liveRule({ destination: '10.9.0.0/16' }),
    ],
  });
  const files = desired({
    settings: { prune, manage: { users: ['alice@*', 'bob@*'], rules: ['10.0.0.0/8'] } },
    users: [
      user('alice@example.com', {
        devices: [device('laptop')],
        rules: [rule('10.1.0.0/16', { port_type: 'tcp', port_range: '2222' })],
      }),
    ],
  });
  return planChanges(files, live, OPTIONS);
}

describe('undeclared objects', () => {
  it('prune off: each live object in scope that no file declares is listed as kept, in json, text and markdown', () => {
    const plan = scenario(false);
    expect(plan.undeclared!.map((u) => [u.label, u.fate])).toEqual([
      ['user bob@example.com (with 1 device, 0 rules)', 'keep'],
      ['device alice@example.com/old-phone', 'keep'],
      ['rule accept 10.1.0.0/16 tcp 22 (alice@example.com)', 'keep'],
      ['rule accept 10.9.0.0/16 (global)', 'keep'],
    ]);
    expect(keptReasonText(plan.undeclared!.find((u) => u.kind === 'rule')!.reason)).toBe(
      'prune is off: the access it grants remains',
    );
    const json = JSON.parse(renderPlan(plan, 'json', { color: false }));
    expect(json.undeclared).toHaveLength(4);
    const text = renderPlan(plan, 'text', { color: false });
    expect(text).toContain(
      '  = rule accept 10.1.0.0/16 tcp 22 (alice@example.com)  (kept: prune is off: the access it grants remains)\n',
    );
    expect(text).toContain(
      'Undeclared: 4 live objects inside the managed scope that no file declares: 4 kept (prune is off).\nPlan:',
    );
    const md = renderPlan(plan, 'markdown', { color: false });
    expect(md).toContain('Undeclared: 4 live objects inside the managed scope that no file declares');
    expect(md).toContain('  user bob@example.com (with 1 device, 0 rules)  (kept: prune is off');
  });

  it('prune on: the same objects are listed as deleted (the changed rule is replaced); the admin outside manage is not listed', () => {
    const plan = scenario(true);
    expect(plan.undeclared!.every((u) => u.fate === 'delete')).toBe(true);
    expect(plan.undeclared!.map((u) => u.key)).not.toContain('admin@example.com');
    expect(plan.changes.filter((c) => c.action === 'replace').map((c) => c.label)).toEqual([
      'rule accept 10.1.0.0/16 tcp 2222 (alice@example.com)',
    ]);
    expect(renderPlan(plan, 'text', { color: false })).toContain(
      'Undeclared: 3 live objects inside the managed scope that no file declares: 3 deleted (prune is on).',
    );
  });

  it('no line at all when everything in scope is declared', () => {
    const plan = planChanges(
      desired({ settings: { manage: { users: ['nobody@*'], rules: [] } } }),
      liveState({ users: [liveUser('a@example.com')] }),
      { ...OPTIONS, tokenUser: null },
    );
    expect(plan.undeclared).toEqual([]);
    expect(renderPlan(plan, 'text', { color: false })).not.toContain('Undeclared');
  });
});
