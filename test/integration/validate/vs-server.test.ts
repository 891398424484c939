/**
 * The offline checks and the running server cannot drift apart: every value below goes through
 * `loadDesiredState` (YAML file, schema, model checks; secret values as the planner reads them to
 * send them) and, as the request the planner would
 * send, to a real `netform serve` process over HTTP. A value accepted offline must be accepted
 * by the server; a value refused offline must get the server's 422 on the same field, with the
 * same message (offline messages may add a hint or context after it).
 *
 * The few rules that differ on purpose are listed at the end, each with its reason.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadDesiredState } from '../../../src/desired/index.js';
import { applyUseDefaultShorthand } from '../../../src/desired/shorthand.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

type Fields = Record<string, unknown>;
/** Field -> messages, for offline diagnostics and server 422 answers alike. */
type FieldMessages = Record<string, string[]>;

const OWNER = 'owner@example.com';
const freshKey = () => randomBytes(32).toString('base64');
let server: TestServer;
let dir: string;
let ownerId: string;
let caseNumber = 0;

beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'netform-validate-vs-server-'));
  const owner = await server.api('POST', '/v0/users', { user: { email: OWNER } }); // lives for the whole file
  expect(owner.status).toBe(201);
  ownerId = owner.body.data.id;
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The field a diagnostic is about: `users[0].devices[0].allowed_ips[1]` -> `allowed_ips`; an object itself -> `base`. */
function fieldOf(path: string | undefined): string {
  const last = (path ?? '').split('.').pop() ?? '';
  if (/^\w+\[\d+\]$/.test(last) && !/^(users|devices|rules)\[/.test(last)) return last.replace(/\[\d+\]$/, '');
  return /\[\d+\]$/.test(last) || last === '' ? 'base' : last;
}

/** Loads a YAML document through the whole offline front end. */
async function offline(document: object, env: Record<string, string> = {}): Promise<FieldMessages | null> {
  const file = join(dir, `case-${++caseNumber}.yaml`);
  writeFileSync(file, stringify({ version: 1, ...document }));
  const result = await loadDesiredState(file, { env });
  const fields: FieldMessages = {};
  const add = (field: string, message: string) => {
    const list = (fields[field] ??= []);
    if (!list.includes(message)) list.push(message);
  };
  if (!result.ok) {
    for (const d of result.diagnostics) add(fieldOf(d.path), d.message);
    return fields;
  }
  // Secrets are checked where they are read, as the planner reads them to send them (W3.6).
  for (const user of result.state.users) {
    const secrets = [
      ['password', user.password],
      ...user.devices.map((d) => ['preshared_key', d.preshared_key] as const),
    ] as const;
    for (const [field, secret] of secrets) {
      const read = secret?.read();
      if (read && 'invalid' in read) for (const message of read.invalid.split(', ')) add(field, message);
    }
  }
  return Object.keys(fields).length > 0 ? fields : null;
}

/** The same verdict on both sides: both accept, or both refuse the same fields with the same messages. */
function expectAgreement(label: string, offlineErrors: FieldMessages | null, status: number, body: any): void {
  if (offlineErrors === null) {
    expect(status, `${label}: accepted offline, server answered ${status} ${JSON.stringify(body)}`).toBe(201);
    return;
  }
  expect(status, `${label}: refused offline (${JSON.stringify(offlineErrors)}), server answered ${status}`).toBe(422);
  const serverErrors = body.errors as FieldMessages;
  expect(Object.keys(offlineErrors).sort(), `${label}: fields`).toEqual(Object.keys(serverErrors).sort());
  for (const [field, messages] of Object.entries(serverErrors)) {
    const ours = offlineErrors[field]!;
    expect(ours.length, `${label}: ${field}: ${JSON.stringify(ours)} vs ${JSON.stringify(messages)}`).toBe(
      messages.length,
    );
    for (const message of messages) {
      expect(
        ours.some((m) => m.startsWith(message)),
        `${label}: ${field}: server says "${message}", offline ${JSON.stringify(ours)}`,
      ).toBe(true);
    }
  }
}

/** Objects a test created, deleted after it whatever its outcome, so that no test sees another's. */
const created: string[] = [];

/** POST /v0/<collection>, remembering what was created for afterEach. */
async function post(collection: 'users' | 'devices' | 'rules', body: object) {
  const response = await server.api('POST', `/v0/${collection}`, body);
  if (response.status === 201) created.push(`/v0/${collection}/${response.body.data.id}`);
  return response;
}

afterEach(async () => {
  // Newest first: rules and devices before the users they belong to (a user's delete cascades anyway).
  for (const path of created.splice(0).reverse()) {
    const { status } = await server.api('DELETE', path);
    expect([204, 404]).toContain(status);
  }
});

// ---------------------------------------------------------------------------------------------
// Users

const longLocal = (length: number) => `${'a'.repeat(length - '@example.com'.length)}@example.com`;
const userCases: [string, Fields][] = [
  ['plain email', { email: 'plain-user@example.com' }],
  ['shortest email', { email: 'a@b' }],
  ['email with spaces around', { email: '  spaced@example.com  ' }],
  ['email of 255 characters', { email: longLocal(255) }],
  ['email of 256 characters', { email: longLocal(256) }],
  ['email without @', { email: 'plain' }],
  ['email with two @', { email: 'x@y@example.com' }],
  ['email with a space inside', { email: 'a b@example.com' }],
  ['email with nothing before @', { email: '@example.com' }],
  ['admin role', { email: 'role-admin@example.com', role: 'admin' }],
  ['unprivileged role', { email: 'role-unprivileged@example.com', role: 'unprivileged' }],
  ['password of 11 characters', { email: 'pw11@example.com', password: 'p'.repeat(11) }],
  ['password of 12 characters', { email: 'pw12@example.com', password: 'p'.repeat(12) }],
  ['password of 64 characters', { email: 'pw64@example.com', password: 'p'.repeat(64) }],
  ['password of 65 characters', { email: 'pw65@example.com', password: 'p'.repeat(65) }],
  ['password of 12 characters outside ASCII', { email: 'pw-wide@example.com', password: 'é'.repeat(12) }],
];

describe('users', () => {
  it.each(userCases)('%s', async (label, user) => {
    const { password, ...rest } = user;
    const declared = password === undefined ? rest : { ...rest, password: { env: 'CASE_PASSWORD' } };
    const env: Record<string, string> = password === undefined ? {} : { CASE_PASSWORD: String(password) };
    const offlineErrors = await offline({ users: [declared] }, env);
    const body = password === undefined ? user : { ...user, password_confirmation: password };
    const { status, body: answer } = await post('users', { user: body });
    expectAgreement(label, offlineErrors, status, answer);
  });

  it('emails are unique case-insensitively', async () => {
    const offlineErrors = await offline({ users: [{ email: 'twice@example.com' }, { email: 'TWICE@example.com' }] });
    const first = await post('users', { user: { email: 'twice@example.com' } });
    expect(first.status).toBe(201);
    const second = await post('users', { user: { email: 'TWICE@example.com' } });
    expectAgreement('second email', offlineErrors, second.status, second.body);
  });
});

// ---------------------------------------------------------------------------------------------
// Devices

const deviceCases: [string, Fields][] = [
  ['mtu 575', { mtu: 575 }],
  ['mtu 576', { mtu: 576 }],
  ['mtu 1500', { mtu: 1500 }],
  ['mtu 1501', { mtu: 1501 }],
  ['keepalive -1', { persistent_keepalive: -1 }],
  ['keepalive 0', { persistent_keepalive: 0 }],
  ['keepalive 120', { persistent_keepalive: 120 }],
  ['keepalive 121', { persistent_keepalive: 121 }],
  ['public key of 43 characters', { public_key: freshKey().slice(0, 43) }],
  ['public key of 45 characters', { public_key: `${freshKey()}A` }],
  ['public key with bits after the 32 bytes', { public_key: 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1B=' }],
  ['public key of 33 bytes without padding', { public_key: 'A'.repeat(44) }],
  ['public key with characters outside base64', { public_key: `${freshKey().slice(0, 42)}-=` }],
  ['preshared key', { preshared_key: freshKey() }],
  ['preshared key too short', { preshared_key: freshKey().slice(0, 40) }],
  ['name of 255 characters', { name: 'n'.repeat(255) }],
  ['name of 256 characters', { name: 'n'.repeat(256) }],
  ['description of 2048 characters', { description: 'd'.repeat(2048) }],
  ['description of 2049 characters', { description: 'd'.repeat(2049) }],
  ['allowed_ips block', { allowed_ips: ['10.0.0.0/8'] }],
  ['allowed_ips address', { allowed_ips: ['10.0.0.1'] }],
  ['allowed_ips /0 and /32', { allowed_ips: ['0.0.0.0/0', '10.1.2.3/32'] }],
  ['allowed_ips IPv6 /0 and /128', { allowed_ips: ['::/0', 'fd00::1/128'] }],
  ['allowed_ips prefix 33', { allowed_ips: ['10.0.0.0/33'] }],
  ['allowed_ips IPv6 prefix 129', { allowed_ips: ['fd00::/129'] }],
  ['allowed_ips three-part address', { allowed_ips: ['10.0.1/24'] }],
  ['allowed_ips duplicates', { allowed_ips: ['10.0.0.0/8', '10.0.0.0/8'] }],
  ['allowed_ips empty', { allowed_ips: [] }],
  ['dns addresses and host name', { dns: ['1.1.1.1', '2606:4700:4700::1111', 'dns.example.com'] }],
  ['dns with a port', { dns: ['1.1.1.1:53'] }],
  ['dns all digits', { dns: ['1.2.3.4.5'] }],
  ['dns duplicates', { dns: ['1.1.1.1', '1.1.1.1'] }],
  ['endpoint host', { endpoint: 'vpn.example.com' }],
  ['endpoint host:port', { endpoint: 'vpn.example.com:51820' }],
  ['endpoint IPv4:65535', { endpoint: '192.0.2.1:65535' }],
  ['endpoint IPv4:0', { endpoint: '192.0.2.1:0' }],
  ['endpoint IPv4:65536', { endpoint: '192.0.2.1:65536' }],
  ['endpoint bare IPv6', { endpoint: '2001:db8::1' }],
  ['endpoint [IPv6]:port', { endpoint: '[2001:db8::1]:51820' }],
  ['endpoint with a bad host', { endpoint: 'bad host!' }],
  ['use_default_mtu true with an mtu', { use_default_mtu: true, mtu: 1400 }],
  ['use_default_dns true with dns', { use_default_dns: true, dns: ['1.1.1.1'] }],
  ['use_default_endpoint false without endpoint', { use_default_endpoint: false }],
  ['use_default flags alone', { use_default_allowed_ips: true, use_default_mtu: false }],
  ['ipv4 inside the tunnel network', { ipv4: '10.3.2.20' }],
  ['ipv6 inside the tunnel network', { ipv6: 'fd00::3:2:20' }],
  ['ipv4 given an IPv6 address', { ipv4: 'fd00::3:2:21' }],
  ['ipv6 given an IPv4 address', { ipv6: '10.3.2.21' }],
  ['ipv4 not an address', { ipv4: '10.3.2' }],
];

/** The YAML declaration and the create body the planner sends for one device. */
function deviceDeclaration(fields: Fields): { declared: Fields; body: Fields; env: Record<string, string> } {
  const { preshared_key: psk, name, ...rest } = fields;
  const base = { name: name ?? `device-${caseNumber + 1}`, public_key: freshKey(), ...rest };
  const declared = psk === undefined ? base : { ...base, preshared_key: { env: 'CASE_PSK' } };
  const env: Record<string, string> = psk === undefined ? {} : { CASE_PSK: String(psk) };
  const { name: deviceName, ...deviceFields } = base;
  const body = {
    user_id: ownerId,
    name: deviceName,
    ...applyUseDefaultShorthand(deviceFields),
    ...(psk === undefined ? {} : { preshared_key: psk }),
  };
  return { declared, body, env };
}

describe('devices', () => {
  it.each(deviceCases)('%s', async (label, fields) => {
    const { declared, body, env } = deviceDeclaration(fields);
    const offlineErrors = await offline({ users: [{ email: OWNER, devices: [declared] }] }, env);
    const { status, body: answer } = await post('devices', { device: body });
    expectAgreement(label, offlineErrors, status, answer);
  });

  it('public keys are unique across devices; names unique per user', async () => {
    const key = freshKey();
    const keyErrors = await offline({
      users: [
        {
          email: OWNER,
          devices: [
            { name: 'k1', public_key: key },
            { name: 'k2', public_key: key },
          ],
        },
      ],
    });
    const nameErrors = await offline({
      users: [
        {
          email: OWNER,
          devices: [
            { name: 'k1', public_key: key },
            { name: 'k1', public_key: freshKey() },
          ],
        },
      ],
    });
    const first = await post('devices', { device: { user_id: ownerId, name: 'k1', public_key: key } });
    expect(first.status).toBe(201);
    const sameKey = await post('devices', { device: { user_id: ownerId, name: 'k2', public_key: key } });
    expectAgreement('same public key', keyErrors, sameKey.status, sameKey.body);
    const sameName = await post('devices', { device: { user_id: ownerId, name: 'k1', public_key: freshKey() } });
    expectAgreement('same name', nameErrors, sameName.status, sameName.body);
  });

  it('pinned addresses are unique', async () => {
    const declared = [
      { name: 'a1', public_key: freshKey(), ipv4: '10.3.2.40' },
      { name: 'a2', public_key: freshKey(), ipv4: '10.3.2.40' },
    ];
    const offlineErrors = await offline({ users: [{ email: OWNER, devices: declared }] });
    const first = await post('devices', { device: { user_id: ownerId, ...declared[0] } });
    expect(first.status).toBe(201);
    const second = await post('devices', { device: { user_id: ownerId, ...declared[1] } });
    expectAgreement('same ipv4', offlineErrors, second.status, second.body);
  });

  it("more devices than the server's default limit of 10 per user", async () => {
    const email = 'many-devices@example.com';
    const declared = Array.from({ length: 11 }, (_, i) => ({ name: `d${i + 1}`, public_key: freshKey() }));
    const offlineErrors = await offline({ users: [{ email, devices: declared }] });
    const owner = await post('users', { user: { email } });
    expect(owner.status).toBe(201);
    let last = { status: 0, body: null as any };
    for (const device of declared) {
      last = await post('devices', { device: { user_id: owner.body.data.id, ...device } });
      if (device !== declared.at(-1)) expect(last.status).toBe(201);
    }
    expectAgreement('eleventh device', offlineErrors, last.status, last.body);
  });
});

// ---------------------------------------------------------------------------------------------
// Rules

const ruleCases: [string, Fields][] = [
  ['IPv4 block', { action: 'drop', destination: '10.0.0.0/8' }],
  ['IPv4 address', { action: 'accept', destination: '10.0.0.1' }],
  ['IPv4 /0', { action: 'drop', destination: '0.0.0.0/0' }],
  ['host bits kept', { action: 'drop', destination: '10.1.2.3/16' }],
  ['IPv6 block', { action: 'drop', destination: 'fd00::/64' }],
  ['IPv6 /128', { action: 'drop', destination: 'fd00::1/128' }],
  ['prefix 33', { action: 'drop', destination: '10.0.0.0/33' }],
  ['IPv6 prefix 129', { action: 'drop', destination: 'fd00::/129' }],
  ['octet over 255', { action: 'drop', destination: '10.0.0.300' }],
  ['zone id', { action: 'drop', destination: 'fe80::1%eth0' }],
  ['single port', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '80' }],
  ['port range', { action: 'accept', destination: '10.0.0.0/8', port_type: 'udp', port_range: '80-443' }],
  ['spaced port range', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '80 - 443' }],
  ['port 1 to 65534', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '1-65534' }],
  // Firezone 0.7.36 refuses a range reaching 65535 (its check excludes the bound); both refuse it.
  ['port 1 to 65535', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '1-65535' }],
  ['port 65535', { action: 'accept', destination: '10.0.0.0/8', port_type: 'udp', port_range: '65535' }],
  ['port 0', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '0' }],
  ['port 65536', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '65536' }],
  ['reversed range', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '443-80' }],
  ['open range', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '80-' }],
  ['port name', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: 'http' }],
  ['port_type without port_range', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp' }],
  ['port_range without port_type', { action: 'accept', destination: '10.0.0.0/8', port_range: '22' }],
];

