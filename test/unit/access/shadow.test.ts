/** Shadowed rules: rules that never decide anything, named with the rules that shadow them. */
import { describe, expect, it } from 'vitest';
import { findShadowedRules, shadowedRuleWarnings } from '../../../src/access/index.js';
import { defaultSettings, type DesiredRule, type DesiredState } from '../../../src/model/state.js';

function rule(action: 'accept' | 'drop', destination: string, ports?: string, line = 1): DesiredRule {
  const [port_type, port_range] = ports ? [ports.slice(0, 3) as 'tcp' | 'udp', ports.slice(4)] : [null, null];
  return {
    action,
    destination,
    port_type,
    port_range,
    source: { file: 'n.yaml', line, column: 5, path: `rules[${line}]` },
  };
}

function state(globals: DesiredRule[], own: DesiredRule[] = [], portRules = true): DesiredState {
  return {
    settings: { ...defaultSettings(), port_rules: portRules },
    users: [{ email: 'alice@example.com', devices: [], rules: own }],
    rules: globals,
    absent: { users: [], devices: [] },
    sources: ['n.yaml'],
  };
}

const shadowed = (s: DesiredState) =>
  findShadowedRules(s).map((f) => [f.rule.rule.destination, f.by.map((b) => b.rule.destination)]);

describe('shadowed rules', () => {
  it('a drop inside an accept of the same scope and port class (S2a)', () => {
    const s = state([rule('accept', '10.0.0.0/8', undefined, 3), rule('drop', '10.1.0.0/16', undefined, 4)]);
    expect(shadowed(s)).toEqual([['10.1.0.0/16', ['10.0.0.0/8']]]);
    expect(shadowedRuleWarnings(s)[0]).toMatchObject({
      file: 'n.yaml',
      line: 4,
      message:
        'rule drop 10.1.0.0/16 (global) never decides anything: accept 10.0.0.0/8 (global) at n.yaml:3 (portless-accept) matches every packet it matches and is evaluated first (portless-drop comes after)',
    });
  });

  it('not when the earlier rule covers only part of the range, ports or protocols', () => {
    expect(shadowed(state([rule('accept', '10.1.0.0/16'), rule('drop', '10.0.0.0/8')]))).toEqual([]); // S2b
    expect(shadowed(state([rule('drop', '10.0.0.5', 'tcp 22'), rule('accept', '0.0.0.0/0')]))).toEqual([]); // S3b
    expect(
      shadowed(state([rule('accept', '10.0.0.5', 'tcp 443'), rule('drop', '10.0.0.0/8', 'tcp 1 - 65534')])),
    ).toEqual([]); // S3c
    expect(
      shadowed(
        state([
          rule('accept', '10.0.0.0/8', 'tcp 1 - 65535'),
          rule('accept', '10.0.0.0/8', 'udp 1 - 65535'),
          rule('drop', '10.0.0.0/8'),
        ]),
      ),
    ).toEqual([]);
  });

  it('by several earlier rules together, and a port rule under a portless one', () => {
    const s = state([rule('accept', '10.0.0.0/9'), rule('accept', '10.128.0.0/9'), rule('drop', '10.0.0.0/8')]);
    expect(shadowed(s)).toEqual([['10.0.0.0/8', ['10.0.0.0/9', '10.128.0.0/9']]]);
    expect(
      shadowed(state([rule('accept', '10.0.0.1', 'tcp 1 - 100'), rule('drop', '10.0.0.1', 'tcp 50 - 60')])),
    ).toEqual([['10.0.0.1', ['10.0.0.1']]]);
  });

  it('within one scope only: a user rule never shadows a global rule, nor the reverse', () => {
    expect(shadowed(state([rule('drop', '10.1.0.0/16')], [rule('accept', '10.0.0.0/8')]))).toEqual([]);
    expect(shadowed(state([rule('accept', '10.0.0.0/8')], [rule('drop', '10.1.0.0/16')]))).toEqual([]);
    expect(shadowed(state([], [rule('accept', '10.0.0.0/8'), rule('drop', '10.1.0.0/16')]))).toEqual([
      ['10.1.0.0/16', ['10.0.0.0/8']],
    ]);
  });

  it('with port_rules: false, rules with ports are judged as the server stores them: without their ports', () => {
    // Stored as accept 10.0.0.1 and drop 10.0.0.1 (docs/rule-semantics.md §5.1.1): the portless accept comes first.
    expect(
      shadowed(
        state([rule('accept', '10.0.0.1', 'tcp 1 - 100'), rule('drop', '10.0.0.1', 'tcp 200 - 300')], [], false),
      ),
    ).toEqual([['10.0.0.1', ['10.0.0.1']]]);
    expect(
      shadowed(state([rule('accept', '10.0.0.1', 'tcp 1 - 100'), rule('drop', '10.0.0.1', 'tcp 200 - 300')], [], true)),
    ).toEqual([]);
  });
});

describe('shadowed rules against the evaluator', () => {
  it('a rule reported as shadowed never decides a packet (1,000 random rule sets, seeded)', async () => {
    const { CompiledRules, decideByRules, packetOf } = await import('../../../src/access/index.js');
    const { int, pick, prng } = await import('../../helpers/access-random.js');
    const random = prng(99);
    let reported = 0;
    for (let round = 0; round < 1000; round++) {
      const rules = Array.from({ length: int(random, 1, 6) }, () => {
        const ported = random() < 0.5;
        const lo = int(random, 1, 20);
        return rule(
          random() < 0.5 ? 'accept' : 'drop',
          `10.0.${pick(random, [0, 1])}.${pick(random, [0, 8, 16])}/${pick(random, [16, 24, 28, 32])}`,
          ported ? `${pick(random, ['tcp', 'udp'])} ${lo} - ${int(random, lo, 25)}` : undefined,
        );
      });
      const s = state(rules);
      const found = findShadowedRules(s).map((f) => f.rule.rule);
      reported += found.length;
      const compiled = new CompiledRules({
        users: new Map(),
        rules: rules.map((r) => ({ ...r, owner: null })),
        settings: { portRules: true, serverAddresses: [] },
      });
      for (let p = 0; p < 60; p++) {
        const protocol = pick(random, ['tcp', 'udp', 'icmp'] as const);
        const packet = packetOf(
          `10.0.${int(random, 0, 1)}.${int(random, 0, 40)}`,
          protocol,
          protocol === 'icmp' ? undefined : int(random, 0, 26),
        )!;
        const decided = decideByRules(compiled, null, packet).decidedBy?.rule;
        if (decided)
          expect(
            found.some(
              (f) =>
                f.destination === decided.destination &&
                f.action === decided.action &&
                f.port_range === decided.port_range,
            ),
          ).toBe(false);
      }
    }
    expect(reported).toBeGreaterThan(100);
  });
});
