/**
 * `settings.port_rules: false` (rule-semantics.md §5.1): a 0.7.36 server on a kernel without
 * port-rule support stores a rule created with ports without them (§5.1.1), and leaves the rules
 * with ports it already has out of its ruleset (§5.1.2). Tests, explain and access changes follow
 * the kernel; validate and plan warn about each declared rule with ports.
 */
import { describe, expect, it } from 'vitest';
import {
  accessModelOfDesired,
  accessModelOfLive,
  CompiledRules,
  describeRule,
  evaluateFrom,
  parseTo,
  portRuleWarnings,
  runAccessTests,
} from '../../../src/access/index.js';
import { planAccessChanges } from '../../../src/access/plan.js';
import { planChanges } from '../../../src/plan/index.js';
import type { DesiredState } from '../../../src/model/state.js';
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

const AT = (line: number) => ({
  file: 'n.yaml',
  line,
  column: 7,
  path: `rules[${line}]`,
  fields: { port_type: { file: 'n.yaml', line, column: 40, path: `rules[${line}].port_type` } },
});

function state(portRules: boolean | undefined): DesiredState {
  return desired({
    settings: portRules === undefined ? {} : { port_rules: portRules },
    users: [
      user('alice@example.com', {
        devices: [device('laptop', { ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' })],
        rules: [rule('2001:db8:1::/48', { action: 'drop', port_type: 'tcp', port_range: '22', source: AT(5) })],
      }),
    ],
    rules: [
      rule('0.0.0.0/0', { action: 'drop', source: AT(8) }),
      rule('1.2.3.4', { action: 'accept', port_type: 'tcp', port_range: '443', source: AT(9) }),
    ],
  });
}

function verdict(s: DesiredState, to: string): string {
  const model = accessModelOfDesired(s);
  const packet = parseTo(to);
  if (!packet.ok) throw new Error(packet.message);
  const result = evaluateFrom(
    model,
    new CompiledRules(model),
    { kind: 'user', user: 'alice@example.com' },
    packet.value,
  );
  if (!result.ok) throw new Error(result.message);
  return result.value.decisions[0]!.decision.verdict;
}

describe('declared rules with ports when port_rules is false', () => {
  it('are evaluated without their ports, as the kernel filters them (found by the kernel suite)', () => {
    // The kernel suite's disagreement: a user's "drop 2001:db8:1::/48 tcp 22", stored without its
    // ports, dropped udp/23 and ICMP there while the evaluator, ignoring the rule, said accept.
    expect(verdict(state(false), '[2001:db8:1::1]:23/udp')).toBe('drop');
    expect(verdict(state(false), '2001:db8:1::1/icmp')).toBe('drop');
    expect(verdict(state(true), '[2001:db8:1::1]:23/udp')).toBe('accept');
    // "accept 1.2.3.4 tcp 443" becomes "accept 1.2.3.4": every protocol and port, over the global drop.
    expect(verdict(state(false), '1.2.3.4:53/udp')).toBe('accept');
    expect(verdict(state(false), '1.2.3.4/icmp')).toBe('accept');
    expect(verdict(state(true), '1.2.3.4:53/udp')).toBe('drop');
    expect(verdict(state(undefined), '1.2.3.4:53/udp')).toBe('drop');
  });

  it('say so where they are described (test lines, explain)', () => {
    const [result] = runAccessTests(accessModelOfDesired(state(false)), [
      { name: 'dns', from: 'alice@example.com', to: '1.2.3.4:53/udp', expect: 'drop' },
    ]);
    expect(result!.pass).toBe(false);
    expect(describeRule(result!.shown!.decision.decidedBy!.rule)).toBe(
      'accept 1.2.3.4 (global; declared tcp 443, stored without ports as settings.port_rules is false)',
    );
    expect(result!.shown!.decision.decidedBy!.stage).toBe('portless-accept');
  });

  it('get a warning each, at their port_type (validate, plan)', () => {
    expect(portRuleWarnings(state(true))).toEqual([]);
    expect(portRuleWarnings(state(undefined))).toEqual([]);
    const warnings = portRuleWarnings(state(false));
    expect(warnings.map((w) => [w.line, w.column, w.path])).toEqual([
      [5, 40, 'rules[5].port_type'],
      [9, 40, 'rules[9].port_type'],
    ]);
    expect(warnings[1]!.message).toBe(
      'settings.port_rules is false: a 0.7.36 server on a kernel without port-rule support stores this rule without its ports (tcp 443), ' +
        'so it accepts every protocol and port to 1.2.3.4; tests, explain and access changes evaluate it so. ' +
        'Declare it without port_type and port_range to say what the server does',
    );
  });

  it('show in access changes as the portless rules the server will store', () => {
    const alice = liveUser('alice@example.com');
    const live = liveState({
      users: [alice],
      devices: [liveDevice(alice, 'laptop')],
      rules: [liveRule({ destination: '0.0.0.0/0', action: 'drop' })],
    });
    const reachable = (portRules: boolean) => {
      const s = desired({
        settings: { port_rules: portRules },
        users: [user('alice@example.com', { devices: [device('laptop')] })],
        rules: [rule('0.0.0.0/0', { action: 'drop' }), rule('1.2.3.4', { port_type: 'tcp', port_range: '443' })],
      });
      return planAccessChanges(planChanges(s, live, { ...OPTIONS, tokenUser: null }), live, s).everyone?.reachable;
    };
    expect(reachable(false)).toEqual([{ family: 4, addresses: ['1.2.3.4/32'], protocol: 'all' }]);
    expect(reachable(true)).toEqual([{ family: 4, addresses: ['1.2.3.4/32'], protocol: 'tcp', ports: '443' }]);
  });
});

describe('live rules with ports when port_rules is false', () => {
  it('are left out, as 0.7.36 leaves them out of its ruleset (§5.1.2)', () => {
    const alice = liveUser('alice@example.com');
    const live = liveState({
      users: [alice],
      devices: [liveDevice(alice, 'laptop')],
      rules: [
        liveRule({ destination: '0.0.0.0/0', action: 'drop' }),
        liveRule({ destination: '1.2.3.4', action: 'accept', port_type: 'tcp', port_range: '443 - 443' }),
      ],
    });
    const model = accessModelOfLive(live, { portRules: false, serverAddresses: [] });
    const [result] = runAccessTests(model, [
      { name: 'https', from: 'alice@example.com', to: '1.2.3.4:443/tcp', expect: 'drop' },
    ]);
    expect(result!.pass).toBe(true);
  });
});