describe('rules', () => {
  it.each(ruleCases)('global: %s', async (label, rule) => {
    const offlineErrors = await offline({ rules: [rule] });
    const { status, body } = await post('rules', { rule });
    expectAgreement(label, offlineErrors, status, body);
  });

  it.each(ruleCases.slice(0, 3))("a user's: %s", async (label, rule) => {
    const offlineErrors = await offline({ users: [{ email: OWNER, rules: [rule] }] });
    const { status, body } = await post('rules', { rule: { ...rule, user_id: ownerId } });
    expectAgreement(label, offlineErrors, status, body);
  });

  const pairs: [string, Fields, Fields][] = [
    ['same block', { action: 'drop', destination: '10.5.0.0/16' }, { action: 'drop', destination: '10.5.0.0/16' }],
    ['nested blocks', { action: 'drop', destination: '10.5.0.0/16' }, { action: 'drop', destination: '10.5.7.7' }],
    ['disjoint blocks', { action: 'drop', destination: '10.5.0.0/16' }, { action: 'drop', destination: '10.6.0.0/16' }],
    [
      'accept and drop',
      { action: 'drop', destination: '10.5.0.0/16' },
      { action: 'accept', destination: '10.5.0.0/16' },
    ],
    [
      'intersecting tcp ranges',
      { action: 'accept', destination: '10.5.0.0/16', port_type: 'tcp', port_range: '80-443' },
      { action: 'accept', destination: '10.5.1.0/24', port_type: 'tcp', port_range: '443' },
    ],
    [
      'disjoint tcp ranges',
      { action: 'accept', destination: '10.5.0.0/16', port_type: 'tcp', port_range: '80-442' },
      { action: 'accept', destination: '10.5.1.0/24', port_type: 'tcp', port_range: '443' },
    ],
    [
      'tcp and udp',
      { action: 'accept', destination: '10.5.0.0/16', port_type: 'tcp', port_range: '53' },
      { action: 'accept', destination: '10.5.0.0/16', port_type: 'udp', port_range: '53' },
    ],
    [
      'ports and no ports',
      { action: 'accept', destination: '10.5.0.0/16' },
      { action: 'accept', destination: '10.5.0.0/16', port_type: 'tcp', port_range: '22' },
    ],
    ['IPv4 and IPv6', { action: 'drop', destination: '0.0.0.0/0' }, { action: 'drop', destination: '::/0' }],
  ];

  it.each(pairs)('two global rules, %s', async (label, first, second) => {
    const offlineErrors = await offline({ rules: [first, second] });
    const a = await post('rules', { rule: first });
    expect(a.status).toBe(201);
    const b = await post('rules', { rule: second });
    expectAgreement(label, offlineErrors, b.status, b.body);
  });

  it("a global rule and a user's rule, and two users' rules, never overlap; one user's do", async () => {
    const rule = { action: 'drop', destination: '10.7.0.0/16' };
    const other = await post('users', { user: { email: 'other-owner@example.com' } });
    const declared = {
      users: [
        { email: OWNER, rules: [rule] },
        { email: 'Other-Owner@example.com', rules: [rule] },
      ],
      rules: [rule],
    };
    expect(await offline(declared)).toBeNull();
    const rulesMade = [
      await post('rules', { rule }),
      await post('rules', { rule: { ...rule, user_id: ownerId } }),
      await post('rules', { rule: { ...rule, user_id: other.body.data.id } }),
    ];
    expect(rulesMade.map((r) => r.status)).toEqual([201, 201, 201]);
    const offlineErrors = await offline({
      users: [{ email: OWNER, rules: [rule, { ...rule, destination: '10.7.1.0/24' }] }],
    });
    const again = await post('rules', { rule: { ...rule, destination: '10.7.1.0/24', user_id: ownerId } });
    expectAgreement("one user's overlapping rules", offlineErrors, again.status, again.body);
  });
});

