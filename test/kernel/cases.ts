/**
 * What the kernel suite sends through the lab: the worked examples S1–S8 of rule-semantics.md §7
 * with their verdicts, and seeded random rule sets with packets. A case is a live state (as a
 * server's /v0 lists it) and probes from its devices' addresses.
 */
import { rulesOverlap, parseRule } from '../../src/model/rule.js';
import { formatAddress, parseCidrOrAddress, parseIpAddress } from '../../src/model/net.js';
import type { ApiDevice, ApiRule, ApiUser } from '../../src/model/types.js';
import { defaultSettings, type DesiredRule, type DesiredState, type LiveState } from '../../src/model/state.js';
import { seeded } from '../helpers/seeded.js';
import { deviceAddress, POOL, SERVER_ADDRESSES, sideOf, type Probe, type Proto, type Side } from './lab.js';

export interface CaseProbe extends Probe {
  /** The verdict rule-semantics.md gives (worked examples only). */
  expect?: 'accept' | 'drop';
}

export interface Case {
  name: string;
  live: LiveState;
  /** The server's kernel supports port rules (false: §5.1). */
  portRules: boolean;
  /**
   * `live`: the ruleset and the evaluator are made from the live state (a rule with ports left
   * out when port rules are off, §5.1.2). `desired`: from the same state declared in files, every
   * device address pinned (with port rules off, a rule with ports is stored without them, §5.1.1).
   */
  mode: 'live' | 'desired';
  probes: CaseProbe[];
  /**
   * Declared with port rules off: rules the generator left out only because, stored without their
   * ports, they overlap a rule of the case (the server would refuse them; `validate` must too).
   */
  refused?: ApiRule[];
}

/** The case as a desired state: users, devices with pinned addresses, rules; its settings. */
export function desiredOf(c: Case): DesiredState {
  const rule = (r: ApiRule): DesiredRule => ({
    action: r.action,
    destination: r.destination,
    port_type: r.port_type,
    port_range: r.port_range,
  });
  return {
    settings: { ...defaultSettings(), port_rules: c.portRules, server_addresses: [...SERVER_ADDRESSES] },
    users: c.live.users.map((u) => ({
      email: u.email,
      devices: c.live.devices
        .filter((d) => d.user_id === u.id)
        .map((d) => ({
          name: d.name,
          fields: { ...(d.ipv4 ? { ipv4: d.ipv4 } : {}), ...(d.ipv6 ? { ipv6: d.ipv6 } : {}) },
        })),
      rules: c.live.rules.filter((r) => r.user_id === u.id).map(rule),
    })),
    rules: c.live.rules.filter((r) => r.user_id === null).map(rule),
    absent: { users: [], devices: [] },
    sources: [],
  };
}

const STAMP = '2024-01-01T00:00:00.000Z';

export function apiUser(id: string, email: string): ApiUser {
  return {
    id,
    email,
    role: 'unprivileged',
    last_signed_in_at: null,
    last_signed_in_method: null,
    disabled_at: null,
    inserted_at: STAMP,
    updated_at: STAMP,
  };
}

let deviceCount = 0;
export function apiDevice(userId: string, ipv4: string | null, ipv6: string | null): ApiDevice {
  deviceCount++;
  return { id: `device-${deviceCount}`, user_id: userId, name: `device-${deviceCount}`, ipv4, ipv6 } as ApiDevice;
}

let ruleCount = 0;
export function apiRule(
  userId: string | null,
  action: 'accept' | 'drop',
  destination: string,
  ports?: `${'tcp' | 'udp'} ${string}`,
): ApiRule {
  ruleCount++;
  const [portType, ...range] = ports ? ports.split(' ') : [];
  return {
    id: `rule-${ruleCount}`,
    action,
    destination,
    port_type: (portType as 'tcp' | 'udp' | undefined) ?? null,
    port_range: range.length > 0 ? range.join(' ') : null,
    user_id: userId,
    inserted_at: STAMP,
    updated_at: STAMP,
  };
}

