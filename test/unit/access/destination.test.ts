/**
 * One meaning of a destination: a bare address or a block in `to:` is every protocol and port to
 * it, as `who-can-reach` reads it. `test`, `explain` and `who-can-reach` give the same verdict
 * (accept, drop or partial) on the same state, checked on seeded random rule sets against packets
 * decided one by one by the single-packet evaluator; `ADDRESS/other` keeps its one-packet meaning;
 * `from: "*"` is the devices of every user.
 */
import { describe, expect, it } from 'vitest';
import {
  CompiledRules,
  evaluateDevice,
  evaluateFrom,
  exceptForm,
  NO_SOURCE,
  noSourceWarnings,
  packetOf,
  parseFrom,
  parseReachTarget,
  parseTo,
  reachOf,
  runAccessTests,
  whoCanReach,
  type AccessModel,
  type AccessRule,
  type AccessUser,
  type Protocol,
} from '../../../src/access/index.js';
import type { DesiredTest } from '../../../src/model/state.js';
import { explainText, testLine, testResultsText } from '../../../src/views/access.js';
import { reachOutput, whoCanReachOutput } from '../../../src/views/reach.js';
import { formatAddress } from '../../../src/model/net.js';
import { int, pick, prng } from '../../helpers/access-random.js';

const rule = (
  owner: string | null,
  action: 'accept' | 'drop',
  destination: string,
  ports?: ['tcp' | 'udp', string],
): AccessRule => ({
  owner,
  action,
  destination,
  port_type: ports?.[0] ?? null,
  port_range: ports?.[1] ?? null,
  source: { file: 'p.yaml', line: 10, column: 5 },
});

function model(rules: AccessRule[], users: AccessUser[]): AccessModel {
  return {
    users: new Map(users.map((u) => [u.key, u])),
    rules,
    settings: { portRules: true, serverAddresses: ['10.3.2.1', 'fd00::3:2:1'] },
  };
}

const withDevice = (name: string, i: number): AccessUser => ({
  key: `${name}@x.example`,
  email: `${name}@x.example`,
  devices: [{ name: 'pc', ipv4: `10.3.2.${i}`, ipv6: `fd00::3:2:${i}` }],
});

/** The review's reproduction (newcomer 2026-11b §3.3): a global drop and a tcp 1 - 65534 accept. */
const REVIEW = model(
  [rule(null, 'accept', '10.1.0.0/16', ['tcp', '1 - 65534']), rule(null, 'drop', '0.0.0.0/0')],
  [withDevice('u1', 2), withDevice('u2', 3)],
);

const test = (name: string, from: string, to: string, expect: DesiredTest['expect']): DesiredTest => ({
  name,
  from,
  to,
  expect,
});

