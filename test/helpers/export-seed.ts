/**
 * A server seeded with every kind of field the desired state carries, for the export round trips:
 * admins and unprivileged users (odd emails included), devices on defaults and off them (custom
 * allowed_ips, dns, endpoint, mtu, keepalive, pinned IPv4/IPv6, flags off with no value), rules
 * global and per user, with and without ports, single-port ranges in both spellings, IPv6.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startTestServer, type TestServer } from './server.js';

export interface SeededServer {
  server: TestServer;
  dir: string;
  env: Record<string, string>;
  presharedKeys: string[];
  /** Ids of objects the tests change by hand. */
  ids: { workstation: string; aliceHttpsRule: string };
  expectNoSecrets(text: string): void;
  close(): Promise<void>;
}

const key = () => randomBytes(32).toString('base64');

export const SEEDED_EMAILS = [
  'admin@example.com',
  'alice@example.com',
  'carol@example.com',
  "o'brien+vpn@example.com",
  'Second.Admin@Example.com',
  'team/ops@example.com',
];
export const SEEDED_COUNTS = { users: 6, devices: 5, rules: 12 };

export async function startSeededServer(): Promise<SeededServer> {
  const [server, dir] = await Promise.all([startTestServer(), mkdtemp(join(tmpdir(), 'netform-export-'))]);
  const presharedKeys: string[] = [];
  const ids = { workstation: '', aliceHttpsRule: '' };
  const create = async (collection: string, wrapper: string, body: Record<string, unknown>): Promise<any> => {
    const answer = await server.api('POST', `/v0/${collection}`, { [wrapper]: body });
    if (answer.status !== 201)
      throw new Error(`seeding ${collection} ${JSON.stringify(body)}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.data;
  };
  try {
    await seed(create, presharedKeys, ids);
  } catch (error) {
    await Promise.all([server.stop(), rm(dir, { recursive: true, force: true })]);
    throw error;
  }

  return {
    server,
    dir,
    env: { NETFORM_URL: server.url, NETFORM_TOKEN: server.token },
    presharedKeys,
    ids,
    expectNoSecrets(text: string) {
      expect(text).not.toContain(server.token);
      for (const psk of presharedKeys) expect(text).not.toContain(psk);
      expect(text).not.toContain('a-long-enough-password');
    },
    close: async () => {
      await Promise.all([server.stop(), rm(dir, { recursive: true, force: true })]);
    },
  };
}

type Create = (collection: string, wrapper: string, body: Record<string, unknown>) => Promise<any>;

async function seed(create: Create, presharedKeys: string[], ids: SeededServer['ids']): Promise<void> {
  const admin2 = await create('users', 'user', { email: 'Second.Admin@Example.com', role: 'admin' });
  const alice = await create('users', 'user', {
    email: 'alice@example.com',
    role: 'unprivileged',
    password: 'a-long-enough-password',
    password_confirmation: 'a-long-enough-password',
  });
  await create('users', 'user', { email: "o'brien+vpn@example.com" });
  await create('users', 'user', { email: 'team/ops@example.com' });
  const carol = await create('users', 'user', { email: 'carol@example.com' });

  const devices = [
    { user_id: alice.id, name: 'laptop', public_key: key() },
    {
      user_id: alice.id,
      name: 'workstation',
      public_key: key(),
      preshared_key: key(),
      description: "Alice's desk — 2nd floor\nsecond line",
      allowed_ips: ['10.0.0.0/8', 'fd00:1::/64', '192.168.1.10'],
      dns: ['10.0.0.53', 'dns.corp.example.com', '2001:db8::53'],
      endpoint: 'vpn.example.com:51821',
      mtu: 1380,
      persistent_keepalive: 0,
      ipv4: '10.3.2.50',
      ipv6: 'fd00::3:2:50',
      use_default_allowed_ips: false,
      use_default_dns: false,
      use_default_endpoint: false,
      use_default_mtu: false,
      use_default_persistent_keepalive: false,
    },
    {
      user_id: alice.id,
      name: 'ipv6 endpoint',
      public_key: key(),
      endpoint: '[2001:db8::1]:51820',
      allowed_ips: ['::/0'],
      use_default_endpoint: false,
      use_default_allowed_ips: false,
    },
    {
      user_id: alice.id,
      name: 'no values',
      public_key: key(),
      use_default_allowed_ips: false,
      use_default_dns: false,
      use_default_mtu: false,
      use_default_persistent_keepalive: false,
    },
    {
      user_id: admin2.id,
      name: 'admin phone',
      public_key: key(),
      persistent_keepalive: 120,
      use_default_persistent_keepalive: false,
      dns: ['1.1.1.1'],
      use_default_dns: false,
    },
  ];
  for (const body of devices) {
    const device = await create('devices', 'device', body);
    presharedKeys.push(device.preshared_key);
    if (body.name === 'workstation') ids.workstation = device.id;
  }

  const rules = [
    { user_id: alice.id, action: 'accept', destination: '10.1.0.0/16', port_type: 'tcp', port_range: '443' },
    { user_id: alice.id, action: 'accept', destination: '10.1.0.0/16', port_type: 'udp', port_range: '500-4500' },
    { user_id: alice.id, action: 'accept', destination: '10.2.0.0/16', port_type: 'tcp', port_range: '80 - 80' },
    { user_id: alice.id, action: 'drop', destination: '10.1.2.3' },
    { user_id: alice.id, action: 'accept', destination: 'fd00:1::/64' },
    { user_id: carol.id, action: 'accept', destination: '10.5.0.0/16', port_type: 'tcp', port_range: '22' },
    { action: 'drop', destination: '10.9.0.0/16' },
    { action: 'accept', destination: '10.9.0.0/16', port_type: 'udp', port_range: '53' },
    { action: 'accept', destination: '10.20.0.0/16', port_type: 'tcp', port_range: '1000-2000' },
    { action: 'accept', destination: '10.20.0.0/16', port_type: 'tcp', port_range: '2001 - 3000' },
    { action: 'drop', destination: '2001:db8::/32' },
    { destination: '192.168.0.0/16' },
  ];
  for (const body of rules) {
    const rule = await create('rules', 'rule', body);
    if (body.destination === '10.1.0.0/16' && body.port_type === 'tcp') ids.aliceHttpsRule = rule.id;
  }
}