// ------------------------------------------------------------------------------------------
// The worked examples (rule-semantics.md §7). U1, U2, U3 have 10.3.2.2, .3, .4 and fd00::3:2:2, :3, :4.

/** Ids in another order than the users' numbers, so that the ruleset's order of users is exercised. */
const U1 = 'c1d2e3f4-0000-4000-8000-000000000001';
const U2 = 'a1b2c3d4-0000-4000-8000-000000000002';
const U3 = 'b1c2d3e4-0000-4000-8000-000000000003';
const SOURCES = { U1: ['10.3.2.2', 'fd00::3:2:2'], U2: ['10.3.2.3', 'fd00::3:2:3'], U3: ['10.3.2.4', 'fd00::3:2:4'] };

function exampleState(rules: ApiRule[]): LiveState {
  return {
    users: [apiUser(U1, 'u1@example.com'), apiUser(U2, 'u2@example.com'), apiUser(U3, 'u3@example.com')],
    devices: [
      apiDevice(U1, '10.3.2.2', 'fd00::3:2:2'),
      apiDevice(U2, '10.3.2.3', 'fd00::3:2:3'),
      apiDevice(U3, '10.3.2.4', 'fd00::3:2:4'),
    ],
    rules,
  };
}

/** `U1 10.1.2.3:22/tcp accept`: who, where (ADDRESS:PORT/tcp|udp, ADDRESS/icmp), the verdict of §7. */
function p(text: string): CaseProbe {
  const [who, where, expect] = text.split(' ') as ['U1' | 'U2' | 'U3', string, 'accept' | 'drop'];
  const slash = where.lastIndexOf('/');
  const head = where.slice(0, slash);
  const proto = where.slice(slash + 1) as Proto;
  let dst = head;
  let port: string | undefined;
  const bracketed = /^\[(.+)\]:(\d+)$/.exec(head);
  if (bracketed) [, dst = '', port] = bracketed;
  else if (head.split(':').length === 2) [dst = '', port] = head.split(':');
  const src = SOURCES[who][dst.includes(':') ? 1 : 0]!;
  return { src, dst, proto, ...(port ? { port: Number(port) } : {}), expect };
}

