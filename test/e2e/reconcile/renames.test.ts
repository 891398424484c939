/**
 * Renames keep the object (id, keys, addresses, preshared key): a device renamed in the files
 * (found by its public key, or by `renamed_from`) is one PATCH of its name; a user with
 * `renamed_from` is one PATCH of its email and keeps its devices. Requests are counted through a
 * recording proxy. On our server in both modes (names are updatable on 0.7.26+ too).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startRecordingProxy, type RecordingProxy } from '../../helpers/recording-proxy.js';
import {
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

for (const mode of [[], ['--legacy-device-updates']]) {
  describe(`renames (server ${mode.join(' ') || 'default'})`, () => {
    let server: TestServer;
    let ws: Workspace;
    let proxy: RecordingProxy;
    useServerAndWorkspace((started) => ({ server, ws } = started), undefined, { legacyDeviceUpdates: mode.length > 0 });
    beforeEach(async () => {
      proxy = await startRecordingProxy(server.url);
    });
    afterEach(async () => {
      await proxy.close();
    });
    const viaProxy = (args: string[]) => netform(server, args, { NETFORM_URL: proxy.url });
    const writes = () => proxy.requests.filter((r) => !r.startsWith('GET '));
    /** One user with one device; each test has its own user and key. */
    const doc = (email: string, device: string, key: string, extra = '', userExtra = '') => `version: 1
settings: { prune: true, manage: { users: ["*@rename.test"] } }
users:
  - email: ${email}${userExtra}
    devices:
      - { name: ${device}, public_key: "${key}"${extra} }
`;
    const deviceOf = async (email: string) => {
      const state = await serverState(server);
      const user = state.users.find((u) => u.email === email);
      return user ? state.devices.filter((d) => d.user_id === user.id) : [];
    };

    it('a device renamed in the files (same public key) is one PATCH of its name; id, psk and addresses stay', async () => {
      const key = wgKey();
      const file = ws.write('dev.yaml', doc('dev@rename.test', 'laptop', key));
      expect((await viaProxy(['apply', '-f', file, '--yes'])).code).toBe(0);
      const [before] = await deviceOf('dev@rename.test');
      ws.write('dev.yaml', doc('dev@rename.test', 'work-laptop', key));
      const planned = await viaProxy(['plan', '-f', file]);
      expect(planned.code, describeResult(planned)).toBe(2);
      expect(planned.stdout).toContain(
        '  ~ device dev@rename.test/work-laptop  (renamed from laptop: one update of its name; keys, addresses and preshared key stay)\n      name: "laptop" -> "work-laptop"\n',
      );
      expect(planned.stdout).toContain('Plan: 0 to create, 1 to update, 0 to replace, 0 to delete.');
      proxy.requests.length = 0;
      const applied = await viaProxy(['apply', '-f', file, '--yes']);
      expect(applied.code, describeResult(applied)).toBe(0);
      expect(writes()).toEqual([`PATCH /v0/devices/${before.id}`]);
      const after = await deviceOf('dev@rename.test');
      expect(after).toHaveLength(1);
      expect(after[0]).toMatchObject({
        id: before.id,
        name: 'work-laptop',
        preshared_key: before.preshared_key,
        ipv4: before.ipv4,
        ipv6: before.ipv6,
      });
      expect((await viaProxy(['plan', '-f', file])).code).toBe(0);
    });

    it('renamed_from on a device renames it; kept in the file, it is a no-op afterwards', async () => {
      const key = wgKey();
      const file = ws.write('moved.yaml', doc('moved@rename.test', 'phone', key));
      expect((await viaProxy(['apply', '-f', file, '--yes'])).code).toBe(0);
      const [before] = await deviceOf('moved@rename.test');
      ws.write('moved.yaml', doc('moved@rename.test', 'pixel', key, ', renamed_from: phone'));
      const applied = await viaProxy(['apply', '-f', file, '--yes']);
      expect(applied.code, describeResult(applied)).toBe(0);
      expect((await deviceOf('moved@rename.test'))[0]).toMatchObject({
        id: before.id,
        name: 'pixel',
        preshared_key: before.preshared_key,
      });
      const again = await viaProxy(['plan', '-f', file]);
      expect(again.code, describeResult(again)).toBe(0);
    });

    it('renamed_from on a user is one PATCH of its email; its devices keep their ids', async () => {
      const key = wgKey();
      const file = ws.write('user.yaml', doc('oldname@rename.test', 'laptop', key));
      expect((await viaProxy(['apply', '-f', file, '--yes'])).code).toBe(0);
      const [device] = await deviceOf('oldname@rename.test');
      const userId = (await serverState(server)).users.find((u) => u.email === 'oldname@rename.test').id;
      ws.write('user.yaml', doc('newname@rename.test', 'laptop', key, '', '\n    renamed_from: oldname@rename.test'));
      const planned = await viaProxy(['plan', '-f', file]);
      expect(planned.stdout).toContain(
        '  ~ user newname@rename.test  (renamed from oldname@rename.test (renamed_from): its devices and rules stay)\n      email: "oldname@rename.test" -> "newname@rename.test"\n',
      );
      expect(planned.stdout).toContain('Plan: 0 to create, 1 to update, 0 to replace, 0 to delete.');
      proxy.requests.length = 0;
      const applied = await viaProxy(['apply', '-f', file, '--yes']);
      expect(applied.code, describeResult(applied)).toBe(0);
      expect(writes()).toEqual([`PATCH /v0/users/${userId}`]);
      expect(await deviceOf('newname@rename.test')).toMatchObject([
        { id: device.id, preshared_key: device.preshared_key },
      ]);
      expect((await viaProxy(['plan', '-f', file])).code).toBe(0);
    });

    it('renamed_from naming a user that exists beside the new one is an error naming the file and line; nothing changes', async () => {
      const file = ws.write(
        'both.yaml',
        `version: 1
users:
  - email: both-new@rename.test
  - email: both-old@rename.test
`,
      );
      expect((await viaProxy(['apply', '-f', file, '--yes'])).code).toBe(0);
      ws.write(
        'both.yaml',
        `version: 1
users:
  - email: both-new@rename.test
    renamed_from: both-old@rename.test
`,
      );
      const before = await serverState(server);
      const planned = await viaProxy(['apply', '-f', file, '--yes']);
      expect(planned.code, describeResult(planned)).toBe(1);
      expect(planned.stderr).toMatch(
        /both\.yaml:4: user both-new@rename\.test has renamed_from: both-old@rename\.test, but both both-new@rename\.test and both-old@rename\.test exist on the server/,
      );
      expect(await serverState(server)).toEqual(before);
    });
  });
}
