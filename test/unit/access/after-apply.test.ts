/**
 * The state after apply (src/access/after-apply.ts) and what is judged on it: the files' managed
 * part plus every live object apply leaves in place, each rule with where it comes from; live
 * rules outside the files that decide packets inside the managed blocks (src/access/deciding.ts);
 * a plan's tests, access changes and outcome on that state (src/access/plan.ts judgeAfterApply).
 */
import { describe, expect, it } from 'vitest';
import { stateAfterApply } from '../../../src/access/after-apply.js';
import { decidingLeftRules, decidingText } from '../../../src/access/deciding.js';
import { judgeAfterApply } from '../../../src/access/plan.js';
import { CompiledRules, evaluateFrom, parseFrom, parseTo } from '../../../src/access/index.js';
import { planChanges } from '../../../src/plan/index.js';
import { isPending } from '../../../src/plan/outcome.js';
import type { DesiredState, LiveState } from '../../../src/model/state.js';
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

const bob = liveUser('bob@corp.test');
const carol = liveUser('carol@other.test');
const gone = liveUser('gone@corp.test');
const admin = liveUser('admin@example.com', { role: 'admin' });

function scenario(prune: boolean, extra: { live?: Partial<LiveState>; tests?: DesiredState['tests'] } = {}) {
  const files = desired({
    settings: { prune, manage: { users: ['*@corp.test'], rules: ['10.0.0.0/8'] } },
    users: [
      user('bob@corp.test', {
        devices: [device('laptop')],
        rules: [rule('10.5.0.0/16', { port_type: 'tcp', port_range: '443' })],
      }),
      user('new@corp.test', { devices: [device('pc')] }),
    ],
    rules: [rule('10.0.0.0/8', { action: 'drop' })],
  });
  if (extra.tests) files.tests = extra.tests;
  const live = liveState({
    users: [admin, bob, carol, gone],
    devices: [liveDevice(bob, 'laptop', { ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' })],
    rules: [
      liveRule({ destination: '10.0.0.0/8', action: 'drop' }),
      liveRule({ destination: '10.0.0.0/7' }),
      liveRule({ destination: '192.168.0.0/16' }),
      liveRule({ destination: '10.20.0.0/16' }),
      liveRule({ destination: '10.1.0.0/16', user_id: carol.id, port_type: 'tcp', port_range: '22' }),
      liveRule({ destination: '10.30.0.0/16', user_id: gone.id }),
    ],
    ...extra.live,
  });
  const plan = planChanges(files, live, OPTIONS);
  return { files, live, plan };
}

function verdict(model: ReturnType<typeof stateAfterApply>['model'], from: string, to: string): string {
  const f = parseFrom(from);
  const t = parseTo(to);
  if (!f.ok || !t.ok) throw new Error('bad notation');
  const r = evaluateFrom(model, new CompiledRules(model), f.value, t.value);
  if (!r.ok) throw new Error(r.message);
  return r.value.decisions.map((d) => d.decision.verdict).join(',');
}

describe('stateAfterApply', () => {
  it('with prune on: the declared rules, the created ones, and the live rules outside manage, each saying why it stays', () => {
    const { files, live, plan } = scenario(true);
    const after = stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired: files });
    const rules = after.model.rules.map(
      (r) => `${r.action} ${r.destination} ${r.owner ?? 'global'} ${r.left?.kind ?? 'files'}`,
    );
    expect(rules.sort()).toEqual(
      [
        'drop 10.0.0.0/8 global files',
        'accept 10.0.0.0/7 global outside-rules',
        'accept 192.168.0.0/16 global outside-rules',
        'accept 10.1.0.0/16 carol@other.test outside-users',
        'accept 10.5.0.0/16 bob@corp.test files',
      ].sort(),
    );
    // gone@ is deleted with its rule; new@ is created with its device (address not known yet).
    expect([...after.model.users.keys()].sort()).toEqual([
      'admin@example.com',
      'bob@corp.test',
      'carol@other.test',
      'new@corp.test',
    ]);
    expect(after.model.users.get('new@corp.test')!.devices).toEqual([{ name: 'pc' }]);
    expect(after.model.users.get('bob@corp.test')!.devices).toEqual([
      { name: 'laptop', ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' },
    ]);
    expect([...after.repositoryModel().users.keys()].sort()).toEqual(['bob@corp.test', 'new@corp.test']);
    // The broad rule decides: by 0.7.36's order a portless accept comes before a portless drop.
    expect(verdict(after.model, 'bob@corp.test', '10.9.9.9:22/tcp')).toBe('accept');
    expect(verdict(after.model, 'carol@other.test/*', '10.1.2.3:22/tcp')).toBe('accept');
  });

  it("with prune off: a hand-made rule inside the scope stays, kept for the plan's reason", () => {
    const { files, live, plan } = scenario(false);
    const after = stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired: files });
    const kept = after.leftRules().filter((r) => r.left!.kind === 'kept');
    expect(kept.map((r) => r.destination).sort()).toEqual(['10.20.0.0/16', '10.30.0.0/16']);
    expect(keptReasonText(kept[0]!.left!.reason!)).toMatch(/^prune is off/);
    expect(after.model.users.has('gone@corp.test')).toBe(true);
  });
});