export function workedExamples(): Case[] {
  const c = (name: string, rules: ApiRule[], probes: string[]): Case => ({
    name,
    live: exampleState(rules),
    portRules: true,
    mode: 'live',
    probes: probes.map(p),
  });
  return [
    c(
      'S1 global default-deny plus a per-user allowance',
      [apiRule(null, 'drop', '0.0.0.0/0'), apiRule(U1, 'accept', '10.0.0.0/8')],
      [
        'U1 10.1.2.3:22/tcp accept',
        'U1 10.1.2.3/icmp accept',
        'U1 8.8.8.8:53/udp drop',
        'U2 10.1.2.3:22/tcp drop',
        'U1 [2001:db8:1::1]:443/tcp accept',
        'U1 10.3.2.1:53/udp accept',
      ],
    ),
    c(
      'S2a accept before drop in the same scope',
      [apiRule(null, 'accept', '10.0.0.0/8'), apiRule(null, 'drop', '10.1.0.0/16')],
      ['U1 10.1.2.3:22/tcp accept', 'U1 10.1.2.3/icmp accept'],
    ),
    c(
      'S2b a narrower accept inside a drop',
      [apiRule(null, 'drop', '10.0.0.0/8'), apiRule(null, 'accept', '10.1.0.0/16')],
      ['U1 10.1.2.3:22/tcp accept', 'U1 10.2.0.1:22/tcp drop', 'U1 11.0.0.1:22/tcp accept', 'U2 10.2.0.1/icmp drop'],
    ),
    c(
      'S3a a port accept in a default-deny',
      [apiRule(null, 'drop', '0.0.0.0/0'), apiRule(null, 'accept', '1.2.3.4', 'tcp 443')],
      [
        'U1 1.2.3.4:443/tcp accept',
        'U1 1.2.3.4:80/tcp drop',
        'U1 1.2.3.4:443/udp drop',
        'U1 1.2.3.4/icmp drop',
        'U1 1.2.3.5:443/tcp drop',
      ],
    ),
    c(
      'S3b a port drop beats a portless accept',
      [apiRule(null, 'accept', '0.0.0.0/0'), apiRule(null, 'drop', '10.0.0.5', 'tcp 22')],
      ['U1 10.0.0.5:22/tcp drop', 'U1 10.0.0.5:23/tcp accept', 'U1 10.0.0.5:22/udp accept'],
    ),
    c(
      'S3c port accept before port drop, and port 65535',
      [apiRule(null, 'drop', '10.0.0.0/8', 'tcp 1 - 65534'), apiRule(null, 'accept', '10.0.0.5', 'tcp 443')],
      [
        'U1 10.0.0.5:443/tcp accept',
        'U1 10.0.0.5:80/tcp drop',
        'U1 10.0.0.5:80/udp accept',
        'U1 10.0.0.5:65535/tcp accept',
        'U1 10.0.0.5:1/tcp drop',
        'U1 10.0.0.5:65534/tcp drop',
      ],
    ),
    c(
      'S4a a user portless drop beats a global port accept',
      [apiRule(null, 'accept', '1.2.3.4', 'tcp 443'), apiRule(U1, 'drop', '1.2.3.0/24')],
      ['U1 1.2.3.4:443/tcp drop', 'U2 1.2.3.4:443/tcp accept'],
    ),
    c(
      'S4b a user portless accept beats a global port drop',
      [apiRule(null, 'drop', '1.2.3.4', 'tcp 443'), apiRule(U1, 'accept', '1.2.3.4')],
      ['U1 1.2.3.4:443/tcp accept', 'U2 1.2.3.4:443/tcp drop', 'U2 1.2.3.4:80/tcp accept'],
    ),
    c(
      'S4c the user chain in order, then the global rules',
      [
        apiRule(U1, 'drop', '1.2.3.4', 'tcp 443'),
        apiRule(U1, 'accept', '1.2.3.0/24'),
        apiRule(null, 'drop', '0.0.0.0/0'),
      ],
      [
        'U1 1.2.3.4:443/tcp drop',
        'U1 1.2.3.4:80/tcp accept',
        'U1 9.9.9.9:53/udp drop',
        'U1 9.9.9.9/icmp drop',
        'U2 1.2.3.4:80/tcp drop',
      ],
    ),
    c(
      'S5 range bounds, a single port, host bits',
      [
        apiRule(null, 'drop', '0.0.0.0/0'),
        apiRule(null, 'accept', '1.2.3.4', 'tcp 80 - 90'),
        apiRule(null, 'accept', '5.6.7.8/24', 'udp 53'),
      ],
      [
        'U1 1.2.3.4:79/tcp drop',
        'U1 1.2.3.4:80/tcp accept',
        'U1 1.2.3.4:90/tcp accept',
        'U1 1.2.3.4:91/tcp drop',
        'U1 5.6.7.200:53/udp accept',
        'U1 5.6.7.200:54/udp drop',
        'U1 5.6.8.1:53/udp drop',
      ],
    ),
    c(
      'S6 IPv6',
      [
        apiRule(null, 'drop', '::/0'),
        apiRule(U1, 'accept', '2001:db8:1::/64', 'tcp 22'),
        apiRule(null, 'accept', '2001:db8:2::5'),
      ],
      [
        'U1 [2001:db8:1::9]:22/tcp accept',
        'U1 [2001:db8:1::9]:23/tcp drop',
        'U2 [2001:db8:1::9]:22/tcp drop',
        'U2 [2001:db8:2::5]:1/udp accept',
        'U2 [2001:db8:2::6]:1/udp drop',
        'U2 2001:db8:2::5/icmp accept',
        'U2 8.8.8.8:53/udp accept',
        'U1 [fd00::3:2:1]:22/tcp accept',
        'U1 fd00::3:2:1/icmp accept',
      ],
    ),
    c(
      'S7 a user-wide allow over a global deny',
      [apiRule(U2, 'accept', '0.0.0.0/0'), apiRule(null, 'drop', '0.0.0.0/0')],
      ['U2 8.8.8.8:53/udp accept', 'U1 8.8.8.8:53/udp drop', 'U3 8.8.8.8/icmp drop', 'U2 8.8.8.8/icmp accept'],
    ),
    c(
      'S8a device to device: an accept for U1 only (U2 cannot answer)',
      [apiRule(null, 'drop', '10.3.2.0/24'), apiRule(U1, 'accept', '10.3.2.0/24')],
      ['U1 10.3.2.3:22/tcp accept', 'U2 10.3.2.2:40000/tcp drop', 'U2 10.3.2.2/icmp drop'],
    ),
    c(
      'S8b device to device: an accept for both users',
      [
        apiRule(null, 'drop', '10.3.2.0/24'),
        apiRule(U1, 'accept', '10.3.2.0/24'),
        apiRule(U2, 'accept', '10.3.2.0/24'),
      ],
      ['U1 10.3.2.3:22/tcp accept', 'U2 10.3.2.2:40000/tcp accept', 'U2 10.3.2.2/icmp accept'],
    ),
    c(
      "S8c device to device: a drop of U1's own address blocks U2's answers",
      [apiRule(null, 'drop', '10.3.2.2')],
      ['U1 10.3.2.3:22/tcp accept', 'U2 10.3.2.2:40000/tcp drop', 'U3 10.3.2.3:22/tcp accept'],
    ),
  ];
}