describe('a bare address in to: is every protocol and port', () => {
  it('"cannot reach at all" no longer passes while the host is reachable on tcp: partial', () => {
    const [atAll, partial, other] = runAccessTests(REVIEW, [
      test('u2 cannot reach the db host at all', 'u2@x.example', '10.1.2.3', 'drop'),
      test('u2 reaches part of the db host', 'u2@x.example', '10.1.2.3', 'partial'),
      test('u2 sends no GRE to the db host', 'u2@x.example', '10.1.2.3/other', 'drop'),
    ]);
    expect(atAll!.pass).toBe(false);
    expect(atAll!.shown!.decision.verdict).toBe('partial');
    const line = testLine(atAll!);
    expect(line).toContain(
      'expected drop, got partial: accepted 10.1.2.3/32 tcp 1-65534 by accept 10.1.0.0/16 tcp 1 - 65534',
    );
    expect(line).toContain('dropped 10.1.2.3/32 tcp 0, 65535; 10.1.2.3/32 udp 0-65535; 10.1.2.3/32 other protocols');
    expect(line).toContain('by drop 0.0.0.0/0 (global) at p.yaml:10, global portless-drop');
    expect(partial!.pass).toBe(true);
    // ADDRESS/other keeps the one-packet meaning: a packet without ports meets only portless rules.
    expect(other!.pass).toBe(true);
    expect(other!.shown!.decision.decidedBy?.rule.destination).toBe('0.0.0.0/0');
  });

  it('expect: accept passes only if every packet is accepted, drop only if none is', () => {
    const m = model(
      [
        rule(null, 'drop', '0.0.0.0/0'),
        rule('u1@x.example', 'accept', '10.9.0.0/16'),
        rule(null, 'accept', '10.8.0.0/16', ['tcp', '443']),
      ],
      [withDevice('u1', 2), withDevice('u2', 3)],
    );
    const results = runAccessTests(m, [
      test('u1 reaches the block', 'u1@x.example', '10.9.0.0/16', 'accept'),
      test('u2 reaches nothing of it', 'u2@x.example', '10.9.0.0/16', 'drop'),
      test('everyone reaches the web', '*', '10.8.1.1', 'accept'),
      test('everyone reaches part of the web', '*', '10.8.0.0/16', 'partial'),
      test('11/8 is reached by default', '*', '11.0.0.0/8', 'accept'),
      test('the server is never filtered', '*', '10.3.2.1', 'accept'),
      test('u2: a block holding the server', 'u2@x.example', '10.3.2.0/24', 'partial'),
    ]);
    expect(results.map((r) => r.pass)).toEqual([true, true, false, true, false, true, true]);
    expect(results[2]!.shown!.decision.verdict).toBe('partial');
    expect(results[4]!.shown!.decision.verdict).toBe('drop');
    expect(results[5]!.shown!.decision.reason).toContain('server address');
    // One rule deciding the whole destination is named as for a packet.
    expect(testLine(results[0]!)).toContain('got accept by accept 10.9.0.0/16 (u1@x.example) at p.yaml:10');
  });

  it('explain prints what is accepted and by which rule, as reach does', () => {
    const to = parseTo('10.1.2.3');
    const from = parseFrom('u2@x.example');
    if (!to.ok || !from.ok) throw new Error('notation');
    const sources = evaluateFrom(REVIEW, new CompiledRules(REVIEW), from.value, to.value, true);
    if (!sources.ok) throw new Error(sources.message);
    expect(explainText('u2@x.example', '10.1.2.3', sources.value)).toBe(
      [
        'u2@x.example -> 10.1.2.3, against the declared rules (files only)',
        'u2@x.example/pc: PARTIAL',
        '  accepted: 10.1.2.3/32 tcp 1-65534 by accept 10.1.0.0/16 tcp 1 - 65534 (global) at p.yaml:10, global port-accept',
        '  dropped: 10.1.2.3/32 tcp 0, 65535; 10.1.2.3/32 udp 0-65535; 10.1.2.3/32 other protocols (icmp, …) by drop 0.0.0.0/0 (global) at p.yaml:10, global portless-drop',
        '',
      ].join('\n'),
    );
  });
});

