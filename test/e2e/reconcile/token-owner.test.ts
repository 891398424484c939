/**
 * The token's owner is never deleted, even when --token-user names another admin: apply demotes
 * an admin before deleting it, and the server's refusal (`You cannot change your own role`) shows
 * it owns the token. A --token-user naming no live admin stops the plan before any write.
 * On our server in both modes (normal and --legacy-device-updates).
 */
import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import {
  create,
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  type Workspace,
} from '../../helpers/workspace.js';

for (const mode of [[], ['--legacy-device-updates']]) {
  describe(`token owner guard (server ${mode.join(' ') || 'default'})`, () => {
    let server: TestServer;
    let ws: Workspace;
    useServerAndWorkspace(
      (started) => ({ server, ws } = started),
      async (s) => {
        await create(s, 'users', { email: 'other@corp.test', role: 'admin' });
        await create(s, 'users', { email: 'plain@corp.test' });
      },
      { legacyDeviceUpdates: mode.length > 0 },
    );
    const files = () =>
      ws.write(
        'netform.yaml',
        `version: 1
settings: { prune: true }
users:
  - { email: other@corp.test, role: admin }
  - { email: plain@corp.test }
`,
      );

    it('a --token-user naming no live admin is an error before any write', async () => {
      const before = await serverState(server);
      for (const wrong of ['admni@example.com', 'plain@corp.test']) {
        const result = await netform(server, ['apply', '-f', files(), '--yes'], { NETFORM_TOKEN_USER: wrong });
        expect(result.code, describeResult(result)).toBe(1);
        expect(result.stderr).toContain(`--token-user/NETFORM_TOKEN_USER ${wrong}`);
      }
      expect(await serverState(server)).toEqual(before);
    });

    it('a wrong but existing admin as --token-user: the real owner is not deleted, and it stays an admin', async () => {
      const planned = await netform(server, ['plan', '-f', files()], { NETFORM_TOKEN_USER: 'other@corp.test' });
      expect(planned.code, describeResult(planned)).toBe(2);
      expect(planned.stdout).toContain(
        `- user ${TEST_ADMIN_EMAIL}  (declared in no file (prune); apply first demotes it`,
      );

      const applied = await netform(server, ['apply', '-f', files(), '--yes'], {
        NETFORM_TOKEN_USER: 'other@corp.test',
      });
      expect(applied.code, describeResult(applied)).toBe(1);
      expect(applied.stdout).toContain('the API token in use belongs to it');
      const users = (await serverState(server)).users;
      expect(users.find((u) => u.email === TEST_ADMIN_EMAIL)).toMatchObject({ role: 'admin' });
      // The token still works: the same plan can be made again. It is pending (exit 2, W3.5): the
      // guard keeps the token's owner, which the files (prune on) would delete, so the server does
      // not match them.
      const again = await netform(server, ['plan', '-f', files()], { NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL });
      expect(again.code, describeResult(again)).toBe(2);
      expect(again.stdout).toContain('No changes planned, but the server does not match the desired state');
    });

    it('an admin that does not own the token is deleted', async () => {
      await create(server, 'users', { email: 'extra-admin@corp.test', role: 'admin' });
      const applied = await netform(server, ['apply', '-f', files(), '--yes']);
      expect(applied.code, describeResult(applied)).toBe(0);
      expect((await serverState(server)).users.map((u) => u.email)).not.toContain('extra-admin@corp.test');
    });
  });
}
