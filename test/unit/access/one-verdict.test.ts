/**
 * W3.6, one verdict everywhere: `from: EMAIL` evaluates each of the user's devices, and a user with
 * none has no tunnel (it counts as drop); `from: EMAIL/*` evaluates the user's rules as any device
 * of theirs would see them, so a policy test needs no device. The same with the live model.
 */
import { describe, expect, it } from 'vitest';
import {
  accessModelOfDesired,
  accessModelOfLive,
  checkAccessTests,
  CompiledRules,
  evaluateFrom,
  parseFrom,
  parseTo,
  runAccessTests,
  type AccessModel,
} from '../../../src/access/index.js';
import { testLine } from '../../../src/views/access.js';
import type { DesiredTest } from '../../../src/model/state.js';
import { desired, device, liveDevice, liveRule, liveState, liveUser, rule, user } from '../../helpers/plan-fixtures.js';

const state = desired({
  users: [
    user('erin@example.com'), // no device
    user('alice@example.com', {
      devices: [device('laptop'), device('phone', { ipv4: '10.3.2.9' })],
      rules: [rule('10.1.5.5', { action: 'drop', port_type: 'tcp', port_range: '443' })],
    }),
  ],
  rules: [rule('10.1.0.0/17', { port_type: 'tcp', port_range: '443' })],
});

function evaluate(model: AccessModel, from: string, to: string) {
  const f = parseFrom(from);
  const t = parseTo(to);
  if (!f.ok || !t.ok) throw new Error('bad notation');
  const result = evaluateFrom(model, new CompiledRules(model), f.value, t.value);
  if (!result.ok) throw new Error(result.message);
  return result.value.decisions.map((d) => `${d.user}${d.device ? `/${d.device}` : ''}: ${d.decision.verdict}`);
}

const test = (name: string, from: string, to: string, expect: 'accept' | 'drop'): DesiredTest => ({
  name,
  from,
  to,
  expect,
});

describe('from: EMAIL and EMAIL/*', () => {
  const model = accessModelOfDesired(state);

  it('a user without devices has no tunnel; EMAIL/* evaluates their rules as any device would', () => {
    expect(evaluate(model, 'erin@example.com', '10.1.5.5:443/tcp')).toEqual(['erin@example.com: no tunnel']);
    expect(evaluate(model, 'erin@example.com/*', '10.1.5.5:443/tcp')).toEqual(['erin@example.com/*: accept']);
    expect(evaluate(model, 'alice@example.com', '10.1.5.5:443/tcp')).toEqual([
      'alice@example.com/laptop: drop',
      'alice@example.com/phone: drop',
    ]);
    expect(evaluate(model, 'alice@example.com/*', '10.1.5.6:443/tcp')).toEqual(['alice@example.com/*: accept']);
  });

  it('* is each device of every user (deviceless: not a source); */* every user as any device of theirs', () => {
    expect(evaluate(model, '*', '10.1.5.6:443/tcp')).toEqual([
      'alice@example.com/laptop: accept',
      'alice@example.com/phone: accept',
    ]);
    expect(evaluate(model, '*/*', '10.1.5.5:443/tcp')).toEqual([
      'erin@example.com/*: accept',
      'alice@example.com/*: drop',
    ]);
  });

  it('tests: "no tunnel (no device)" fails an accept and satisfies a drop; EMAIL/* passes the policy test', () => {
    const results = runAccessTests(model, [
      test('erin reaches the web', 'erin@example.com', '10.1.5.5:443/tcp', 'accept'),
      test('erin cannot reach the web', 'erin@example.com', '10.1.5.5:443/tcp', 'drop'),
      test('erin policy', 'erin@example.com/*', '10.1.5.5:443/tcp', 'accept'),
    ]);
    expect(results.map((r) => r.pass)).toEqual([false, true, true]);
    expect(testLine(results[0]!)).toBe(
      'FAIL erin reaches the web: erin@example.com -> 10.1.5.5:443/tcp, expected accept, got no tunnel (no device)',
    );
    expect(testLine(results[2]!)).toMatch(
      /^PASS erin policy: erin@example\.com\/\* -> 10\.1\.5\.5:443\/tcp, expected accept, got accept by accept 10\.1\.0\.0\/17/,
    );
  });

  it('validate: EMAIL/* needs the user declared, not a device', () => {
    const tests = [
      test('a', 'erin@example.com/*', '10.1.5.5:443/tcp', 'accept'),
      test('b', 'nobody@example.com/*', '10.1.5.5:443/tcp', 'accept'),
    ];
    expect(checkAccessTests({ ...state, tests }).map((d) => d.message)).toEqual([
      'no user nobody@example.com is declared',
    ]);
  });
});

describe('the live model answers the same', () => {
  it('a live user without devices has no tunnel; EMAIL/* uses their live rules', () => {
    const erin = liveUser('erin@example.com');
    const alice = liveUser('alice@example.com');
    const live = liveState({
      users: [erin, alice],
      devices: [liveDevice(alice, 'laptop', { ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' })],
      rules: [
        liveRule({ destination: '10.1.0.0/17', action: 'accept', port_type: 'tcp', port_range: '443' }),
        liveRule({ destination: '10.1.5.5', action: 'drop', user_id: erin.id }),
      ],
    });
    const model = accessModelOfLive(live);
    expect(evaluate(model, 'erin@example.com', '10.1.5.6:443/tcp')).toEqual(['erin@example.com: no tunnel']);
    expect(evaluate(model, 'erin@example.com/*', '10.1.5.5:443/tcp')).toEqual(['erin@example.com/*: drop']);
    expect(evaluate(model, 'erin@example.com/*', '10.1.5.6:443/tcp')).toEqual(['erin@example.com/*: accept']);
    expect(evaluate(model, 'alice@example.com', '10.1.5.6:443/tcp')).toEqual(['alice@example.com/laptop: accept']);
  });
});
