/**
 * The round-trip guarantee without a server: live state → export → the YAML loader → the
 * planner against the same live state → no change. Over many generated states mixing every
 * combination of defaults, values, empty values, addresses and rule shapes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportDesiredState } from '../../../src/desired/export/index.js';
import { loadDesiredState } from '../../../src/desired/index.js';
import type { ApiDevice, ApiRule, ApiUser, LiveState } from '../../../src/model/index.js';
import { planChanges } from '../../../src/plan/index.js';
import { seeded } from '../../helpers/seeded.js';

const T = '2024-01-02T03:04:05.000000Z';

function liveState(seed: number): LiveState {
  const g = seeded(seed);
  const users: ApiUser[] = [];
  const devices: ApiDevice[] = [];
  const rules: ApiRule[] = [];
  const userCount = g.int(1, 6);
  for (let u = 0; u < userCount; u++) {
    const id = `u${u}`;
    const email = g.pick([
      `user${u}@example.com`,
      `User.${u}+vpn@Example.com`,
      `o'neil${u}@example.org`,
      `team/${u}@example.net`,
    ]);
    users.push({
      id,
      email,
      role: g.chance(0.3) ? 'admin' : 'unprivileged',
      last_signed_in_at: null,
      last_signed_in_method: null,
      disabled_at: null,
      inserted_at: T,
      updated_at: T,
    });
    const deviceCount = g.int(0, 3);
    for (let d = 0; d < deviceCount; d++) {
      const device: ApiDevice = {
        id: `d${u}-${d}`,
        user_id: id,
        name: g.pick([`device ${d}`, `laptop-${d}`, `Phone #${d}`, `ünïcode ${d}`]),
        description: g.pick([null, 'a desk', 'line one\nline two: with colon', '']),
        public_key: randomBytes(32).toString('base64'),
        preshared_key: randomBytes(32).toString('base64'),
        server_public_key: randomBytes(32).toString('base64'),
        ipv4: g.chance(0.9) ? `10.3.2.${10 + u * 4 + d}` : null,
        ipv6: g.chance(0.8) ? `fd00::3:2:${(10 + u * 4 + d).toString(16)}` : null,
        allowed_ips: ['0.0.0.0/0', '::/0'],
        dns: ['1.1.1.1', '1.0.0.1'],
        endpoint: 'vpn.example.com:51820',
        mtu: 1280,
        persistent_keepalive: 25,
        use_default_allowed_ips: true,
        use_default_dns: true,
        use_default_endpoint: true,
        use_default_mtu: true,
        use_default_persistent_keepalive: true,
        remote_ip: null,
        latest_handshake: null,
        rx_bytes: null,
        tx_bytes: null,
        inserted_at: T,
        updated_at: T,
      };
      if (g.chance(0.5))
        Object.assign(device, {
          use_default_allowed_ips: false,
          allowed_ips: g.pick([[], null, ['10.0.0.0/8'], ['10.0.0.0/8', 'fd00:1::/64', '192.168.1.10']]),
        });
      if (g.chance(0.5))
        Object.assign(device, {
          use_default_dns: false,
          dns: g.pick([[], null, ['10.0.0.53'], ['dns.example.com', '2001:db8::53']]),
        });
      if (g.chance(0.5))
        Object.assign(device, {
          use_default_endpoint: false,
          endpoint: g.pick(['vpn2.example.com', 'vpn.example.com:51821', '[2001:db8::1]:51820', '203.0.113.5:4500']),
        });
      if (g.chance(0.5)) Object.assign(device, { use_default_mtu: false, mtu: g.pick([null, 576, 1380, 1280, 1500]) });
      if (g.chance(0.5))
        Object.assign(device, {
          use_default_persistent_keepalive: false,
          persistent_keepalive: g.pick([null, 0, 25, 120]),
        });
      if (!devices.some((other) => other.user_id === id && other.name === device.name)) devices.push(device);
    }
  }
  const owners = [null, ...users.map((u) => u.id)];
  const ruleCount = g.int(0, 10);
  for (let r = 0; r < ruleCount; r++) {
    // Destinations apart from each other, so that no two generated rules overlap.
    const destination = g.pick([`10.${r}.0.0/16`, `10.${r}.1.2`, `fd00:${r + 1}::/64`, `2001:db8:${r}::1`]);
    const ports = g.pick<[ApiRule['port_type'], string] | null>([
      null,
      ['tcp', `${100 + r} - ${100 + r}`],
      ['udp', `${1000 + r * 10} - ${1005 + r * 10}`],
      ['tcp', `${200 + r}`],
    ]);
    rules.push({
      id: `r${r}`,
      action: g.pick(['accept', 'drop'] as const),
      destination,
      port_type: ports?.[0] ?? null,
      port_range: ports?.[1] ?? null,
      user_id: g.pick(owners),
      inserted_at: T,
      updated_at: T,
    });
  }
  return { users, devices, rules };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netform-export-unit-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function roundTrip(
  live: LiveState,
  options: { split: boolean; addresses: boolean; explicitDefaults: boolean },
  name: string,
) {
  const folder = join(dir, name);
  const { files } = exportDesiredState(live, { schemaRef: 'schema.json', ...options });
  await rm(folder, { recursive: true, force: true });
  await import('node:fs/promises').then((fs) => fs.mkdir(folder, { recursive: true }));
  for (const file of files) await writeFile(join(folder, file.name), file.content);
  const loaded = await loadDesiredState(folder, { env: {} });
  if (!loaded.ok)
    throw new Error(
      `${name}: the export does not load:\n${loaded.diagnostics.map((d) => `${d.file}:${d.line}: ${d.message}`).join('\n')}\n${files.map((f) => f.content).join('\n---\n')}`,
    );
  return planChanges(loaded.state, live, { server: 'http://test', createdAt: T });
}

describe('export round trip through the loader and the planner', () => {
  for (let seed = 1; seed <= 40; seed++) {
    it(`generated state ${seed} plans with no change`, async () => {
      const live = liveState(seed);
      const variant = { split: seed % 2 === 0, addresses: seed % 3 !== 0, explicitDefaults: seed % 4 < 2 };
      const plan = await roundTrip(live, variant, `seed-${seed}`);
      expect(plan.changes, JSON.stringify(plan.changes, null, 2)).toEqual([]);
    });
  }
});
