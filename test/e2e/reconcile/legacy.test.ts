/**
 * Against a server that silently ignores device fields on update (upstream Firezone 0.7.26+,
 * emulated by `serve --legacy-device-updates`): apply notices the answer does not hold what was
 * asked and says so (a harmless probe finds out before the first device update); with
 * settings.device_updates: replace or --replace the change is planned and applied as delete-then-create,
 * keeping the device's keys and addresses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { describeResult, netform, serverState, wgKey, workspace, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
const KEY = wgKey();
// The server's admin is declared: an admin in no file keeps a plan pending (W3.5).
const yaml = (mtu: number, description: string, rules = '') => `version: 1
users:
  - { email: admin@example.com, role: admin }
  - email: alice@corp.test
    devices:
      - { name: laptop, public_key: "${KEY}", mtu: ${mtu}, description: "${description}" }
${rules}`;

beforeAll(async () => {
  server = await startTestServer({ legacyDeviceUpdates: true });
  ws = workspace();
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

describe('servers that ignore device updates', () => {
  it('settings.device_updates: replace converges with a plain apply -f --yes, and a second plan exits 0', async () => {
    const KEY2 = wgKey();
    const doc = (mtu: number) => `version: 1
settings: { device_updates: replace }
users:
  - { email: admin@example.com, role: admin }
  - email: bob@corp.test
    devices:
      - { name: phone, public_key: "${KEY2}", mtu: ${mtu} }
`;
    const file = ws.write('replace.yaml', doc(1380));
    expect((await netform(server, ['apply', '-f', file, '--yes'])).code).toBe(0);
    const before = (await serverState(server)).devices.find((d) => d.public_key === KEY2);
    ws.write('replace.yaml', doc(1420));
    const planned = await netform(server, ['plan', '-f', file]);
    expect(planned.stdout).toContain(
      '  -/+ device bob@corp.test/phone  (replaced (delete, then create with the same keys and addresses)',
    );
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const after = (await serverState(server)).devices.find((d) => d.public_key === KEY2);
    expect(after).toMatchObject({
      mtu: 1420,
      preshared_key: before.preshared_key,
      ipv4: before.ipv4,
      ipv6: before.ipv6,
    });
    const again = await netform(server, ['plan', '-f', file]);
    expect(again.code, describeResult(again)).toBe(0);
  });

  it('detects ignored fields, then replaces the device with --replace keeping keys and addresses', async () => {
    const file = ws.write('netform.yaml', yaml(1380, 'first'));
    expect((await netform(server, ['apply', '-f', file, '--yes'])).code).toBe(0);
    const original = (await serverState(server)).devices.find((d) => d.public_key === KEY);
    expect(original).toMatchObject({ mtu: 1380, description: 'first' });

    // With a rule added in the same edit: the device update is skipped, the rest proceeds.
    const withRule = yaml(1400, 'second', '    rules:\n      - { action: accept, destination: 10.7.0.0/16 }\n');
    ws.write('netform.yaml', withRule);
    const ignored = await netform(server, ['apply', '-f', file, '--yes']);
    expect(ignored.code, describeResult(ignored)).toBe(1);
    expect(ignored.stdout).toMatch(/^created rule accept 10\.7\.0\.0\/16 \(alice@corp\.test\) \(\d+\.\d s\)\n/m);
    expect(ignored.stdout).toContain(
      'not attempted: update device alice@corp.test/laptop: not attempted: this server ignores device fields other than name and description on update',
    );
    expect(ignored.stdout).toContain("add `device_updates: replace` to the files' settings");
    expect((await serverState(server)).devices.find((d) => d.public_key === KEY)).toMatchObject({
      id: original.id,
      mtu: 1380,
      description: 'first',
    });

    const planned = await netform(server, ['plan', '-f', file, '--replace']);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain(
      '  -/+ device alice@corp.test/laptop  (replaced (delete, then create with the same keys and addresses)',
    );
    expect(planned.stdout).toContain('      mtu: 1380 -> 1400\n');
    expect(planned.stdout).toContain('Plan: 0 to create, 0 to update, 1 to replace, 0 to delete.');

    const replaced = await netform(server, ['apply', '-f', file, '--yes', '--replace']);
    expect(replaced.code, describeResult(replaced)).toBe(0);
    const now = (await serverState(server)).devices.filter((d) => d.public_key === KEY);
    expect(now).toHaveLength(1);
    expect(now[0].id).not.toBe(original.id);
    expect(now[0]).toMatchObject({
      mtu: 1400,
      description: 'second',
      public_key: KEY,
      preshared_key: original.preshared_key,
      ipv4: original.ipv4,
      ipv6: original.ipv6,
    });
    const converged = await netform(server, ['plan', '-f', file]);
    expect(converged.code, describeResult(converged)).toBe(0);
  });
});
