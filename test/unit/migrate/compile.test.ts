/**
 * The compiler against two independent judges: netform's 0.7.36 single-packet evaluator and the
 * 1.x single-packet evaluator (routing_table.rs and filter_engine.rs as data), on seeded random
 * states: for every probe packet (block corners, ports 0/1/22/65534/65535, ICMP, GRE), 0.7 accepts
 * and 1.x refuses exactly when report.json lists the packet as lost, and the reverse as gained.
 * Also: every emitted Resource passes the portal's changeset rules and the provider schema; a
 * user's Resources never overlap with different filters by default; identical users share a Group.
 */
import { describe, expect, it } from 'vitest';
import { CompiledRules, evaluateDevice, type Packet } from '../../../src/access/evaluate.js';
import {
  defaultAccessSettings,
  type AccessModel,
  type AccessRule,
  type AccessUser,
} from '../../../src/access/model.js';
import { cidrRange, formatAddress, parseIpAddress } from '../../../src/model/net.js';
import { rangesContain, filterKey } from '../../../src/migrate/access.js';
import { compileMigration } from '../../../src/migrate/compile.js';
import { checkResources, type ResourceBody } from '../../../src/migrate/check.js';
import { decide1x, type Packet1x, type Resource1x } from '../../../src/migrate/evaluate-1x.js';
import { terraformDocument } from '../../../src/migrate/terraform.js';
import type { DiffEntry, MigrateOptions, Migration } from '../../../src/migrate/types.js';
import { seeded } from '../../helpers/seeded.js';
import { validateTerraformJson } from '../../helpers/provider-schema.js';

function model(users: Record<string, AccessRule[]>, global: AccessRule[], disabled: string[] = []): AccessModel {
  const map = new Map<string, AccessUser>();
  const rules: AccessRule[] = [...global];
  for (const [email, own] of Object.entries(users)) {
    map.set(email, {
      key: email,
      email,
      devices: [{ name: 'laptop' }],
      ...(disabled.includes(email) ? { noTunnel: 'disabled' } : {}),
    });
    rules.push(...own);
  }
  return { users: map, rules, settings: defaultAccessSettings() };
}

function rule(
  owner: string | null,
  action: 'accept' | 'drop',
  destination: string,
  proto?: 'tcp' | 'udp',
  ports?: string,
): AccessRule {
  return { owner, action, destination, port_type: proto ?? null, port_range: ports ?? null };
}

function randomModel(seed: number): AccessModel {
  const r = seeded(seed);
  const blocks = [
    '10.1.0.0/16',
    '10.1.2.0/24',
    '10.1.2.7',
    '10.2.0.0/15',
    '192.168.1.0/24',
    '8.8.8.8',
    '10.3.2.9',
    '172.16.0.0/12',
    'fd01::/64',
    '100.64.1.1',
  ];
  const ports = ['22', '80', '443', '8000-8999', '1-1024', '53', '65534', '1-65535'];
  const one = (owner: string | null) =>
    r.chance(0.5)
      ? rule(owner, r.pick(['accept', 'drop'] as const), r.pick(blocks))
      : rule(
          owner,
          r.pick(['accept', 'drop'] as const),
          r.pick(blocks),
          r.pick(['tcp', 'udp'] as const),
          r.pick(ports),
        );
  const users: Record<string, AccessRule[]> = {};
  const n = r.int(2, 6);
  for (let i = 0; i < n; i++) {
    const email = `u${i}@example.com`;
    users[email] = Array.from({ length: r.int(0, 3) }, () => one(email));
  }
  const global = Array.from({ length: r.int(0, 4) }, () => one(null));
  return model(users, global, r.chance(0.3) ? ['u0@example.com'] : []);
}

