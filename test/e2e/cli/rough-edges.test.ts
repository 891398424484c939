/**
 * Everyday connection mistakes get one line that names the fix: a wrong port (refused, retried
 * quietly: network-errors.test.ts), https:// against a plain-HTTP server, a token the server does not accept.
 */
import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { create, describeResult, netform, useServerAndWorkspace, type Workspace } from '../../helpers/workspace.js';

describe('connection mistakes', () => {
  let server: TestServer;
  let ws: Workspace;
  useServerAndWorkspace((started) => ({ server, ws } = started));
  const file = () => ws.write('netform.yaml', `version: 2\nusers:\n  - { email: ${TEST_ADMIN_EMAIL}, role: admin }\n`);

  it('https:// against a plain-HTTP server: "the server speaks plain HTTP: use http://"', async () => {
    const result = await netform(server, ['plan', '-f', file()], {
      NETFORM_URL: server.url.replace(/^http:/, 'https:'),
    });
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr).toContain('the server speaks plain HTTP: use http://');
    expect(result.stderr).not.toContain('--ca-file');
  });

  it('a token the server does not accept: unknown, revoked or expired', async () => {
    const result = await netform(server, ['plan', '-f', file()], { NETFORM_TOKEN: 'nf_' + 'x'.repeat(40) });
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr).toContain('the token is unknown, revoked or expired (or its owner is no longer an admin)');
  });

  it("--target suggests by letters and digits, a +tag ignored: oneil@ -> o'neil+vpn@, not erin@", async () => {
    await create(server, 'users', { email: 'erin@corp.example' });
    await create(server, 'users', { email: "o'neil+vpn@corp.example" });
    const result = await netform(server, ['plan', '-f', file(), '--target', 'user:oneil@corp.example']);
    const all = result.stdout + result.stderr;
    expect(all, describeResult(result)).toContain("did you mean user:o'neil+vpn@corp.example?");
  });
});
