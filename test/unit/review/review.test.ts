/**
 * The access review's data (src/review): what each user reaches, checked against the reference
 * evaluator on random rule sets; the findings with their evidence and dates; "never" against
 * "unknown" telemetry; and the CSV and markdown writers with hostile strings.
 */
import { describe, expect, it } from 'vitest';
import type { AccessBlock } from '../../../src/access/index.js';
import { cidrRange, parseIpAddress } from '../../../src/model/net.js';
import type { LiveState } from '../../../src/model/state.js';
import type { ApiDevice, ApiRule, ApiUser } from '../../../src/model/types.js';
import { buildReview, telemetrySupport, type ReviewReport } from '../../../src/review/index.js';
import { csvCell, formatReview } from '../../../src/views/review.js';
import { parseCsv } from '../../helpers/csv.js';
import { int, pick, prng } from '../../helpers/access-random.js';
import { referenceVerdict, type RefRule } from '../../helpers/access-reference.js';
import { rounds } from '../../helpers/rounds.js';

const ROUNDS = rounds(300);

const NOW = new Date('2026-11-26T12:00:00.000Z');
const daysAgo = (n: number) => new Date(NOW.getTime() - n * 86_400_000).toISOString().replace('Z', '000Z');
const T0 = '2025-01-01T00:00:00.000000Z';

function user(id: string, email: string, extra: Partial<ApiUser> = {}): ApiUser {
  return {
    id,
    email,
    role: 'unprivileged',
    last_signed_in_at: null,
    last_signed_in_method: null,
    disabled_at: null,
    inserted_at: T0,
    updated_at: T0,
    ...extra,
  };
}

function device(userId: string, name: string, extra: Partial<ApiDevice> = {}): ApiDevice {
  return {
    id: `${userId}-${name}`,
    user_id: userId,
    name,
    description: null,
    public_key: 'k',
    preshared_key: null,
    server_public_key: 'k',
    ipv4: '10.3.2.2',
    ipv6: 'fd00::3:2:2',
    allowed_ips: [],
    dns: [],
    endpoint: null,
    mtu: null,
    persistent_keepalive: null,
    use_default_allowed_ips: true,
    use_default_dns: true,
    use_default_endpoint: true,
    use_default_mtu: true,
    use_default_persistent_keepalive: true,
    remote_ip: null,
    latest_handshake: null,
    rx_bytes: null,
    tx_bytes: null,
    inserted_at: T0,
    updated_at: T0,
    ...extra,
  } as ApiDevice;
}

let ruleId = 0;
function rule(
  userId: string | null,
  action: 'accept' | 'drop',
  destination: string,
  port_type: 'tcp' | 'udp' | null = null,
  port_range: string | null = null,
): ApiRule {
  ruleId++;
  return {
    id: `r${ruleId}`,
    action,
    destination,
    port_type,
    port_range,
    user_id: userId,
    inserted_at: T0,
    updated_at: T0,
  };
}

const RECORDED = { handshakes: true, signIns: true };

/** Whether a packet falls in a block. */
function inBlock(block: AccessBlock, address: string, protocol: 'tcp' | 'udp' | 'icmp', port: number): boolean {
  const parsed = parseIpAddress(address)!;
  if (parsed.family !== block.family) return false;
  const inside = block.addresses.some((cidr) => {
    const r = cidrRange(cidr)!;
    return r.start <= parsed.value && parsed.value <= r.end;
  });
  if (!inside) return false;
  if (block.protocol === 'all') return true;
  if (block.protocol === 'other') return protocol === 'icmp';
  if (block.protocol !== protocol) return false;
  return block.ports!.split(', ').some((range) => {
    const [lo, hi] = range.split('-').map(Number);
    return lo! <= port && port <= (hi ?? lo!);
  });
}

/** The verdict the report gives a packet from the user: own rules, then the global rules, then the default. */
function reportVerdict(
  report: ReviewReport,
  email: string,
  address: string,
  protocol: 'tcp' | 'udp' | 'icmp',
  port: number,
): string {
  const u = report.users.find((x) => x.email === email)!;
  for (const scope of [u.own_rules, report.everyone.rules]) {
    const hits = scope.filter((e) => e.blocks.some((b) => inBlock(b, address, protocol, port)));
    // Where each rule decides is disjoint from where the others of its scope do.
    expect(hits.length).toBeLessThanOrEqual(1);
    if (hits[0]) return hits[0].verdict.toUpperCase();
  }
  const family = parseIpAddress(address)!.family === 4 ? 'ipv4' : 'ipv6';
  expect(report.everyone.default_accept).toContain(family);
  return 'ACCEPT';
}

