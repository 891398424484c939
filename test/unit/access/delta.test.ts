/**
 * The access delta against brute force: on random rule changes (seeded), every sampled packet
 * whose verdict changes for a user's device lies in that device's gained (drop → accept) or lost
 * (accept → drop) regions, never in the other, and no packet whose verdict stays does; the rule
 * named on each side is the one the evaluator says decides the packet there. A new device gains
 * exactly what it reaches.
 */
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { computeAccessDelta, type DeltaRegion, type DeltaRule } from '../../../src/access/delta.js';
import {
  CompiledRules,
  decideByRules,
  packetOf,
  type AccessModel,
  type AccessRule,
  type Match,
  type Protocol,
} from '../../../src/access/index.js';
import { int, pick, prng } from '../../helpers/access-random.js';

const USERS = ['a@x.test', 'b@x.test', 'c@x.test'];
const V4 = ['10.0.0.0', '10.0.0.8', '10.0.1.0', '10.0.0.255'];
const V6 = ['2001:db8::', '2001:db8::10'];

function randomRule(random: () => number): AccessRule {
  const v6 = random() < 0.2;
  const base = pick(random, v6 ? V6 : V4);
  const prefix = v6 ? pick(random, [0, 100, 124, 128]) : pick(random, [0, 8, 16, 24, 28, 31, 32]);
  const ported = random() < 0.5;
  const lo = int(random, 1, 30);
  return {
    owner: random() < 0.5 ? null : pick(random, USERS),
    action: random() < 0.5 ? 'accept' : 'drop',
    destination: `${base}/${prefix}`,
    port_type: ported ? pick(random, ['tcp', 'udp'] as const) : null,
    port_range: ported ? `${lo} - ${int(random, lo, 40)}` : null,
  };
}

function model(rules: AccessRule[], devices: Record<string, string[]>): AccessModel {
  const users = new Map(
    USERS.map((key) => [key, { key, email: key, devices: (devices[key] ?? []).map((name) => ({ name })) }]),
  );
  return { users, rules, settings: { portRules: true, serverAddresses: [] } };
}

function inRegion(r: DeltaRegion, address: string, protocol: Protocol, port: number | undefined): boolean {
  const addr = ipaddr.parse(address);
  if (!r.addresses.some((c) => ipaddr.parseCIDR(c)[0].kind() === addr.kind() && addr.match(ipaddr.parseCIDR(c))))
    return false;
  if (r.protocol === 'all') return true;
  if (r.protocol === 'other') return protocol === 'icmp' || protocol === 'other';
  if (r.protocol !== protocol) return false;
  return r.ports!.split(', ').some((part) => {
    const [lo, hi = lo] = part.split('-').map(Number);
    return port! >= lo! && port! <= hi!;
  });
}

const same = (named: DeltaRule | null, decided: Match | undefined): boolean =>
  decided === undefined
    ? named === null
    : named !== null &&
      named.destination === decided.rule.destination &&
      named.action === decided.rule.action &&
      named.user === decided.rule.owner &&
      named.port_range === decided.rule.port_range;

function sample(random: () => number): { address: string; protocol: Protocol; port?: number } {
  const address =
    random() < 0.2
      ? pick(random, [...V6, '2001:db8::f', '2001:db9::1'])
      : `10.0.${int(random, 0, 2)}.${pick(random, [0, 7, 8, 9, 15, 16, 255, int(random, 0, 255)])}`;
  const protocol = pick(random, ['tcp', 'udp', 'icmp', 'other'] as Protocol[]);
  if (protocol === 'icmp' || protocol === 'other') return { address, protocol };
  return { address, protocol, port: int(random, 0, 45) };
}

