/**
 * Against a server that silently ignores device fields on update (upstream Firezone 0.7.26+,
 * emulated by `serve --legacy-device-updates`): apply notices the answer does not hold what was
 * asked and says so; with --replace the change is planned and applied as delete-then-create,
 * keeping the device's keys and addresses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { describeResult, netform, serverState, wgKey, workspace, type Workspace } from './reconcile-helpers.js';

let server: TestServer;
let ws: Workspace;
const KEY = wgKey();
const yaml = (mtu: number, description: string) => `version: 1
users:
  - email: alice@corp.test
    devices:
      - { name: laptop, public_key: "${KEY}", mtu: ${mtu}, description: "${description}" }
`;

beforeAll(async () => {
  server = await startTestServer({ args: ['--legacy-device-updates'] });
  ws = workspace();
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

describe('servers that ignore device updates', () => {
  it('detects ignored fields, then replaces the device with --replace keeping keys and addresses', async () => {
    const file = ws.write('netform.yaml', yaml(1380, 'first'));
    expect((await netform(server, ['apply', '-f', file, '--yes'])).code).toBe(0);
    const original = (await serverState(server)).devices[0];
    expect(original).toMatchObject({ mtu: 1380, description: 'first' });

    ws.write('netform.yaml', yaml(1400, 'second'));
    const ignored = await netform(server, ['apply', '-f', file, '--yes']);
    expect(ignored.code, describeResult(ignored)).toBe(1);
    expect(ignored.stdout).toContain(
      'FAILED        ~ device alice@corp.test/laptop: the server ignored mtu on update and kept the old values (the behaviour of Firezone 0.7.26 and later); run plan/apply with --replace',
    );

    const planned = await netform(server, ['plan', '-f', file, '--replace']);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain('  -/+ device alice@corp.test/laptop  (replaced (delete, then create with the same keys and addresses)');
    expect(planned.stdout).toContain('      mtu: 1380 -> 1400\n');
    expect(planned.stdout).toContain('Plan: 0 to create, 0 to update, 1 to replace, 0 to delete.');

    const replaced = await netform(server, ['apply', '-f', file, '--yes', '--replace']);
    expect(replaced.code, describeResult(replaced)).toBe(0);
    const now = (await serverState(server)).devices;
    expect(now).toHaveLength(1);
    expect(now[0].id).not.toBe(original.id);
    expect(now[0]).toMatchObject({
      mtu: 1400, description: 'second', public_key: KEY, preshared_key: original.preshared_key, ipv4: original.ipv4, ipv6: original.ipv6,
    });
    const converged = await netform(server, ['plan', '-f', file]);
    expect(converged.code, describeResult(converged)).toBe(0);
  });
});
