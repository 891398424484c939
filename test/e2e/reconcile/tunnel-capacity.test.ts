/**
 * settings.tunnel_networks against a real server whose IPv4 tunnel network is a /29 (8 addresses
 * less network, broadcast and the server's own: 5 for devices): plan counts what fits, refuses
 * what does not (nothing written), frees the addresses of devices the apply deletes, and refuses
 * pinned addresses outside the network or already held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setServerDefault } from '../../../server/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { describeResult, netform, serverState, wgKey, workspace, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;

beforeAll(async () => {
  server = await startInProcessServer();
  await setServerDefault({ dbPath: server.dbPath, key: 'ipv4_network', value: '10.20.30.0/29' });
  await setServerDefault({ dbPath: server.dbPath, key: 'ipv4_address', value: '10.20.30.1' });
  ws = workspace();
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

const keys = new Map<string, string>();
const keyOf = (name: string) => keys.get(name) ?? (keys.set(name, wgKey()), keys.get(name)!);
const doc = (users: string[], extra = '') => `version: 1
settings:
  server_addresses: [10.20.30.1, "fd00::3:2:1"]
  tunnel_networks: { ipv4: 10.20.30.0/29, ipv6: "fd00::3:2:0/120" }
users:
  - { email: admin@example.com, role: admin }
${users.map((u) => `  - { email: ${u}@corp.test, devices: [{ name: laptop, public_key: "${keyOf(u)}" }] }`).join('\n')}
${extra}`;
const names = (count: number, prefix = 'u') => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe('tunnel-network capacity', () => {
  it('a /29: the 6th new device is refused at plan time (exit 1, nothing written); 5 fit and are created', async () => {
    const file = ws.write('netform.yaml', doc(names(6)));
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(1);
    expect(plan.stderr).toContain(
      '1 ipv4 address missing: 6 new devices without a pinned ipv4, 5 free in 10.20.30.0/29 (settings.tunnel_networks.ipv4)',
    );
    const apply = await netform(server, ['apply', '-f', file, '--yes']);
    expect(apply.code, describeResult(apply)).toBe(1);
    const untouched = await serverState(server);
    expect(untouched.devices).toEqual([]);
    expect(untouched.users.map((u) => u.email)).toEqual(['admin@example.com']);

    ws.write('netform.yaml', doc(names(5)));
    const fits = await netform(server, ['apply', '-f', file, '--yes']);
    expect(fits.code, describeResult(fits)).toBe(0);
    const state = await serverState(server);
    expect(state.devices.map((d) => d.ipv4).sort()).toEqual([
      '10.20.30.2',
      '10.20.30.3',
      '10.20.30.4',
      '10.20.30.5',
      '10.20.30.6',
    ]);
  });

  it('a delete and a create in one apply reuse the address (apply deletes before it creates)', async () => {
    const before = await serverState(server);
    const u2 = before.users.find((u) => u.email === 'u2@corp.test');
    const freed = before.devices.find((d) => d.user_id === u2.id).ipv4;
    const users = [...names(5).filter((n) => n !== 'u2'), 'v0'];
    const file = ws.write('netform.yaml', doc(users, 'absent:\n  devices: [{ user: u2@corp.test, name: laptop }]\n'));
    // Without the deletion, the same new device does not fit.
    const full = ws.write('full.yaml', doc([...names(5), 'v0']));
    const refused = await netform(server, ['plan', '-f', full]);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toContain('1 ipv4 address missing');

    const apply = await netform(server, ['apply', '-f', file, '--yes']);
    expect(apply.code, describeResult(apply)).toBe(0);
    const after = await serverState(server);
    const v0 = after.users.find((u) => u.email === 'v0@corp.test');
    expect(after.devices.find((d) => d.user_id === v0.id).ipv4).toBe(freed);
  });

  it('a pinned address held by a live device, or outside the network, is a plan error naming it', async () => {
    const live = await serverState(server);
    const held = live.devices[0].ipv4;
    const pinned = (address: string) =>
      ws.write(
        'pinned.yaml',
        doc(
          [...names(5).filter((n) => n !== 'u2'), 'v0'],
          `  - { email: w0@corp.test, devices: [{ name: laptop, public_key: "${keyOf('w0')}", ipv4: "${address}" }] }\nabsent:\n  devices: [{ user: u2@corp.test, name: laptop }]\n`,
        ),
      );
    const collision = await netform(server, ['plan', '-f', pinned(held)]);
    expect(collision.code, describeResult(collision)).toBe(1);
    expect(collision.stderr).toMatch(new RegExp(`w0@corp\\.test/laptop.*${held.replace(/\./g, '\\.')}`));
    const outside = await netform(server, ['plan', '-f', pinned('10.99.0.2')]);
    expect(outside.code, describeResult(outside)).toBe(1);
    expect(outside.stderr).toContain(
      'device w0@corp.test/laptop pins ipv4 10.99.0.2, which is outside settings.tunnel_networks.ipv4 (10.20.30.0/29): the server would refuse it',
    );
    expect((await serverState(server)).devices.length).toBe(live.devices.length);
  });
});

describe('apply never leaves a user half made', () => {
  it('when every new device of a user without devices fails, its new accept rules wait; drops, and the rules of a user with a device, are created', async () => {
    // The network is full (5 devices); the files do not declare it, and the smallest block the
    // guess looks at is the server's default /24: plan cannot know, apply finds out.
    const users = [...names(5).filter((n) => n !== 'u2'), 'v0'];
    const file = ws.write(
      'half.yaml',
      `version: 1
users:
  - { email: admin@example.com, role: admin }
${users
  .filter((u) => u !== 'u0')
  .map((u) => `  - { email: ${u}@corp.test, devices: [{ name: laptop, public_key: "${keyOf(u)}" }] }`)
  .join('\n')}
  - email: u0@corp.test
    devices:
      - { name: laptop, public_key: "${keyOf('u0')}" }
      - { name: phone, public_key: "${keyOf('u0-phone')}" }
    rules:
      - { action: drop, destination: 10.50.0.0/16 }
      - { action: accept, destination: 10.60.0.0/16 }
  - email: carol@corp.test
    devices: [{ name: laptop, public_key: "${keyOf('carol')}" }]
    rules:
      - { action: accept, destination: 10.70.0.0/16 }
      - { action: drop, destination: 10.80.0.0/16 }
`,
    );
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(2);
    const apply = await netform(server, ['apply', '-f', file, '--yes']);
    expect(apply.code, describeResult(apply)).toBe(1);
    expect(apply.stdout).toMatch(/FAILED to create device u0@corp\.test\/phone .*is exhausted/);
    expect(apply.stdout).toMatch(/FAILED to create device carol@corp\.test\/laptop .*is exhausted/);
    expect(apply.stdout).toContain(
      'skipped: every new device of carol@corp.test failed and it has no other device, so its new accept rules wait (run apply again once a device is created)',
    );
    const state = await serverState(server);
    const idOf = (email: string) => state.users.find((u) => u.email === email).id;
    const rulesOf = (email: string) =>
      state.rules
        .filter((r) => r.user_id === idOf(email))
        .map((r) => `${r.action} ${r.destination}`)
        .sort();
    expect(rulesOf('u0@corp.test')).toEqual(['accept 10.60.0.0/16', 'drop 10.50.0.0/16']);
    expect(rulesOf('carol@corp.test')).toEqual(['drop 10.80.0.0/16']);
  });
});