it('is built once for the same inputs (a plan, its access delta, a reviewed apply), again for other ones', () => {
  const { files, live, plan } = scenario(true);
  const after = stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired: files });
  // The same changes in a new array (a plan spread, `[...first, ...then]`) are the same inputs.
  expect(stateAfterApply({ changes: [...plan.changes], undeclared: plan.undeclared, live, desired: files })).toBe(
    after,
  );
  const now = stateAfterApply({ changes: [], live, desired: files });
  expect(now).not.toBe(after);
  expect(stateAfterApply({ changes: [], undeclared: [], live, desired: files })).toBe(now);
  // Fewer changes (an intersection), another desired state or another live state: built anew.
  const fewer = stateAfterApply({ changes: plan.changes.slice(1), undeclared: plan.undeclared, live, desired: files });
  expect(fewer).not.toBe(after);
  expect(stateAfterApply({ changes: plan.changes, live, desired: { ...files } })).not.toBe(after);
  const again = stateAfterApply({
    changes: plan.changes,
    undeclared: plan.undeclared,
    live: { ...live },
    desired: files,
  });
  expect(again).not.toBe(after);
  expect(again.model.rules).toEqual(after.model.rules);
});

describe('decidingLeftRules', () => {
  it('lists the broad global rule (counts) and the outside user (listed), not a global rule that meets no managed block', () => {
    const { files, live, plan } = scenario(true);
    const after = stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired: files });
    const items = decidingLeftRules(after);
    const texts = items.map(decidingText);
    expect(texts[0]).toBe(
      'rule accept 10.0.0.0/7 (global, outside manage.rules) decides packets inside 10.0.0.0/8: ' +
        'every user (except where own rules of bob@corp.test apply) reaches 10.0.0.0/8 (all protocols); ' +
        'bob@corp.test reaches 10.5.0.0/16 tcp 0-442, 444-65535; bob@corp.test reaches 10.5.0.0/16 udp 0-65535; ' +
        'bob@corp.test reaches 10.5.0.0/16 other protocols (icmp, …)',
    );
    // The broad accept already lets carol in: her own rule changes no verdict today, and is listed all the same.
    expect(texts[1]).toBe(
      "user carol@other.test (outside this repository's users) reaches inside 10.0.0.0/8 by its own rules: " +
        'no verdict there differs from the other rules today',
    );
    expect(texts).toHaveLength(2);
    expect(items.map((i) => i.status)).toEqual(['counts', 'listed']);
  });

  it('a forgotten rule is listed as forgotten, an acknowledged one not at all (the seam later issues fill)', () => {
    const { files, live, plan } = scenario(true);
    const after = stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired: files });
    const broad = (r: { destination: string }) => r.destination === '10.0.0.0/7';
    expect(decidingLeftRules(after, { acknowledged: broad, forgotten: () => false }).map((i) => i.kind)).toEqual([
      'user',
    ]);
    const forgotten = decidingLeftRules(after, { acknowledged: () => false, forgotten: broad });
    expect(forgotten[0]!.status).toBe('forgotten');
  });
});

describe('judgeAfterApply', () => {
  it('runs the tests on the state after apply, names the rule behind a failure, and counts the broad rule as drift', () => {
    const tests: DesiredState['tests'] = [
      { name: 'bob not past the range', from: 'bob@corp.test', to: '10.20.99.5:22/tcp', expect: 'drop' },
    ];
    const { files, live, plan } = scenario(true, { tests });
    const judged = judgeAfterApply(plan, live, files, { tests: true });
    expect(judged.tests).toMatchObject({ evaluated: 'after-apply', passed: 0, failed: 1 });
    expect(judged.tests!.failures[0]!.because).toEqual({
      rule: 'accept 10.0.0.0/7 (global, outside manage.rules)',
      id: live.rules[1]!.id,
      left: 'outside-rules',
      changeable: false,
    });
    expect(Object.keys(judged)[0]).toBe('tests');
    expect(judged.outcome!.pending.filter((i) => i.reason === 'deciding')).toHaveLength(1);
    expect(judged.outcome!.kept.filter((i) => i.reason === 'deciding')).toHaveLength(1);
  });

  it('without live rules outside the files, the plan is judged as before: nothing pending added', () => {
    const files = desired({
      settings: { prune: true, manage: { users: ['*@corp.test'], rules: ['10.0.0.0/8'] } },
      rules: [rule('10.0.0.0/8', { action: 'drop' })],
    });
    const live = liveState({ users: [admin], rules: [liveRule({ destination: '10.0.0.0/8', action: 'drop' })] });
    const judged = judgeAfterApply(planChanges(files, live, OPTIONS), live, files);
    expect(judged.deciding).toBeUndefined();
    expect(isPending(judged)).toBe(false);
  });
});

it('shares the live rules it leaves as they are with the state of the server as it is, and is the same state as one built alone', () => {
  for (const prune of [true, false]) {
    const { files, live, plan } = scenario(prune);
    // Built alone: no state of this live state without changes exists yet.
    const alone = stateAfterApply({
      changes: plan.changes,
      undeclared: plan.undeclared,
      live: { ...live },
      desired: files,
    });
    const now = stateAfterApply({ changes: [], live, desired: files });
    const after = stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired: files });
    expect(after.model.rules).toEqual(alone.model.rules);
    expect(after.leftRules()).toEqual(alone.leftRules());
    const nowById = new Map(now.model.rules.map((r) => [r.id, r]));
    const kept = new Set((plan.undeclared ?? []).map((item) => item.liveId));
    const shared = after.model.rules.filter((r) => r.id !== undefined && nowById.get(r.id) === r);
    // Every live rule apply leaves untouched and the plan does not keep is the same object; a kept one is not.
    expect(shared.length).toBeGreaterThan(0);
    for (const r of after.model.rules.filter((x) => x.id !== undefined))
      expect(nowById.get(r.id!) === r).toBe(!kept.has(r.id!) && r.left?.kind !== 'kept');
  }
});