// ------------------------------------------------------------------------------------------
// Random cases

type Random = ReturnType<typeof seeded>;

const V4_BLOCKS = [
  '0.0.0.0/0',
  '10.0.0.0/8',
  '10.1.0.0/16',
  '10.1.2.0/24',
  '10.1.2.3/32',
  '1.2.3.0/24',
  '1.2.3.4/32',
  '8.8.8.8/32',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '10.3.2.0/24',
  '10.3.2.0/27',
  '10.3.2.1/32',
];
const V6_BLOCKS = [
  '::/0',
  '2001:db8::/32',
  '2001:db8:1::/48',
  '2001:db8:1::/64',
  '2001:db8:1::9/128',
  '2001:db8:2::5/128',
  'fd00::/8',
  'fd00::3:2:0/120',
  'fd00::3:2:0/124',
  'fd00::3:2:1/128',
];

function randomBigint(r: Random, below: bigint): bigint {
  let value = 0n;
  for (let i = 0; i < 8; i++) value = (value << 16n) | BigInt(r.int(0, 0xffff));
  return value % below;
}

/** A block inside one of the anchor blocks, written the ways a user might (host bits, bare host). */
function randomDestination(r: Random, family: 4 | 6, devices: string[]): string {
  if (r.chance(0.12) && devices.length > 0) return r.pick(devices);
  const anchor = parseCidrOrAddress(r.pick(family === 4 ? V4_BLOCKS : V6_BLOCKS))!;
  const bits = family === 4 ? 32 : 128;
  if (r.chance(0.4)) return anchor.prefix === bits ? formatAddress(family, anchor.start) : anchor.network;
  const prefix = Math.min(bits, anchor.prefix + r.int(0, family === 4 ? 16 : 40));
  const inside = anchor.start + randomBigint(r, anchor.end - anchor.start + 1n);
  const text = formatAddress(family, inside);
  if (prefix === bits) return r.chance(0.5) ? text : `${text}/${bits}`;
  // Host bits kept as typed: the server and fz_wall use the block.
  return `${text}/${prefix}`;
}

function randomPorts(r: Random): string {
  if (r.chance(0.45)) return `${r.pick([1, 65534, 22, 53, 80, 443, r.int(1, 65534)])}`;
  const low = r.chance(0.2) ? 1 : r.int(1, 65000);
  const high = r.chance(0.2) ? 65534 : Math.min(65534, low + r.int(0, r.pick([2, 100, 5000])));
  return `${low} - ${high}`;
}

