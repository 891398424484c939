/**
 * W3.5 "plans say what happens to access", against a real server process: for a device moved to
 * another user, a rename with a new public key, a change of the server's device defaults and a
 * use_default flip, the plan says what apply then does, and reading the server back shows it.
 */
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import {
  create,
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

const HEAD = `version: 1
settings:
  prune: true
  manage: { users: ["*@corp.test"], rules: [] }
`;

async function planThenApply(server: TestServer, file: string): Promise<{ text: string; json: any }> {
  const text = await netform(server, ['plan', '-f', file]);
  expect(text.code, describeResult(text)).toBe(2);
  const json = await netform(server, ['plan', '-f', file, '--format', 'json']);
  expect(json.code, describeResult(json)).toBe(2);
  const applied = await netform(server, ['apply', '-f', file, '--yes']);
  expect(applied.code, describeResult(applied)).toBe(0);
  const again = await netform(server, ['plan', '-f', file]);
  expect(again.code, describeResult(again)).toBe(0);
  return { text: text.stdout, json: JSON.parse(json.stdout) };
}

describe('a device moved to another user', () => {
  let server: TestServer;
  let ws: Workspace;
  const key = wgKey();
  let before: any;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      const heidi = await create(s, 'users', { email: 'heidi@corp.test' });
      await create(s, 'users', { email: 'judy@corp.test' });
      before = await create(s, 'devices', { user_id: heidi.id, name: 'heidi-laptop', public_key: key });
    },
  );

  it('is one entry saying it is deleted and created for judy with the same key, preshared key and addresses, as apply then does', async () => {
    const file = ws.write(
      'moved.yaml',
      `${HEAD}users:
  - email: heidi@corp.test
  - email: judy@corp.test
    devices:
      - { name: old-laptop, public_key: "${key}" }
`,
    );
    const { text, json } = await planThenApply(server, file);
    expect(text).toContain(
      '  -/+ device judy@corp.test/old-laptop  (moved from heidi@corp.test/heidi-laptop (the live device that holds its public key): ' +
        'deleted, then created for judy@corp.test with the same public key, preshared key and addresses; its tunnel is down between the two requests)\n' +
        '      user: "heidi@corp.test" -> "judy@corp.test"\n' +
        '      name: "heidi-laptop" -> "old-laptop"\n',
    );
    expect(text).not.toContain('heidi@corp.test/heidi-laptop  (kept');
    expect(text).not.toContain('see the warnings');
    expect(json.changes.map((c: any) => `${c.action} ${c.id}`)).toEqual(['replace device:judy@corp.test/old-laptop']);
    expect(json.warnings).toEqual([]);
    expect(json.undeclared.filter((u: any) => u.kind === 'device')).toEqual([]);

    const state = await serverState(server);
    const moved = state.devices.filter((d) => d.public_key === key);
    expect(moved).toHaveLength(1);
    expect(state.users.find((u) => u.id === moved[0].user_id).email).toBe('judy@corp.test');
    expect(moved[0]).toMatchObject({
      name: 'old-laptop',
      preshared_key: before.preshared_key,
      ipv4: before.ipv4,
      ipv6: before.ipv6,
    });
  });
});

describe('a rename with a new public key', () => {
  let server: TestServer;
  let ws: Workspace;
  const oldKey = wgKey();
  const newKey = wgKey();
  let before: any;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      const carol = await create(s, 'users', { email: 'carol@corp.test' });
      before = await create(s, 'devices', { user_id: carol.id, name: 'phone', public_key: oldKey });
    },
  );

  it('says the key changes (the old key stops working), addresses and preshared key stay: one update', async () => {
    const file = ws.write(
      'renamed.yaml',
      `${HEAD}users:
  - email: carol@corp.test
    devices:
      - { name: pixel, renamed_from: phone, public_key: "${newKey}" }
`,
    );
    const { text } = await planThenApply(server, file);
    expect(text).toContain(
      '  ~ device carol@corp.test/pixel  (renamed from phone: one update of its name and public_key; its public key changes: ' +
        'a tunnel set up with the old public key stops working until its client uses the new one; addresses and preshared key stay)\n' +
        '      name: "phone" -> "pixel"\n' +
        `      public_key: "${oldKey}" -> "${newKey}"\n`,
    );
    expect(text).not.toContain('keys, addresses and preshared key stay');
    const [device] = (await serverState(server)).devices;
    expect(device).toMatchObject({
      id: before.id,
      name: 'pixel',
      public_key: newKey,
      preshared_key: before.preshared_key,
      ipv4: before.ipv4,
      ipv6: before.ipv6,
    });
  });
});