describe('from: "*"', () => {
  const m = model(
    [rule(null, 'accept', '10.1.2.3', ['tcp', '443']), rule(null, 'drop', '0.0.0.0/0')],
    [withDevice('u1', 2), { key: 'newhire@x.example', email: 'newhire@x.example', devices: [] }],
  );

  it('is every device of every user: a user without a device is a note, never a failure', () => {
    const [result] = runAccessTests(m, [test('everyone reaches the web', '*', '10.1.2.3:443/tcp', 'accept')]);
    expect(result!.pass).toBe(true);
    expect(result!.decisions.map((d) => `${d.user}/${d.device}`)).toEqual(['u1@x.example/pc']);
    expect(result!.withoutDevice).toEqual(['newhire@x.example']);
    expect(testResultsText([result!], { github: false, state: 'files' })).toContain(
      '  note: 1 user without a device is not a source of "*" (no tunnel to test from): newhire@x.example\n',
    );
  });

  it('with no device at all fails, and validate warns; "*/*" still means every user', () => {
    const empty = model(m.rules, [{ key: 'newhire@x.example', email: 'newhire@x.example', devices: [] }]);
    const results = runAccessTests(empty, [
      test('everyone reaches the web', '*', '10.1.2.3:443/tcp', 'accept'),
      test('nobody reaches the db', '*', '10.1.2.4', 'drop'),
      test('the policy lets everyone reach the web', '*/*', '10.1.2.3:443/tcp', 'accept'),
    ]);
    expect(results.map((r) => r.pass)).toEqual([false, false, true]);
    expect(results[1]!.error).toBe(NO_SOURCE);
    expect(NO_SOURCE).toBe('no device to test from: write `*/*` to test the policy');
    expect(testLine(results[1]!)).toBe(
      'FAIL nobody reaches the db: * -> 10.1.2.4, expected drop: no device to test from: write `*/*` to test the policy',
    );
    expect(noSourceWarnings(results).map((d) => d.path)).toEqual(['tests[0].from', 'tests[1].from']);
  });
});