function uuid(r: Random): string {
  const hex = (n: number) => Array.from({ length: n }, () => r.int(0, 15).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
}

const TUNNEL = [parseCidrOrAddress('10.3.2.0/24')!, parseCidrOrAddress('fd00::3:2:0/120')!];
const UNROUTABLE = ['0.0.0.0/8', '127.0.0.0/8', '169.254.0.0/16', '224.0.0.0/3', '::/8', 'fe80::/10', 'ff00::/8'].map(
  (b) => parseCidrOrAddress(b)!,
);

function inBlocks(address: string, blocks: ReturnType<typeof parseCidrOrAddress>[]): boolean {
  const a = parseIpAddress(address)!;
  return blocks.some((b) => b!.family === a.family && b!.start <= a.value && a.value <= b!.end);
}

/** Whether a probe from `side` may go to `address`: a server address, the other side's device addresses, or anything routable. */
export function usableDestination(address: string, side: Side): boolean {
  if (
    SERVER_ADDRESSES.some(
      (s) => parseIpAddress(s)!.value === parseIpAddress(address)!.value && s.includes(':') === address.includes(':'),
    )
  )
    return true;
  if (inBlocks(address, TUNNEL)) {
    const other = sideOf(address);
    return other !== null && other !== side;
  }
  return !inBlocks(address, UNROUTABLE);
}

export function randomCase(seed: number): Case {
  // Consecutive seeds start the generator at nearly the same first value: spread them out.
  const r = seeded(Math.imul(seed, 0x9e3779b1) >>> 0);
  r.int(0, 1);
  const portRules = !r.chance(0.15);
  const mode = r.chance(0.3) ? 'desired' : 'live';
  const used = new Set<string>();
  const free = (side: Side, family: 4 | 6): string | null => {
    for (let tries = 0; tries < 20; tries++) {
      const address = deviceAddress(side, r.int(0, POOL - 1), family);
      if (!used.has(address)) {
        used.add(address);
        return address;
      }
    }
    return null;
  };
  const users: ApiUser[] = [];
  const devices: ApiDevice[] = [];
  // Every user has a device: a user without devices is another issue's (W3.6) and left out here.
  for (let u = 0, count = r.int(1, 5); u < count; u++) {
    const id = uuid(r);
    users.push(apiUser(id, `user${u}@lab.test`));
    for (let d = 0, n = r.int(1, 3); d < n; d++) {
      const side: Side = r.pick(['a', 'b'] as const);
      // The first device has an IPv4 address, so that every case has packets to send.
      const v4 = u === 0 && d === 0 ? true : r.chance(0.85);
      devices.push(apiDevice(id, v4 ? free(side, 4) : null, r.chance(0.8) ? free(side, 6) : null));
    }
  }
  const addresses = { 4: devices.flatMap((d) => d.ipv4 ?? []), 6: devices.flatMap((d) => d.ipv6 ?? []) };
  const rules: ApiRule[] = [];
  // The server's overlap rule (same scope and action): such a rule could not exist. Declared with
  // port rules off, a rule is stored without its ports, so that is the form that must not overlap.
  const stored = (rule: ApiRule) =>
    parseRule({
      ...rule,
      owner: rule.user_id,
      ...(mode === 'desired' && !portRules ? { port_type: null, port_range: null } : {}),
    })!;
  const refused: ApiRule[] = [];
  const declared = (rule: ApiRule) => parseRule({ ...rule, owner: rule.user_id })!;
  const add = (candidate: ApiRule) => {
    if (rules.some((other) => rulesOverlap(stored(other), stored(candidate)))) {
      if (!rules.some((other) => rulesOverlap(declared(other), declared(candidate)))) refused.push(candidate);
      return false;
    }
    rules.push(candidate);
    return true;
  };
  // Deny by default (upstream's advice for it, firezone/firezone#683), often.
  if (r.chance(0.35)) add(apiRule(null, 'drop', '0.0.0.0/0'));
  if (r.chance(0.25)) add(apiRule(null, 'drop', '::/0'));
  for (let count = r.int(1, 12), tries = 0; rules.length < count && tries < 60; tries++) {
    const family = r.chance(0.6) ? 4 : 6;
    const ported = r.chance(0.5);
    add(
      apiRule(
        r.chance(0.5) ? null : r.pick(users).id,
        r.chance(0.55) ? 'drop' : 'accept',
        randomDestination(r, family, addresses[family]),
        ported ? `${r.pick(['tcp', 'udp'] as const)} ${randomPorts(r)}` : undefined,
      ),
    );
  }
  // Declared with port rules off, an accept and a drop that overlap once stored without ports are
  // valid: the opposite action of a rule with ports, on the same destination, without ports.
  if (mode === 'desired' && !portRules) {
    for (const rule of rules.filter((x) => x.port_type !== null && r.chance(0.5)))
      add(apiRule(rule.user_id, rule.action === 'accept' ? 'drop' : 'accept', rule.destination));
  }
  const live: LiveState = { users, devices, rules };

  const sources = devices.flatMap((d) => [...(d.ipv4 ? [d.ipv4] : []), ...(d.ipv6 ? [d.ipv6] : [])]);
  const probes: CaseProbe[] = [];
  const icmpPairs = new Set<string>();
  while (probes.length < 50 && sources.length > 0) {
    const src = r.pick(sources);
    const family = src.includes(':') ? 6 : 4;
    const side = sideOf(src)!;
    const familyRules = rules.filter((rule) => rule.destination.includes(':') === (family === 6));
    let dst: string | undefined;
    for (let tries = 0; tries < 20 && dst === undefined; tries++) {
      let candidate: string;
      const roll = r.int(1, 100);
      if (roll <= 55 && familyRules.length > 0) {
        const block = parseCidrOrAddress(r.pick(familyRules).destination)!;
        const span = block.end - block.start;
        const offset = r.pick([0n, span, span > 0n ? 1n : 0n, span > 0n ? span - 1n : 0n, randomBigint(r, span + 1n)]);
        candidate = formatAddress(family, block.start + offset);
      } else if (roll <= 60) candidate = SERVER_ADDRESSES[family === 4 ? 0 : 1]!;
      else if (roll <= 72) candidate = deviceAddress(side === 'a' ? 'b' : 'a', r.int(0, POOL - 1), family);
      else
        candidate =
          family === 4
            ? formatAddress(4, BigInt(r.int(1, 0xdfffffff)))
            : formatAddress(6, 0x20010db8n * 2n ** 96n + randomBigint(r, 2n ** 96n));
      if (usableDestination(candidate, side)) dst = candidate;
    }
    if (dst === undefined) continue;
    let proto: Proto = r.pick(['tcp', 'tcp', 'tcp', 'udp', 'udp', 'icmp', 'icmp'] as const);
    if (proto === 'icmp') {
      const pair = `${src}|${dst}`;
      if (icmpPairs.has(pair)) proto = 'udp';
      else icmpPairs.add(pair);
    }
    if (proto === 'icmp') {
      probes.push({ src, dst, proto });
      continue;
    }
    const ported = familyRules.filter((rule) => rule.port_type === proto && rule.port_range);
    let port: number;
    const roll = r.int(1, 100);
    if (roll <= 45 && ported.length > 0) {
      const [low, high] = r
        .pick(ported)
        .port_range!.split('-')
        .map((s) => Number(s.trim()));
      const hi = high ?? low!;
      port = r.pick([low!, hi, low! - 1, hi + 1]);
    } else if (roll <= 65) port = r.pick([1, 65534, 65535]);
    else port = r.int(1, 65535);
    probes.push({ src, dst, proto, port: Math.min(65535, Math.max(1, port)) });
  }
  return {
    name: `random #${seed} (${mode}${portRules ? '' : ', port rules off'})`,
    live,
    portRules,
    mode,
    probes,
    ...(refused.length ? { refused } : {}),
  };
}
