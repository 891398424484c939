/**
 * Access changes against brute force: on random rule changes (seeded), every sampled packet
 * whose verdict the evaluator changes lies in exactly the blocks reported for its user, with the
 * right direction, and no packet whose verdict stays does.
 */
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import {
  boundAccessChanges,
  CompiledRules,
  computeAccessChanges,
  decideByRules,
  packetOf,
  rangeToCidrs,
  type AccessBlock,
  type AccessChanges,
  type AccessRule,
  type Protocol,
} from '../../../src/access/index.js';
import { accessChangeLines } from '../../../src/views/access.js';
import { int, pick, prng } from '../../helpers/access-random.js';
import { counted, rounds, share } from '../../helpers/rounds.js';

const ROUNDS = rounds(1000);

const USERS = ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test'];
const V4 = ['10.0.0.0', '10.0.0.8', '10.0.0.12', '10.0.1.0', '10.0.0.255'];
const V6 = ['2001:db8::', '2001:db8::10', '2001:db8::1:0'];

function randomRule(random: () => number): AccessRule {
  const v6 = random() < 0.25;
  const base = pick(random, v6 ? V6 : V4);
  const prefix = v6 ? pick(random, [0, 100, 124, 126, 128]) : pick(random, [0, 8, 16, 24, 28, 30, 31, 32]);
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

function inBlocks(blocks: AccessBlock[], address: string, protocol: Protocol, port: number | undefined): boolean {
  const addr = ipaddr.parse(address);
  return blocks.some((b) => {
    if (
      !b.addresses.some((c) => {
        const net = ipaddr.parseCIDR(c);
        return net[0].kind() === addr.kind() && addr.match(net);
      })
    )
      return false;
    if (b.protocol === 'all') return true;
    if (b.protocol === 'other') return protocol === 'icmp' || protocol === 'other';
    if (b.protocol !== protocol) return false;
    return b.ports!.split(', ').some((r) => {
      const [lo, hi = lo] = r.split('-').map(Number);
      return port! >= lo! && port! <= hi!;
    });
  });
}

/** A listed user's own blocks apply within its own rules' blocks; everyone's apply elsewhere. */
function blocksFor(
  changes: AccessChanges,
  user: string,
  rules: AccessRule[],
  address: string,
  portRules: boolean,
): { reachable: AccessBlock[]; blocked: AccessBlock[] } {
  const addr = ipaddr.parse(address);
  const withinOwn = rules.some(
    (r) =>
      r.owner === user &&
      (portRules || r.port_type === null) &&
      (() => {
        const net = ipaddr.parseCIDR(r.destination);
        return net[0].kind() === addr.kind() && addr.match(net);
      })(),
  );
  const listed = changes.users.find((u) => u.user === user);
  const excepted = changes.everyone?.except.includes(user) ?? false;
  if (withinOwn && (listed || excepted)) return listed ?? { reachable: [], blocked: [] };
  if (listed && !changes.everyone) return listed;
  return changes.everyone ?? { reachable: [], blocked: [] };
}

function samplePacket(
  random: () => number,
  rules: AccessRule[],
): { address: string; protocol: Protocol; port?: number } {
  // Near the edges of the rules' blocks and port ranges, where mistakes would be.
  const rule = rules.length > 0 && random() < 0.8 ? pick(random, rules) : undefined;
  let address: string;
  if (rule) {
    const [net, prefix] = ipaddr.parseCIDR(rule.destination);
    const bytes = net.toByteArray();
    const bits = bytes.length * 8;
    let value = bytes.reduce((v, b) => (v << 8n) | BigInt(b), 0n);
    const size = 1n << BigInt(bits - prefix);
    value = value - (value % size) + pick(random, [0n, size - 1n, size, -1n, size / 2n]);
    const max = (1n << BigInt(bits)) - 1n;
    if (value < 0n) value = 0n;
    if (value > max) value = max;
    const out: number[] = [];
    for (let i = 0; i < bytes.length; i++) out.unshift(Number((value >> BigInt(8 * i)) & 0xffn));
    address = ipaddr.fromByteArray(out).toString();
  } else {
    address = random() < 0.25 ? pick(random, V6) : `10.0.${int(random, 0, 2)}.${int(random, 0, 255)}`;
  }
  const protocol = pick(random, ['tcp', 'udp', 'icmp', 'other'] as Protocol[]);
  if (protocol === 'icmp' || protocol === 'other') return { address, protocol };
  const edges = rules
    .filter((r) => r.port_range)
    .flatMap((r) => r.port_range!.split(' - ').map(Number))
    .flatMap((p) => [p - 1, p, p + 1]);
  return {
    address,
    protocol,
    port: edges.length > 0 && random() < 0.7 ? Math.max(0, pick(random, edges)) : int(random, 0, 45),
  };
}

describe('access changes', () => {
  it(`match brute-force evaluation on ${counted(ROUNDS)} random rule changes (seeded)`, () => {
    const random = prng(777);
    let changedPackets = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const before = Array.from({ length: int(random, 0, 6) }, () => randomRule(random));
      const after = before.filter(() => random() < 0.7);
      for (let i = int(random, 0, 3); i > 0; i--) after.push(randomRule(random));
      const portRules = random() < 0.9;
      const changes = computeAccessChanges({ before, after, users: USERS, portRules });
      const settings = { portRules, serverAddresses: [] };
      const b = new CompiledRules({ users: new Map(), rules: before, settings });
      const a = new CompiledRules({ users: new Map(), rules: after, settings });
      for (let s = 0; s < 40; s++) {
        const user = pick(random, USERS);
        const { address, protocol, port } = samplePacket(random, [...before, ...after]);
        const packet = packetOf(address, protocol, port)!;
        const was = decideByRules(b, user, packet).verdict;
        const now = decideByRules(a, user, packet).verdict;
        const blocks = blocksFor(changes, user, [...before, ...after], address, portRules);
        const context = JSON.stringify({ round, before, after, user, address, protocol, port, portRules, changes });
        expect(inBlocks(blocks.reachable, address, protocol, port), context).toBe(was === 'drop' && now === 'accept');
        expect(inBlocks(blocks.blocked, address, protocol, port), context).toBe(was === 'accept' && now === 'drop');
        if (was !== now) changedPackets++;
      }
    }
    expect(changedPackets).toBeGreaterThan(2000 * share(1000));
  }, 120_000); // CPU-bound and deterministic: its time grows with the machine's load, never its verdict

  it('shows a global change once for all users except those with own rules there', () => {
    const changes = computeAccessChanges({
      before: [{ owner: 'b@x.test', action: 'accept', destination: '10.2.0.0/16', port_type: null, port_range: null }],
      after: [
        { owner: 'b@x.test', action: 'accept', destination: '10.2.0.0/16', port_type: null, port_range: null },
        { owner: null, action: 'drop', destination: '10.0.0.0/8', port_type: null, port_range: null },
        { owner: 'a@x.test', action: 'accept', destination: '10.2.0.0/16', port_type: 'tcp', port_range: '22' },
      ],
      users: USERS,
      portRules: true,
    });
    expect(accessChangeLines(changes)).toEqual([
      'all users (except where own rules of a@x.test, b@x.test apply): now blocked 10.0.0.0/8 (all protocols)',
      'a@x.test (within its own rules): now blocked 10.2.0.0/16 tcp 0-21, 23-65535',
      'a@x.test (within its own rules): now blocked 10.2.0.0/16 udp 0-65535',
      'a@x.test (within its own rules): now blocked 10.2.0.0/16 other protocols (icmp, …)',
    ]);
  });

  it('bounds its size and counts what it leaves out', () => {
    const users = Array.from({ length: 30 }, (_, i) => `u${i}@x.test`);
    const after: AccessRule[] = users.flatMap((owner, i) => [
      { owner, action: 'drop', destination: `10.0.${i * 2}.1`, port_type: null, port_range: null },
      ...Array.from({ length: 5 }, (_, j) => ({
        owner,
        action: 'drop' as const,
        destination: `10.1.${j * 2}.1`,
        port_type: 'tcp' as const,
        port_range: `${j + 1}`,
      })),
      ...Array.from({ length: 5 }, (_, j) => ({
        owner,
        action: 'drop' as const,
        destination: `10.2.${j * 2}.1`,
        port_type: 'udp' as const,
        port_range: `${j + 1}`,
      })),
    ]);
    const changes = computeAccessChanges({ before: [], after, users, portRules: true });
    expect(changes.users).toHaveLength(30);
    expect(changes.users[0]!.blocked).toHaveLength(11);
    const bounded = boundAccessChanges(changes, { users: 10, blocks: 4 });
    expect(bounded.users).toHaveLength(10);
    expect(bounded.users[0]!.blocked).toHaveLength(4);
    expect(bounded.omitted).toEqual({ users: 20, blocks: 70 });
    expect(accessChangeLines(bounded).at(-1)).toBe(
      '… and 20 more users (whose own rules may change their access differently), 70 more blocks not shown',
    );
  });

  it('writes ranges as the fewest CIDR blocks', () => {
    expect(rangeToCidrs(4, 0x0a000000n, 0x0a0000ffn)).toEqual(['10.0.0.0/24']);
    expect(rangeToCidrs(4, 0x0a000001n, 0x0a000006n)).toEqual([
      '10.0.0.1/32',
      '10.0.0.2/31',
      '10.0.0.4/31',
      '10.0.0.6/32',
    ]);
    expect(rangeToCidrs(6, 0n, (1n << 128n) - 1n)).toEqual(['::/0']);
  });
});