/** Probe packets: each rule block's first and last address and their neighbours, ports at the edges. */
function probes(m: AccessModel): Packet[] {
  const addresses = new Set<string>(['10.0.0.1', '10.3.2.1', '1.1.1.1', '127.0.0.1', 'fd00::3:2:1', '2001:db8::1']);
  for (const rl of m.rules) {
    const range = cidrRange(rl.destination)!;
    const last = range.family === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
    for (const v of [range.start - 1n, range.start, range.end, range.end + 1n])
      if (v >= 0n && v <= last) addresses.add(formatAddress(range.family, v));
  }
  const out: Packet[] = [];
  for (const a of addresses) {
    const destination = parseIpAddress(a)!;
    for (const port of [0, 1, 22, 53, 80, 443, 8500, 65534, 65535]) {
      out.push({ destination, protocol: 'tcp', port });
      out.push({ destination, protocol: 'udp', port });
    }
    out.push({ destination, protocol: 'icmp' }, { destination, protocol: 'other' });
  }
  return out;
}

const parsedEntries = new WeakMap<DiffEntry, { start: bigint; end: bigint }[]>();

function entryHas(e: DiffEntry, p: Packet): boolean {
  if (e.family !== p.destination.family) return false;
  let ranges = parsedEntries.get(e);
  if (!ranges) parsedEntries.set(e, (ranges = e.addresses.map((c) => cidrRange(c)!)));
  const inBlock = ranges.some((r) => r.start <= p.destination.value && p.destination.value <= r.end);
  if (!inBlock) return false;
  if (e.protocol === 'all') return true;
  if (e.protocol !== p.protocol) return false;
  if (!e.ports) return true;
  const ports = e.ports.split(',').map((t) => {
    const [lo, hi] = t.split('-').map(Number);
    return [lo!, hi ?? lo!] as const;
  });
  return rangesContain(ports, p.port!);
}

function withinHas(e: DiffEntry, p: Packet): boolean {
  const r = cidrRange(e.within!)!;
  return (
    r.family === p.destination.family &&
    r.start <= p.destination.value &&
    p.destination.value <= r.end &&
    (e.protocol === 'all' || e.protocol === p.protocol)
  );
}

function resourcesOf(m: Migration, email: string): Resource1x[] {
  const user = m.users.find((u) => u.email === email)!;
  const groups = new Set([user.group, 'everyone'].filter((g): g is string => g !== undefined));
  return m.resources
    .filter((r) => r.groups.some((g) => groups.has(g)))
    .map((r) => ({ id: r.address, family: r.family, start: r.start, end: r.end, prefix: r.prefix, filter: r.filter }));
}

function judge(m0: AccessModel, options: MigrateOptions): Migration {
  const migration = compileMigration({ model: m0, options });
  const rules = new CompiledRules(m0);
  for (const user of m0.users.values()) {
    const result = migration.users.find((u) => u.email === user.email)!;
    const resources = resourcesOf(migration, user.email);
    for (const p of probes(m0)) {
      const v07 = evaluateDevice(rules, user, undefined, p).verdict === 'accept';
      const q: Packet1x = {
        family: p.destination.family,
        address: p.destination.value,
        protocol: p.protocol,
        ...(p.port !== undefined ? { port: p.port } : {}),
      };
      const enabled = !user.noTunnel;
      const vNew = enabled && decide1x(resources, q, 'filter').verdict === 'permit';
      const vOld = enabled && decide1x(resources, q, 'prefix').verdict === 'permit';
      const what = `${user.email} ${formatAddress(q.family, q.address)} ${p.protocol}/${p.port ?? ''}`;
      const check = (entries: DiffEntry[], expected: boolean, label: string) => {
        // A difference listing only its first blocks says nothing exact about the others.
        if (!expected && entries.some((e) => e.addresses_total !== undefined && withinHas(e, p))) return;
        expect(
          entries.some((e) => entryHas(e, p)) ||
            entries.some((e) => e.addresses_total !== undefined && withinHas(e, p) && expected),
          `${label} ${what}`,
        ).toBe(expected);
      };
      check(result.lost, v07 && !vNew, 'lost');
      check(result.gained, !v07 && vNew, 'gained');
      check(result.oldClients, vNew && !vOld, 'old clients');
    }
    for (const e of result.lost) expect(e.code).not.toBe('NOT_EXPRESSED');
  }
  const document = terraformDocument(migration, 'netform') as { resource: Record<string, Record<string, unknown>> };
  expect(checkResources((document.resource.firezone_resource ?? {}) as Record<string, ResourceBody>)).toEqual([]);
  expect(validateTerraformJson(document)).toEqual([]);
  return migration;
}