describe('effective values: the server defaults change, and a use_default flip', () => {
  let server: TestServer;
  let ws: Workspace;
  const keys = { ann: wgKey(), bob: wgKey(), bobOwn: wgKey() };
  let defaults: any;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      const ann = await create(s, 'users', { email: 'ann@corp.test' });
      const bob = await create(s, 'users', { email: 'bob@corp.test' });
      await create(s, 'devices', { user_id: ann.id, name: 'laptop', public_key: keys.ann });
      await create(s, 'devices', { user_id: bob.id, name: 'laptop', public_key: keys.bob });
      await create(s, 'devices', {
        user_id: bob.id,
        name: 'router',
        public_key: keys.bobOwn,
        use_default_mtu: false,
        mtu: 1420,
        use_default_allowed_ips: false,
        allowed_ips: ['10.0.0.0/8'],
      });
      defaults = (await s.api('GET', '/v0/configuration')).body.data;
    },
  );
  const users = (router: string) => `users:
  - email: ann@corp.test
    devices:
      - { name: laptop, public_key: "${keys.ann}" }
  - email: bob@corp.test
    devices:
      - { name: laptop, public_key: "${keys.bob}" }
      - { name: router, public_key: "${keys.bobOwn}", mtu: 1420, ${router} }
`;
  const list = (v: string[]) => v.join(', ');

  it('default_client_mtu and _dns: the plan names each device that follows them, before -> after, as read back after apply', async () => {
    expect(defaults.default_client_mtu).not.toBe(1380);
    const file = ws.write(
      'defaults.yaml',
      `${HEAD}configuration:
  default_client_mtu: 1380
  default_client_dns: [10.0.0.53]
${users('use_default_allowed_ips: false, allowed_ips: [10.0.0.0/8]')}`,
    );
    const { text, json } = await planThenApply(server, file);
    const oldDns = list(defaults.default_client_dns);
    expect(text).toContain(
      '      effective values that change (3 devices use the default):\n' +
        `        dns of ann@corp.test/laptop: ${oldDns} -> 10.0.0.53\n` +
        `        mtu of ann@corp.test/laptop: ${defaults.default_client_mtu} -> 1380\n` +
        `        dns of bob@corp.test/laptop: ${oldDns} -> 10.0.0.53\n` +
        `        mtu of bob@corp.test/laptop: ${defaults.default_client_mtu} -> 1380\n` +
        `        dns of bob@corp.test/router: ${oldDns} -> 10.0.0.53\n`,
    );
    expect(text).not.toContain('mtu of bob@corp.test/router');
    const said = json.changes.find((c: any) => c.kind === 'configuration').effective;
    expect(said).toHaveLength(5);
    // Read back: each device's effective value is the plan's "after".
    const devices = (await serverState(server)).devices;
    for (const value of said) {
      const [owner, name] = value.device.split('/');
      const user = (await serverState(server)).users.find((u) => u.email === owner);
      const device = devices.find((d) => d.user_id === user.id && d.name === name);
      expect(device[value.field], value.device).toEqual(value.after);
    }
    expect(devices.find((d) => d.name === 'router').mtu).toBe(1420);
  });

  it('use_default_allowed_ips false -> true shows the tunnel going to the default, and true -> false back', async () => {
    const defaultIps = (await server.api('GET', '/v0/configuration')).body.data.default_client_allowed_ips as string[];
    const on = ws.write('on.yaml', `${HEAD}${users('use_default_allowed_ips: true')}`);
    const flippedOn = await planThenApply(server, on);
    expect(flippedOn.text).toContain(
      '      use_default_allowed_ips: false -> true\n' +
        `      allowed_ips (effective): 10.0.0.0/8 -> ${list(defaultIps)}\n`,
    );
    let router = (await serverState(server)).devices.find((d) => d.name === 'router');
    expect(router).toMatchObject({ use_default_allowed_ips: true, allowed_ips: defaultIps });

    const off = ws.write('off.yaml', `${HEAD}${users('use_default_allowed_ips: false, allowed_ips: [10.0.0.0/8]')}`);
    const flippedOff = await planThenApply(server, off);
    expect(flippedOff.text).toContain(
      '      use_default_allowed_ips: true -> false\n' +
        `      allowed_ips: ${JSON.stringify(defaultIps)} -> ["10.0.0.0/8"]\n` +
        `      allowed_ips (effective): ${list(defaultIps)} -> 10.0.0.0/8\n`,
    );
    router = (await serverState(server)).devices.find((d) => d.name === 'router');
    expect(router).toMatchObject({ use_default_allowed_ips: false, allowed_ips: ['10.0.0.0/8'] });
  });
});