describe('review: what each user reaches', () => {
  it(`agrees with the reference evaluator on ${ROUNDS} random rule sets, packet by packet`, () => {
    const random = prng(36);
    const prefixes4 = [
      '10.0.0.0/8',
      '10.1.0.0/16',
      '10.1.2.0/24',
      '10.1.2.3',
      '10.1.2.128/25',
      '10.2.0.0/15',
      '0.0.0.0/0',
    ];
    const prefixes6 = ['fd00::/8', 'fd00:1::/32', 'fd00:1::5', '::/0'];
    const ports = ['22', '20 - 30', '1 - 1024', '443', '8000 - 9000', '1 - 65534'];
    for (let round = 0; round < ROUNDS; round++) {
      const users = [user('u1', 'alice@example.com'), user('u2', 'bob@example.com')];
      const rules: ApiRule[] = [];
      for (let i = int(random, 0, 8); i > 0; i--) {
        const ported = random() < 0.5;
        rules.push(
          rule(
            pick(random, ['u1', 'u2', null, null]),
            pick(random, ['accept', 'drop'] as const),
            random() < 0.8 ? pick(random, prefixes4) : pick(random, prefixes6),
            ported ? pick(random, ['tcp', 'udp'] as const) : null,
            ported ? pick(random, ports) : null,
          ),
        );
      }
      const live: LiveState = { users, devices: [device('u1', 'laptop'), device('u2', 'phone')], rules };
      const report = buildReview({ live, telemetry: RECORDED, now: NOW });
      const refRules: RefRule[] = rules.map((r) => ({ ...r }));
      for (let k = 0; k < 40; k++) {
        const address = pick(random, [
          '10.1.2.3',
          '10.1.2.200',
          '10.1.9.9',
          '10.3.0.1',
          '11.0.0.1',
          '10.2.0.5',
          'fd00:1::5',
          'fd00:2::1',
          '2001:db8::1',
        ]);
        const protocol = pick(random, ['tcp', 'udp', 'icmp'] as const);
        const port = pick(random, [1, 21, 22, 25, 443, 1024, 1025, 8080, 8500, 65534, 65535]);
        for (const [id, email] of [
          ['u1', 'alice@example.com'],
          ['u2', 'bob@example.com'],
        ] as const) {
          const expected = referenceVerdict(
            { ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' },
            { id, disabled: false },
            address,
            protocol,
            protocol === 'icmp' ? undefined : port,
            { rules: refRules, portRulesSupported: true, serverLocalAddrs: [] },
          );
          const got = reportVerdict(report, email, address, protocol, port);
          if (got !== expected) {
            throw new Error(
              `round ${round}: ${email} -> ${address} ${protocol} ${port}: reference ${expected}, report ${got}\n${JSON.stringify(rules)}`,
            );
          }
        }
      }
    }
  });

  it('lists the exact blocks where each own rule decides, then the global rules and the default', () => {
    const live: LiveState = {
      users: [user('u1', 'alice@example.com')],
      devices: [device('u1', 'laptop')],
      rules: [
        rule('u1', 'drop', '10.0.0.0/8'),
        rule('u1', 'accept', '10.0.0.0/8', 'tcp', '22'),
        rule(null, 'drop', '0.0.0.0/0'),
      ],
    };
    const report = buildReview({ live, telemetry: RECORDED, now: NOW });
    const alice = report.users[0]!;
    expect(alice.own_rules.map((e) => [e.verdict, e.rule.destination, e.blocks])).toEqual([
      ['accept', '10.0.0.0/8', [{ family: 4, addresses: ['10.0.0.0/8'], protocol: 'tcp', ports: '22' }]],
      [
        'drop',
        '10.0.0.0/8',
        [
          { family: 4, addresses: ['10.0.0.0/8'], protocol: 'tcp', ports: '0-21, 23-65535' },
          { family: 4, addresses: ['10.0.0.0/8'], protocol: 'udp', ports: '0-65535' },
          { family: 4, addresses: ['10.0.0.0/8'], protocol: 'other' },
        ],
      ],
    ]);
    expect(report.everyone.rules).toEqual([
      {
        verdict: 'drop',
        rule: expect.objectContaining({ destination: '0.0.0.0/0', user: null }),
        blocks: [{ family: 4, addresses: ['0.0.0.0/0'], protocol: 'all' }],
      },
    ]);
    // IPv4 is fully decided by the global drop; IPv6 is left to the default accept.
    expect(report.everyone.default_accept).toEqual(['ipv6']);
  });

  it('says why a user reaches nothing, and which families its devices have', () => {
    const live: LiveState = {
      users: [
        user('u1', 'alice@example.com'),
        user('u2', 'bob@example.com', { disabled_at: '2026-01-02T00:00:00.000000Z' }),
        user('u3', 'carol@example.com'),
      ],
      devices: [device('u1', 'laptop', { ipv6: null }), device('u2', 'phone')],
      rules: [],
    };
    const report = buildReview({ live, telemetry: RECORDED, now: NOW });
    const [alice, bob, carol] = report.users;
    expect(alice!.no_tunnel).toBeNull();
    expect(alice!.address_families).toEqual(['ipv4']);
    expect(bob!.no_tunnel).toMatch(/^disabled since 2026-01-02/);
    expect(carol!.no_tunnel).toMatch(/^no device/);
  });
});

describe('review: users, findings and telemetry', () => {
  const live: LiveState = {
    users: [
      user('u1', 'zed@example.com', { role: 'admin', last_signed_in_at: daysAgo(3) }),
      user('u2', 'alice@example.com', { last_signed_in_at: daysAgo(200) }),
      user('u3', 'bob@example.com'),
      user('u4', 'amy@example.com', { role: 'admin' }),
    ],
    devices: [
      device('u1', 'old', { latest_handshake: daysAgo(100), inserted_at: daysAgo(400) }),
      device('u1', 'fresh', { latest_handshake: daysAgo(10), inserted_at: daysAgo(400) }),
      device('u2', 'never-old', { inserted_at: daysAgo(120), ipv6: null }),
      device('u2', 'never-new', { inserted_at: daysAgo(5), ipv6: null }),
    ],
    rules: [
      rule('u2', 'accept', 'fd00:9::/32'),
      rule('u3', 'accept', '10.9.0.0/16', 'tcp', '443'),
      rule(null, 'accept', '10.0.0.0/8'),
      rule(null, 'accept', '10.1.0.0/16'),
      rule(null, 'drop', '10.5.0.0/16'),
    ],
  };

  it('puts admins first, then everyone by email', () => {
    const report = buildReview({ live, telemetry: RECORDED, now: NOW });
    expect(report.users.map((u) => `${u.role} ${u.email}`)).toEqual([
      'admin amy@example.com',
      'admin zed@example.com',
      'unprivileged alice@example.com',
      'unprivileged bob@example.com',
    ]);
    expect(report.counts).toEqual({ users: 4, admins: 2, devices: 4, rules: 5 });
  });

  it('lists stale devices, users never signed in and users without devices, with evidence and dates', () => {
    const report = buildReview({ live, telemetry: RECORDED, now: NOW, staleDays: 90 });
    expect(report.findings.stale_device.map((f) => [f.subject, f.evidence, f.date])).toEqual([
      ['zed@example.com/old', `last handshake ${daysAgo(100)} (100 days ago)`, daysAgo(100)],
      ['alice@example.com/never-old', `no handshake ever; created ${daysAgo(120)} (120 days ago)`, daysAgo(120)],
    ]);
    // A device younger than the period that never connected reads "never" but is not stale.
    const alice = report.users.find((u) => u.email === 'alice@example.com')!;
    expect(alice.devices.map((d) => [d.name, d.handshake, d.stale])).toEqual([
      ['never-new', 'never', false],
      ['never-old', 'never', true],
    ]);
    expect(report.findings.never_signed_in.map((f) => f.subject)).toEqual(['amy@example.com', 'bob@example.com']);
    expect(report.findings.never_signed_in[0]!.date).toBe(T0);
    expect(report.findings.no_devices.map((f) => f.subject)).toEqual(['amy@example.com', 'bob@example.com']);
    // A shorter period finds more.
    expect(buildReview({ live, telemetry: RECORDED, now: NOW, staleDays: 7 }).findings.stale_device).toHaveLength(3);
  });

  it('lists accept rules that grant nothing: no device in the family, no device at all, decided by an earlier rule', () => {
    const report = buildReview({ live, telemetry: RECORDED, now: NOW });
    expect(report.findings.accept_rule_grants_nothing.map((f) => [f.rule!.destination, f.evidence])).toEqual([
      ['fd00:9::/32', 'no device of alice@example.com has an IPv6 address (2 device(s))'],
      ['10.9.0.0/16', 'its user bob@example.com has no device'],
      [
        '10.1.0.0/16',
        'decides no packet: accept 10.0.0.0/8 (global) at id r' +
          `${Number(live.rules[2]!.id.slice(1))} matches every packet it matches first`,
      ],
    ]);
  });

  it('lists shadowed rules (a later stage fully matched earlier) as validate does', () => {
    const shadowLive: LiveState = {
      ...live,
      rules: [rule(null, 'accept', '10.0.0.0/8'), rule(null, 'drop', '10.7.0.0/16')],
    };
    const report = buildReview({ live: shadowLive, telemetry: RECORDED, now: NOW });
    expect(report.findings.shadowed_rule).toHaveLength(1);
    expect(report.findings.shadowed_rule[0]!.subject).toBe('drop 10.7.0.0/16 (global)');
    expect(report.findings.shadowed_rule[0]!.evidence).toMatch(
      /^never decides anything: accept 10\.0\.0\.0\/8 \(global\)/,
    );
  });

  it('reads null telemetry as "unknown" on a server that records none, and lists no finding from it', () => {
    const report = buildReview({ live, telemetry: { handshakes: false, signIns: false }, now: NOW });
    expect(report.telemetry).toEqual({ handshakes: 'not recorded', sign_ins: 'not recorded' });
    expect(report.findings.stale_device).toEqual([]);
    expect(report.findings.never_signed_in).toEqual([]);
    expect(report.users.find((u) => u.email === 'bob@example.com')!.signed_in).toBe('unknown');
    const markdown = formatReview(report, 'markdown');
    expect(markdown).toContain('unknown (this server records no handshakes');
    expect(markdown).toContain('unknown (this server records no sign-ins');
  });

  it('tells "never" from "unknown": any value recorded, or a server that is not netform’s own', () => {
    const blank: LiveState = { users: [user('u1', 'a@example.com')], devices: [device('u1', 'd')], rules: [] };
    expect(telemetrySupport(blank, true)).toEqual({ handshakes: false, signIns: false });
    expect(telemetrySupport(blank, false)).toEqual({ handshakes: true, signIns: true });
    const written: LiveState = {
      users: [user('u1', 'a@example.com', { last_signed_in_at: daysAgo(1) })],
      devices: [device('u1', 'd', { latest_handshake: daysAgo(1) }), device('u1', 'e')],
      rules: [],
    };
    expect(telemetrySupport(written, true)).toEqual({ handshakes: true, signIns: true });
  });
});

describe('review: writers', () => {
  const hostile: LiveState = {
    users: [
      user('u1', '=HYPERLINK("http://evil")@x.example', { role: 'admin' }),
      user('u2', '+1,"two"@example.com'),
      user('u3', '`x` | *y*@example.com'),
    ],
    devices: [device('u1', '-cmd|calc'), device('u2', '@SUM(A1)\nrow'), device('u3', 'a`b')],
    rules: [rule('u2', 'accept', '10.0.0.0/8', 'tcp', '22 - 23')],
  };
  const report = buildReview({ live: hostile, telemetry: RECORDED, now: NOW });

  it('CSV: quoted, parses back row by row, and no cell starts a formula', () => {
    const csv = formatReview(report, 'csv');
    const rows = parseCsv(csv);
    const header = rows[0]!;
    expect(header).toEqual([
      'section',
      'user',
      'role',
      'device',
      'verdict',
      'addresses',
      'protocol',
      'ports',
      'rule',
      'rule_at',
      'evidence',
      'date',
    ]);
    for (const row of rows) {
      expect(row).toHaveLength(header.length);
      for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    }
    const col = (name: string) => header.indexOf(name);
    const userRows = rows.filter((r) => r[0] === 'user');
    expect(userRows.map((r) => r[col('user')])).toEqual([
      `'=HYPERLINK("http://evil")@x.example`,
      `'+1,"two"@example.com`,
      '`x` | *y*@example.com',
    ]);
    const devices = rows.filter((r) => r[0] === 'device').map((r) => r[col('device')]);
    expect(devices).toEqual([`'-cmd|calc`, `'@SUM(A1)\\u000arow`, 'a`b']);
    const reach = rows.find((r) => r[0] === 'reach' && r[col('user')] === `'+1,"two"@example.com`)!;
    expect([reach[col('verdict')], reach[col('addresses')], reach[col('protocol')], reach[col('ports')]]).toEqual([
      'accept',
      '10.0.0.0/8',
      'tcp',
      '22-23',
    ]);
    expect(csvCell('-1')).toBe(`"'-1"`);
    expect(csvCell('a"b')).toBe('"a""b"');
  });

  it('markdown: every server value in a code span, no raw line break or markup from a name', () => {
    const markdown = formatReview(report, 'markdown');
    expect(markdown).toContain('### `` `x` | *y*@example.com ``: unprivileged');
    expect(markdown).toContain('`@SUM(A1)\\u000arow`');
    expect(markdown).not.toMatch(/^row/m);
    // Admins first.
    expect(markdown.indexOf('HYPERLINK')).toBeLessThan(markdown.indexOf('+1,'));
  });

  it('JSON: the report data as it is', () => {
    expect(JSON.parse(formatReview(report, 'json'))).toEqual(JSON.parse(JSON.stringify(report)));
  });
});