function overlapsWithDifferentFilters(resources: Resource1x[]): boolean {
  return resources.some((a, i) =>
    resources.some(
      (b, j) =>
        j > i &&
        a.family === b.family &&
        a.start <= b.end &&
        b.start <= a.end &&
        filterKey(a.filter) !== filterKey(b.filter),
    ),
  );
}

const NARROWER: MigrateOptions = { prefer: 'narrower', assumeFilterRouting: false };

describe('compileMigration, judged packet by packet', () => {
  for (let seed = 1; seed <= 10; seed++) {
    it(`seed ${seed}: report.json's lost/gained/old-clients are exactly the verdict differences; nothing wider by default`, () => {
      const m0 = randomModel(seed);
      const migration = judge(m0, NARROWER);
      for (const u of migration.users) {
        expect(u.gained).toEqual([]);
        expect(u.oldClients).toEqual([]);
        expect(overlapsWithDifferentFilters(resourcesOf(migration, u.email))).toBe(false);
      }
      judge(m0, { prefer: 'wider', assumeFilterRouting: false });
      judge(m0, { prefer: 'narrower', assumeFilterRouting: true });
      judge(m0, { prefer: 'narrower', assumeFilterRouting: false, everyoneGroup: 'everyone-id' });
    });
  }
});

describe('shapes of the output', () => {
  it('users with identical reach share one group; identical resources are shared', () => {
    const m0 = model(
      { 'a@x.com': [], 'b@x.com': [], 'c@x.com': [rule('c@x.com', 'drop', '10.1.0.0/16', 'tcp', '22')] },
      [rule(null, 'drop', '10.9.0.0/16')],
    );
    const m = judge(m0, NARROWER);
    expect(m.groups.map((g) => [g.address, g.members])).toEqual([
      ['g_a_x_com', ['a@x.com', 'b@x.com']],
      ['g_c_x_com', ['c@x.com']],
    ]);
    const shared = m.resources.filter((r) => r.groups.length === 2);
    expect(shared.length).toBeGreaterThan(0);
    expect(m.resources.find((r) => r.address_text === '10.1.0.0/16')).toMatchObject({
      name: '10.1.0.0/16 tcp:1-21,23-65535 udp icmp',
      groups: ['g_c_x_com'],
    });
  });

  it("#12684's example as a 0.7 state: disjoint by default, overlapping with --assume-filter-routing, fewer objects", () => {
    const m0 = model(
      {
        'a@x.com': [
          rule('a@x.com', 'accept', '1.1.0.0/16', 'tcp', '1-65535'),
          rule('a@x.com', 'accept', '1.1.0.0/24', 'tcp', '22'),
          rule('a@x.com', 'drop', '1.1.0.0/16'),
        ],
      },
      [],
    );
    const disjoint = judge(m0, NARROWER);
    const overlapping = judge(m0, { ...NARROWER, assumeFilterRouting: true });
    const in11 = (m: Migration) => m.resources.filter((r) => r.address_text.startsWith('1.1.'));
    expect(in11(disjoint).map((r) => r.name)).toEqual(['1.1.0.0/16 tcp:1-65535']);
    expect(overlapping.users[0]!.verdict).toBe(disjoint.users[0]!.verdict);
  });

  it('--assume-filter-routing: a /16 with all TCP over a /24 that adds udp/53 takes 2 resources instead of 9', () => {
    const m0 = model(
      {
        'a@x.com': [
          rule('a@x.com', 'accept', '10.1.0.0/16', 'tcp', '1-65535'),
          rule('a@x.com', 'accept', '10.1.0.0/24', 'udp', '53'),
          rule('a@x.com', 'drop', '10.0.0.0/8'),
        ],
      },
      [],
    );
    const in101 = (m: Migration) => m.resources.filter((r) => r.address_text.startsWith('10.1.')).map((r) => r.name);
    expect(in101(judge(m0, { ...NARROWER, assumeFilterRouting: true }))).toEqual([
      '10.1.0.0/16 tcp:1-65535',
      '10.1.0.0/24 tcp:1-65535 udp:53',
    ]);
    expect(in101(judge(m0, NARROWER))).toHaveLength(9);
  });

  it('--assume-filter-routing: old clients lose what a more specific overlapping resource refuses, and the report says so', () => {
    const m0 = model(
      {
        'a@x.com': [
          rule('a@x.com', 'accept', '10.1.0.0/23', 'tcp', '22'),
          rule('a@x.com', 'accept', '10.1.1.0/24', 'tcp', '80'),
          rule('a@x.com', 'accept', '10.1.2.0/24', 'tcp', '80'),
          rule('a@x.com', 'drop', '10.0.0.0/8'),
        ],
      },
      [],
    );
    const overlapping = judge(m0, { ...NARROWER, assumeFilterRouting: true });
    const old = overlapping.users[0]!.oldClients;
    expect(old.map((e) => [e.code, e.addresses, e.protocol, e.ports])).toEqual([
      ['ROUTING', ['10.1.1.0/24'], 'tcp', '22'],
    ]);
    expect(judge(m0, NARROWER).users[0]!.oldClients).toEqual([]);
  });

  it('--prefer wider marks the user wider with the exact gain; the default keeps it narrower', () => {
    const m0 = model({ 'a@x.com': [rule('a@x.com', 'drop', '10.1.0.0/16', 'tcp', '22')] }, []);
    const wider = judge(m0, { ...NARROWER, prefer: 'wider' });
    expect(wider.users[0]!.verdict).toBe('wider');
    expect(wider.users[0]!.gained.map((e) => [e.code, e.addresses, e.protocol, e.ports])).toEqual([
      ['PREFER_WIDER', ['10.1.0.0/16'], 'tcp', '22'],
    ]);
    expect(judge(m0, NARROWER).users[0]!.verdict).toBe('narrower');
  });

  it("--everyone-group: what a user's own drop took away comes back through Everyone, labelled EVERYONE_GROUP (not PREFER_WIDER)", () => {
    const m0 = model({ 'a@x.com': [], 'b@x.com': [rule('b@x.com', 'drop', '10.1.0.0/16')] }, []);
    expect(judge(m0, NARROWER).users.find((u) => u.email === 'b@x.com')!.gained).toEqual([]);
    const m = judge(m0, { ...NARROWER, everyoneGroup: 'e1' });
    const b = m.users.find((u) => u.email === 'b@x.com')!;
    expect(b.verdict).toBe('wider');
    expect(b.gained.map((e) => [e.code, e.addresses, e.protocol])).toEqual([
      ['EVERYONE_GROUP', ['10.1.0.0/16'], 'all'],
    ]);
  });

  it('a disabled user is a disabled actor without a group, equal, with DISABLED_USER', () => {
    const m = judge(model({ 'a@x.com': [], 'b@x.com': [] }, [], ['b@x.com']), NARROWER);
    expect(m.actors.find((a) => a.email === 'b@x.com')).toMatchObject({ enabled: false });
    expect(m.users.find((u) => u.email === 'b@x.com')).toMatchObject({
      verdict: 'equal',
      notes: [{ code: 'DISABLED_USER' }],
    });
    expect(m.memberships.map((x) => x.actor)).toEqual(['u_a_x_com']);
  });

  it('--everyone-group grants the global reach to Everyone: no native group for it, FUTURE_USERS gone', () => {
    const m0 = model({ 'a@x.com': [], 'b@x.com': [rule('b@x.com', 'accept', '10.50.0.0/16')] }, [
      rule(null, 'drop', '10.9.0.0/16'),
    ]);
    expect(judge(m0, NARROWER).account.map((n) => n.code)).toContain('FUTURE_USERS');
    const m = judge(m0, { ...NARROWER, everyoneGroup: 'e1' });
    expect(m.account.map((n) => n.code)).not.toContain('FUTURE_USERS');
    expect(m.groups.find((g) => g.address === 'everyone')).toMatchObject({ everyone: 'e1' });
    const doc = JSON.stringify(terraformDocument(m, 'netform'));
    expect(doc).toContain('"group_id":"e1"');
    expect(m.memberships.map((x) => x.actor)).not.toContain('u_a_x_com');
  });
});
