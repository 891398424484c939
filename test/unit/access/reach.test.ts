/**
 * `reach` and `who-can-reach` against brute force: on 1,000 random rule sets (seeded), every
 * packet of every elementary cell (between consecutive rule, target and server-address edges in
 * addresses and ports, so the check is exhaustive, not sampled) is decided by the single-packet
 * evaluator (evaluateDevice) for every device, and must lie in exactly the piece that names the
 * same verdict and deciding rule. Blocks are read back through ipaddr.js, not src/.
 */
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import {
  CompiledRules,
  evaluateDevice,
  packetOf,
  parseReachTarget,
  reachOf,
  whoCanReach,
  type AccessBlock,
  type AccessModel,
  type AccessRule,
  type AccessUser,
  type Decision,
  type Protocol,
  type Reach,
  type ReachPiece,
  type WhoCanReach,
} from '../../../src/access/index.js';
import { int, pick, prng } from '../../helpers/access-random.js';
import { counted, rounds, share } from '../../helpers/rounds.js';

const ROUNDS = rounds(1000);

const V4 = ['10.0.0.0', '10.0.0.8', '10.0.0.12', '10.0.1.0', '10.0.0.255'];
const V6 = ['2001:db8::', '2001:db8::10', '2001:db8::1:0'];
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
    destination: random() < 0.1 ? base : `${base}/${prefix}`,
    port_type: ported ? pick(random, ['tcp', 'udp'] as const) : null,
    port_range: ported ? `${lo} - ${int(random, lo, 40)}` : null,
  };
}

function users(): Map<string, AccessUser> {
  const list: AccessUser[] = [
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
  ];
  return new Map(list.map((u) => [u.key, u]));
}

function randomModel(random: () => number): AccessModel {
  const rules = Array.from({ length: int(random, 0, 8) }, () => randomRule(random));
  const serverAddresses = ['10.3.2.1', 'fd00::3:2:1'];
  if (random() < 0.3) serverAddresses.push(pick(random, ['10.0.0.9', '10.0.0.255', '2001:db8::11', '10.0.1.0']));
  return { users: users(), rules, settings: { portRules: random() < 0.85, serverAddresses } };
}

const toBig = (addr: ipaddr.IPv4 | ipaddr.IPv6) => addr.toByteArray().reduce((v, b) => (v << 8n) | BigInt(b), 0n);
const BITS = { 4: 32, 6: 128 } as const;

/** [family, start, end] of a destination or CIDR, read by ipaddr.js. */
function rangeOf(text: string): [4 | 6, bigint, bigint] {
  const [net, prefix] = text.includes('/') ? ipaddr.parseCIDR(text) : [ipaddr.parse(text), -1];
  const family = net.kind() === 'ipv4' ? 4 : 6;
  const bits = BITS[family];
  const size = 1n << BigInt(bits - (prefix === -1 ? bits : prefix));
  const value = toBig(net);
  return [family, value - (value % size), value - (value % size) + size - 1n];
}