describe('readable answers', () => {
  it('reach writes a block with carve-outs as "except" when that is shorter', () => {
    expect(exceptForm(4, ['10.0.0.0/12', '10.16.0.0/14', '10.21.0.0/16', '10.22.0.0/15', '10.24.0.0/13'])).toEqual({
      block: '10.0.0.0/11',
      holes: ['10.20.0.0/16'],
    });
    // Shorter as a list: left as it is.
    expect(exceptForm(4, ['10.0.0.0/24', '10.0.1.0/24'])).toBeUndefined();
    const m = model(
      [rule(null, 'drop', '0.0.0.0/0'), rule('carol@x.example', 'accept', '10.20.0.0/16')],
      [withDevice('carol', 4)],
    );
    const reach = reachOf(m, { user: 'carol@x.example' }, 'declared');
    if (!reach.ok) throw new Error(reach.message);
    const text = reachOutput(reach.value, 'text', 'files');
    expect(text).toContain(
      '    0.0.0.0/0 except 10.3.2.1/32, 10.20.0.0/16 (all protocols) by drop 0.0.0.0/0 (global) at p.yaml:10, global portless-drop\n',
    );
    // The pieces are still there, exactly, for json and for the tests that read them back.
    expect(reach.value.families[0]!.blocked[0]!.blocks[0]!.addresses.length).toBeGreaterThan(20);
  });

  it('who-can-reach BLOCK says, per user, what part is accepted and what a drop stops', () => {
    const m = model(
      [
        rule(null, 'drop', '0.0.0.0/0'),
        rule(null, 'accept', '10.1.5.0/24', ['tcp', '443']),
        rule('u1@x.example', 'accept', '10.1.5.0/25'),
      ],
      [withDevice('u1', 2), withDevice('u2', 3), withDevice('u3', 4)],
    );
    const target = parseReachTarget('10.1.5.0/24');
    if (!target.ok) throw new Error(target.message);
    const who = whoCanReach(m, target.value, { all: true });
    const entries = who.accepted.entries;
    expect(entries.map((e) => [e.users, e.verdict])).toEqual([
      [['u1@x.example'], 'partial'],
      [['u2@x.example', 'u3@x.example'], 'partial'],
    ]);
    const text = whoCanReachOutput(who, 'text', 'files', true);
    expect(text).toContain(
      [
        '  2 users without own rules there (u2@x.example, u3@x.example), 2 devices, part of it:',
        '    accepted: 10.1.5.0/24 tcp 443 by accept 10.1.5.0/24 tcp 443 (global) at p.yaml:10, global port-accept',
        '    stopped by a drop: 10.1.5.0/24 tcp 0-442, 444-65535; 10.1.5.0/24 udp 0-65535; 10.1.5.0/24 other protocols (icmp, …) by drop 0.0.0.0/0 (global) at p.yaml:10, global portless-drop',
      ].join('\n'),
    );
    expect(text).toContain('  u1@x.example (1 device), part of it:\n    within its own rules (10.1.5.0/25):\n');
    const json = JSON.parse(whoCanReachOutput(who, 'json', 'files', true)) as {
      accepted: { entries: { verdict: string; stopped_by?: unknown[] }[] };
    };
    expect(json.accepted.entries.map((e) => [e.verdict, e.stopped_by?.length])).toEqual([
      ['partial', undefined],
      ['partial', 1],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// The property: for every destination, test, explain and who-can-reach agree, and agree with
// packets decided one by one.

const V4 = ['10.0.0.0', '10.0.0.8', '10.0.0.12', '10.0.1.0', '10.0.0.255', '10.3.2.0'];
const V6 = ['2001:db8::', '2001:db8::10', 'fd00::3:2:0'];
const OWNERS = [null, null, 'a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test'];

function randomRule(random: () => number): AccessRule {
  const v6 = random() < 0.25;
  const base = pick(random, v6 ? V6 : V4);
  const prefix = v6 ? pick(random, [0, 100, 124, 126, 128]) : pick(random, [0, 8, 16, 24, 28, 30, 31, 32]);
  const ported = random() < 0.5;
  const lo = int(random, 1, 30);
  return {
    owner: pick(random, OWNERS),
    action: random() < 0.5 ? 'accept' : 'drop',
    destination: `${base}/${prefix}`,
    port_type: ported ? pick(random, ['tcp', 'udp'] as const) : null,
    port_range: ported ? (random() < 0.15 ? '1 - 65534' : `${lo} - ${int(random, lo, 40)}`) : null,
  };
}

function randomUsers(): AccessUser[] {
  return [
    {
      key: 'a@x.test',
      email: 'a@x.test',
      devices: [
        { name: 'laptop', ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' },
        { name: 'phone', ipv4: '10.3.2.3', ipv6: null },
      ],
    },
    { key: 'b@x.test', email: 'b@x.test', devices: [{ name: 'desk' }] },
    { key: 'c@x.test', email: 'c@x.test', devices: [{ name: 'old', ipv4: null, ipv6: 'fd00::3:2:4' }] },
    { key: 'd@x.test', email: 'd@x.test', devices: [] },
    { key: 'e@x.test', email: 'e@x.test', noTunnel: 'user e@x.test is disabled', devices: [{ name: 'x' }] },
    { key: 'f@x.test', email: 'f@x.test', devices: [{ name: 'pad' }] },
  ];
}

/** The verdict over every packet to [a0, a1], one packet per elementary cell, by the single-packet evaluator. */
function bruteForce(m: AccessModel, user: AccessUser, family: 4 | 6, a0: bigint, a1: bigint): string {
  const rules = new CompiledRules(m);
  const addresses = new Set<bigint>([a0]);
  const ports = new Set<number>([0]);
  for (const list of rules.byOwner.values())
    for (const r of list) {
      if (r.family !== family) continue;
      if (r.start > a0 && r.start <= a1) addresses.add(r.start);
      if (r.end >= a0 && r.end < a1) addresses.add(r.end + 1n);
      if (r.portType !== null) {
        ports.add(r.low);
        if (r.high < 65535) ports.add(r.high + 1);
      }
    }
  for (const key of rules.serverAddresses) {
    const [f, v] = key.split(':') as [string, string];
    if (Number(f) !== family) continue;
    for (const x of [BigInt(v), BigInt(v) + 1n]) if (x > a0 && x <= a1) addresses.add(x);
  }
  let accepted = false;
  let dropped = false;
  for (const value of addresses) {
    const address = formatAddress(family, value);
    const packets: [Protocol, number | undefined][] = [
      ['other', undefined],
      ['icmp', undefined],
    ];
    for (const port of ports) packets.push(['tcp', port], ['udp', port]);
    for (const [protocol, port] of packets) {
      const verdict = evaluateDevice(rules, user, { name: '*' }, packetOf(address, protocol, port)!).verdict;
      if (verdict === 'accept') accepted = true;
      else dropped = true;
    }
  }
  return accepted && dropped ? 'partial' : dropped ? 'drop' : 'accept';
}

function randomDestination(random: () => number): string {
  if (random() < 0.25) {
    const base = pick(random, V6);
    return random() < 0.4 ? base : `${base}/${pick(random, [96, 120, 124, 126, 127, 128])}`;
  }
  const base = pick(random, [...V4, '10.0.0.9', '10.3.2.1', '10.0.0.13']);
  return random() < 0.4 ? base : `${base}/${pick(random, [0, 8, 20, 24, 28, 29, 30, 31, 32])}`;
}

describe('test, explain and who-can-reach', () => {
  it('agree for every destination on 150 random rule sets (seeded), and with packets decided one by one', () => {
    const random = prng(20261129);
    let partials = 0;
    for (let round = 0; round < 150; round++) {
      const m: AccessModel = {
        users: new Map(randomUsers().map((u) => [u.key, u])),
        rules: Array.from({ length: int(random, 0, 8) }, () => randomRule(random)),
        settings: {
          portRules: random() < 0.85,
          serverAddresses: random() < 0.3 ? ['10.3.2.1', 'fd00::3:2:1', '10.0.0.9'] : ['10.3.2.1', 'fd00::3:2:1'],
        },
      };
      const rules = new CompiledRules(m);
      for (let d = 0; d < 4; d++) {
        const to = randomDestination(random);
        const parsed = parseTo(to);
        const target = parseReachTarget(to);
        if (!parsed.ok || parsed.value.kind !== 'every' || !target.ok) throw new Error(`${to} did not parse`);
        const { family, a0, a1 } = parsed.value;
        const context = `round ${round}, to ${to}, rules ${JSON.stringify(m.rules)}`;
        // test: each source's verdict, through expect: partial (it passes exactly when partial).
        const [asTest] = runAccessTests(m, [test('t', '*', to, 'partial')]);
        const testVerdicts = new Map(asTest!.decisions.map((s) => [`${s.user}/${s.device}`, s.decision.verdict]));
        // explain: the same sources, with collect.
        const explained = evaluateFrom(m, rules, { kind: 'everyone' }, parsed.value, true);
        if (!explained.ok) throw new Error(explained.message);
        expect(explained.value.withoutDevice, context).toEqual(['d@x.test']);
        for (const s of explained.value.decisions)
          expect(s.decision.verdict, context).toBe(testVerdicts.get(`${s.user}/${s.device}`));
        // who-can-reach: each user's verdict, or their devices without a tunnel.
        const who = whoCanReach(m, target.value, { all: true });
        const byUser = new Map<string, string>();
        for (const category of [who.accepted, who.byDefault, who.server, who.stopped])
          for (const entry of category.entries) for (const user of entry.users) byUser.set(user, entry.verdict);
        const noTunnel = new Set(who.noTunnel.entries.map((s) => `${s.user}/${s.device}`));
        for (const user of m.users.values()) {
          for (const device of user.devices) {
            const verdict = testVerdicts.get(`${user.email}/${device.name}`);
            if (verdict === 'no tunnel') {
              expect(user.noTunnel !== undefined || noTunnel.has(`${user.email}/${device.name}`), context).toBe(true);
              continue;
            }
            expect(verdict, `${context}, ${user.email}/${device.name}`).toBe(byUser.get(user.email));
            expect(verdict, `${context}, ${user.email} brute force`).toBe(bruteForce(m, user, family, a0, a1));
            if (verdict === 'partial') partials++;
          }
        }
      }
    }
    // The property is not vacuous: partial verdicts occur.
    expect(partials).toBeGreaterThan(50);
  });
});