// ---------------------------------------------------------------------------------------------
// configuration: the same values offline (`configuration:`) and through PATCH /v0/configuration

const configurationCases: [string, Fields][] = [
  [
    'every managed field valid',
    {
      default_client_allowed_ips: ['10.0.0.0/8', 'fd00::/8'],
      default_client_dns: ['10.0.0.53', 'dns.example.com'],
      default_client_endpoint: '[2001:db8::1]:51820',
      default_client_mtu: 1420,
      default_client_persistent_keepalive: 0,
      allow_unprivileged_device_management: false,
      allow_unprivileged_device_configuration: true,
      local_auth_enabled: true,
      disable_vpn_on_oidc_error: false,
      vpn_session_duration: 86400,
    },
  ],
  ['an empty DNS list', { default_client_dns: [] }],
  ['mtu under and keepalive over their bounds', { default_client_mtu: 575, default_client_persistent_keepalive: 121 }],
  ['mtu over its bound', { default_client_mtu: 1501 }],
  ['vpn_session_duration below 0', { vpn_session_duration: -1 }],
  ['an allowed_ips entry that is no address', { default_client_allowed_ips: ['10.0.0.0/33'] }],
  ['duplicate DNS servers', { default_client_dns: ['1.1.1.1', '1.1.1.1'] }],
  ['a DNS server with a port', { default_client_dns: ['1.1.1.1:53'] }],
  ['an endpoint with a bad port', { default_client_endpoint: 'vpn.example.com:99999' }],
];