describe('access delta', () => {
  it('matches brute-force evaluation on 150 random changes, with the deciding rule on each side (seeded)', () => {
    const random = prng(4242);
    let changed = 0;
    for (let round = 0; round < 150; round++) {
      const before = Array.from({ length: int(random, 0, 6) }, () => randomRule(random));
      const after = before.filter(() => random() < 0.7);
      for (let i = int(random, 0, 3); i > 0; i--) after.push(randomRule(random));
      // c@x.test gets a device only after: a new tunnel.
      const delta = computeAccessDelta({
        before: model(before, { 'a@x.test': ['laptop'], 'b@x.test': ['desk', 'phone'] }),
        after: model(after, { 'a@x.test': ['laptop'], 'b@x.test': ['desk', 'phone'], 'c@x.test': ['new'] }),
        compared: { before: 'b', after: 'a' },
      });
      const settings = { portRules: true, serverAddresses: [] };
      const b = new CompiledRules({ users: new Map(), rules: before, settings });
      const a = new CompiledRules({ users: new Map(), rules: after, settings });
      for (let s = 0; s < 30; s++) {
        const [user, device] = pick(random, [
          ['a@x.test', 'laptop'],
          ['b@x.test', 'phone'],
          ['c@x.test', 'new'],
        ] as const);
        const { address, protocol, port } = sample(random);
        const packet = packetOf(address, protocol, port)!;
        const was = user === 'c@x.test' ? 'no tunnel' : decideByRules(b, user, packet).verdict;
        const decidedNow = decideByRules(a, user, packet);
        const entry = delta.entries.find((e) => e.user === user && e.devices.includes(device));
        const gained = entry?.gained.filter((r) => inRegion(r, address, protocol, port)) ?? [];
        const lost = entry?.lost.filter((r) => inRegion(r, address, protocol, port)) ?? [];
        const context = JSON.stringify({ round, before, after, user, address, protocol, port, entry });
        const gains = was !== 'accept' && decidedNow.verdict === 'accept';
        const loses = was === 'accept' && decidedNow.verdict === 'drop';
        expect(gained.length, context).toBe(gains ? 1 : 0);
        expect(lost.length, context).toBe(loses ? 1 : 0);
        for (const region of [...gained, ...lost]) {
          expect(same(region.after, decidedNow.decidedBy), context).toBe(true);
          if (user !== 'c@x.test')
            expect(same(region.before, decideByRules(b, user, packet).decidedBy), context).toBe(true);
          else expect(region.before, context).toBeNull();
        }
        if (gains || loses) changed++;
      }
    }
    expect(changed).toBeGreaterThan(350);
  }, 120_000); // CPU-bound and deterministic: its time grows with the machine's load, never its verdict

  it('counts the blast radius: users, devices, address × port pairs and admins', () => {
    const accept = (owner: string | null, destination: string, ports: string | null): AccessRule => ({
      owner,
      action: 'accept',
      destination,
      port_type: ports ? 'tcp' : null,
      port_range: ports,
    });
    const drop: AccessRule = {
      owner: null,
      action: 'drop',
      destination: '10.0.0.0/8',
      port_type: null,
      port_range: null,
    };
    const devices = { 'a@x.test': ['laptop'], 'b@x.test': ['desk', 'phone'] };
    const delta = computeAccessDelta({
      before: model([drop, accept('a@x.test', '10.1.0.0/24', null)], devices),
      after: model([drop, accept('b@x.test', '10.2.0.0/24', '22-23')], devices),
      admins: { before: new Set(['a@x.test']), after: new Set(['b@x.test']) },
      compared: { before: 'b', after: 'a' },
    });
    expect(delta.blast_radius).toEqual({
      users_affected: 2,
      devices_affected: 3,
      gained: { users: 1, devices: 2, address_ports: String(256 * 2 * 2) },
      lost: { users: 1, devices: 1, address_ports: String(256 * (2 * 65536 + 1)) },
      admins_gained: ['b@x.test'],
      admins_lost: ['a@x.test'],
    });
    expect(delta.entries.map((e) => `${e.user} ${e.devices.join('+')}`)).toEqual([
      'a@x.test laptop',
      'b@x.test desk+phone',
    ]);
  });
});