function format(family: 4 | 6, value: bigint): string {
  const bytes: number[] = [];
  for (let i = 0; i < (family === 4 ? 4 : 16); i++) bytes.unshift(Number((value >> BigInt(8 * i)) & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

interface ReadBlock {
  family: 4 | 6;
  ranges: [bigint, bigint][];
  protocol: AccessBlock['protocol'];
  ports: [number, number][];
}

function readBlocks(blocks: AccessBlock[]): ReadBlock[] {
  return blocks.map((b) => ({
    family: b.family,
    ranges: b.addresses.map((c) => {
      const [family, a0, a1] = rangeOf(c);
      expect(family).toBe(b.family);
      return [a0, a1] as [bigint, bigint];
    }),
    protocol: b.protocol,
    ports: (b.ports ?? '').split(', ').flatMap((r) => {
      if (r === '') return [];
      const [lo, hi = lo] = r.split('-').map(Number);
      return [[lo!, hi!] as [number, number]];
    }),
  }));
}

function contains(blocks: ReadBlock[], family: 4 | 6, value: bigint, protocol: Protocol, port?: number): boolean {
  return blocks.some(
    (b) =>
      b.family === family &&
      b.ranges.some(([a0, a1]) => a0 <= value && value <= a1) &&
      (b.protocol === 'all' ||
        (b.protocol === 'other' && (protocol === 'icmp' || protocol === 'other')) ||
        (b.protocol === protocol && b.ports.some(([lo, hi]) => lo <= port! && port! <= hi))),
  );
}

interface Packet {
  address: string;
  value: bigint;
  protocol: Protocol;
  port?: number;
}

/** One packet per elementary cell of [a0, a1] × classes × [p0, p1] (ports only for tcp, udp). */
function cellPackets(
  model: AccessModel,
  family: 4 | 6,
  a0: bigint,
  a1: bigint,
  protocols: Protocol[],
  p0: number,
  p1: number,
): Packet[] {
  const addresses = new Set<bigint>([a0]);
  const ports = new Set<number>([p0]);
  for (const rule of model.rules) {
    const [f, r0, r1] = rangeOf(rule.destination);
    if (f !== family) continue;
    if (r0 > a0 && r0 <= a1) addresses.add(r0);
    if (r1 >= a0 && r1 < a1) addresses.add(r1 + 1n);
    if (rule.port_range) {
      const [lo, hi] = rule.port_range.split(' - ').map(Number) as [number, number];
      if (lo > p0 && lo <= p1) ports.add(lo);
      if (hi >= p0 && hi < p1) ports.add(hi + 1);
    }
  }
  for (const s of model.settings.serverAddresses) {
    const [f, v] = rangeOf(s);
    if (f !== family) continue;
    for (const x of [v, v + 1n]) if (x > a0 && x <= a1) addresses.add(x);
  }
  const out: Packet[] = [];
  for (const value of addresses) {
    const address = format(family, value);
    for (const protocol of protocols) {
      if (protocol === 'icmp' || protocol === 'other') out.push({ address, value, protocol });
      else for (const port of ports) out.push({ address, value, protocol, port });
    }
  }
  return out;
}

/** The piece a decision should be found in: the same verdict and the same deciding rule (or default, or server). */
function samePiece(piece: ReachPiece, decision: Decision): boolean {
  if (decision.verdict === 'no tunnel') return false;
  if (decision.decidedBy) return piece.by === 'rule' && piece.match!.rule === decision.decidedBy.rule;
  if (decision.reason.startsWith('server')) return piece.by === 'server';
  return piece.by === 'default' && piece.verdict === 'accept';
}

const read = new WeakMap<ReachPiece, ReadBlock[]>();

/** Failures, collected: expect() in the inner loops would cost more than the evaluation. */
let failures: string[] = [];
function check(ok: unknown, what: () => string): void {
  if (!ok && failures.length < 5) failures.push(what());
}

/** The one piece holding the packet (expects at most one). */
function pieceOf(pieces: ReachPiece[], family: 4 | 6, p: Packet): ReachPiece | undefined {
  const found = pieces.filter((piece) => {
    let blocks = read.get(piece);
    if (!blocks) read.set(piece, (blocks = readBlocks(piece.blocks)));
    return contains(blocks, family, p.value, p.protocol, p.port);
  });
  check(found.length <= 1, () => `${p.address} ${p.protocol} ${p.port} in ${found.length} pieces`);
  return found[0];
}

function checkWho(model: AccessModel, rules: CompiledRules, result: WhoCanReach, context: string): number {
  const { region } = result.target;
  const family = region.family;
  const protocols: Protocol[] = region.classes.flatMap((c) =>
    c === 2 ? ['icmp', 'other'] : [c === 0 ? 'tcp' : 'udp'],
  );
  const packets = cellPackets(model, family, region.a0, region.a1, protocols, region.p0, region.p1);
  const categories = ['accepted', 'byDefault', 'server', 'stopped'] as const;
  let checked = 0;
  for (const user of model.users.values()) {
    const withFamily = user.devices.filter((d) => (family === 4 ? d.ipv4 : d.ipv6) !== null);
    const tunnelLess = result.noTunnel.entries.filter((s) => s.user === user.email);
    const found = categories.flatMap((name) =>
      result[name].entries.filter((e) => e.users.includes(user.email)).map((entry) => ({ name, entry })),
    );
    if (user.noTunnel || user.devices.length === 0 || withFamily.length === 0) {
      expect(found, context).toEqual([]);
      expect(tunnelLess.length, context).toBe(user.noTunnel || user.devices.length === 0 ? 1 : user.devices.length);
      continue;
    }
    expect(tunnelLess.length, context).toBe(user.devices.length - withFamily.length);
    expect(found, `${context} ${user.email}`).toHaveLength(1);
    const { name, entry } = found[0]!;
    const keep = (piece: ReachPiece) => (name === 'stopped' ? piece.verdict === 'drop' : piece.verdict === 'accept');
    const elsewhere = result.everyoneElse.filter(keep);
    const within = entry.within?.map((c) => rangeOf(c));
    let ruleAccept = false;
    let defaultAccept = false;
    let serverAccept = false;
    for (const p of packets) {
      const packet = packetOf(p.address, p.protocol, p.port)!;
      const decisions = withFamily.map((d) => evaluateDevice(rules, user, d, packet));
      const decision = decisions[0]!;
      // Every device of a user with an address in the family meets the same rules.
      for (const d of decisions)
        check(d.verdict === decision.verdict && d.decidedBy?.rule === decision.decidedBy?.rule, () => context);
      if (decision.verdict === 'accept') {
        if (decision.decidedBy) ruleAccept = true;
        else if (decision.reason.startsWith('server')) serverAccept = true;
        else defaultAccept = true;
      }
      const inside = !within || within.some(([, a0, a1]) => a0 <= p.value && p.value <= a1);
      const piece = pieceOf(inside ? entry.pieces : elsewhere, family, p);
      const shown = name === 'stopped' ? decision.verdict === 'drop' : decision.verdict === 'accept';
      if (shown) {
        expect(
          piece,
          `${context} ${user.email} ${JSON.stringify(p, (_, v) => (typeof v === 'bigint' ? `${v}` : v))}`,
        ).toBeDefined();
        expect(samePiece(piece!, decision), `${context} ${user.email} ${p.address} ${p.protocol} ${p.port}`).toBe(true);
      } else expect(piece, `${context} ${user.email} ${p.address} ${p.protocol} ${p.port}`).toBeUndefined();
      checked++;
    }
    const expected = ruleAccept ? 'accepted' : defaultAccept ? 'byDefault' : serverAccept ? 'server' : 'stopped';
    expect(name, `${context} ${user.email}`).toBe(expected);
  }
  for (const name of categories) {
    const c = result[name];
    expect(c.entries.reduce((n, e) => n + e.userCount, 0)).toBe(c.users);
    expect(c.entries.reduce((n, e) => n + e.devices, 0)).toBe(c.devices);
    expect(c.omitted).toBe(0);
  }
  return checked;
}

function checkReach(model: AccessModel, rules: CompiledRules, user: AccessUser, context: string): number {
  const reach = reachOf(model, { user: user.key }, 'declared');
  expect(reach.ok).toBe(true);
  const result = (reach as { value: Reach }).value;
  if (user.noTunnel || user.devices.length === 0) {
    expect(result.noTunnel, context).toBeDefined();
    expect(result.families).toEqual([]);
    return 0;
  }
  let checked = 0;
  for (const f of result.families) {
    const withFamily = user.devices.filter((d) => (f.family === 4 ? d.ipv4 : d.ipv6) !== null);
    expect(f.devices).toEqual(withFamily.map((d) => d.name));
    if (withFamily.length === 0) {
      expect([...f.reached, ...f.blocked]).toEqual([]);
      continue;
    }
    const end = f.family === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
    for (const p of cellPackets(model, f.family, 0n, end, ['tcp', 'udp', 'icmp', 'other'], 0, 65535)) {
      const decision = evaluateDevice(rules, user, withFamily[0], packetOf(p.address, p.protocol, p.port)!);
      const reached = pieceOf(f.reached, f.family, p);
      const blocked = pieceOf(f.blocked, f.family, p);
      const where = () =>
        `${context} ${user.email} ${p.address} ${p.protocol} ${p.port} ${JSON.stringify(decision.decidedBy?.rule)}`;
      if (decision.verdict === 'drop') check(reached === undefined && blocked && samePiece(blocked, decision), where);
      else if (decision.decidedBy || decision.reason.startsWith('server'))
        check(blocked === undefined && reached && samePiece(reached, decision), where);
      // Reached by default: in no listed piece ("everything else").
      else check(reached === undefined && blocked === undefined, where);
      checked++;
    }
  }
  return checked;
}

function randomTarget(random: () => number): string {
  const v6 = random() < 0.25;
  const base = pick(random, v6 ? V6 : V4);
  const [family, start] = rangeOf(base);
  const address = format(
    family,
    start + BigInt(int(random, 0, 20)) - 1n < 0n ? 0n : start + BigInt(int(random, 0, 20)),
  );
  const shape = int(random, 0, 5);
  const quoted = family === 6 ? `[${address}]` : address;
  if (shape === 0) return `${quoted}:${int(random, 0, 45)}/${pick(random, ['tcp', 'udp'])}`;
  if (shape === 1) return `${address}/${pick(random, ['icmp', 'other'])}`;
  if (shape === 2) return random() < 0.5 ? address : quoted;
  return `${address}/${family === 4 ? pick(random, [0, 8, 24, 28, 30, 32]) : pick(random, [0, 100, 124, 128])}`;
}

describe('reach and who-can-reach', () => {
  it(`match brute-force single-packet evaluation on ${counted(ROUNDS)} random rule sets (seeded)`, () => {
    const random = prng(2026);
    let whoPackets = 0;
    let reachPackets = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const model = randomModel(random);
      const rules = new CompiledRules(model);
      const to = randomTarget(random);
      const target = parseReachTarget(to);
      expect(target.ok, to).toBe(true);
      if (!target.ok) continue;
      const context = `round ${round} to ${to} ${JSON.stringify(model.rules)} ${JSON.stringify(model.settings)}`;
      failures = [];
      whoPackets += checkWho(model, rules, whoCanReach(model, target.value, { all: true }), context);
      reachPackets += checkReach(model, rules, pick(random, [...model.users.values()]), context);
      expect(failures).toEqual([]);
    }
    expect(whoPackets).toBeGreaterThan(20_000 * share(1000));
    expect(reachPackets).toBeGreaterThan(20_000 * share(1000));
    // A few seconds alone; more on a loaded machine.
  }, 120_000);
});