describe('configuration', () => {
  it.each(configurationCases)('%s', async (label, fields) => {
    const offlineErrors = await offline({ configuration: fields });
    const res = await server.api('PATCH', '/v0/configuration', { configuration: fields });
    expectAgreement(label, offlineErrors, res.status === 200 ? 201 : res.status, res.body);
  });
});

// ---------------------------------------------------------------------------------------------
// Where the two sides differ on purpose

describe('documented differences', () => {
  it('validate is stricter: a device needs a name (its natural key); the server would generate one', async () => {
    expect(await offline({ users: [{ email: OWNER, devices: [{ name: '  ', public_key: freshKey() }] }] })).toEqual({
      name: ["can't be blank"],
    });
    const { status } = await post('devices', { device: { user_id: ownerId, name: '  ', public_key: freshKey() } });
    expect(status).toBe(201);
  });

  it('validate is stricter: a rule states its action; the server would default to drop', async () => {
    expect(await offline({ rules: [{ destination: '10.8.0.0/16' }] })).toEqual({ base: ['`action` is required'] });
    const { status, body } = await post('rules', { rule: { destination: '10.8.0.0/16' } });
    expect(status).toBe(201);
    expect(body.data.action).toBe('drop');
  });

  it('only the server knows its tunnel network: an address outside it passes offline', async () => {
    expect(
      await offline({
        users: [{ email: OWNER, devices: [{ name: 'outside', public_key: freshKey(), ipv4: '192.168.50.5' }] }],
      }),
    ).toBeNull();
    const { status, body } = await post('devices', {
      device: { user_id: ownerId, name: 'outside', public_key: freshKey(), ipv4: '192.168.50.5' },
    });
    expect(status).toBe(422);
    expect(body.errors).toEqual({ ipv4: ['is not in the CIDR 10.3.2.0/24'] });
  });

  it('only the server knows its live objects: a public key taken by an undeclared device passes offline', async () => {
    const key = freshKey();
    const live = await post('devices', { device: { user_id: ownerId, name: 'live-only', public_key: key } });
    expect(live.status).toBe(201);
    expect(
      await offline({ users: [{ email: 'someone-else@example.com', devices: [{ name: 'laptop', public_key: key }] }] }),
    ).toBeNull();
  });
});
