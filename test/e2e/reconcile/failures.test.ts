/**
 * A failed write does not stop unrelated ones; the summary says what was done, what failed and
 * why; once the cause is gone, running apply again converges.
 */
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  wgKey,
  type Workspace,
  useServerAndWorkspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
const TAKEN = wgKey();

useServerAndWorkspace((started) => ({ server, ws } = started));

describe('partial failure', () => {
  it('reports done, failed and why, then converges on the next run', async () => {
    // The server refuses the network's own address (`is reserved`): only it knows its tunnel network.
    const [phone, bobLaptop] = [wgKey(), wgKey()];
    // The server's admin is declared: an admin in no file keeps a plan pending (W3.5).
    const doc = (pinned: string) => `version: 1
users:
  - { email: admin@example.com, role: admin }
  - email: alice@corp.test
    devices:
      - { name: laptop, public_key: "${TAKEN}"${pinned} }
      - { name: phone, public_key: "${phone}" }
    rules:
      - { action: accept, destination: 10.1.0.0/16 }
  - email: bob@corp.test
    devices:
      - { name: laptop, public_key: "${bobLaptop}" }
`;
    const file = ws.write('netform.yaml', doc(', ipv4: 10.3.2.0'));
    const first = await netform(server, ['apply', '-f', file, '--yes']);
    expect(first.code, describeResult(first)).toBe(1);
    expect(first.stdout).toMatch(
      /^FAILED to create device alice@corp\.test\/laptop \(\d+\.\d s\): POST \/v0\/devices: 422 ipv4 is reserved\n/m,
    );
    expect(first.stdout).toMatch(/^created device alice@corp\.test\/phone \(/m);
    expect(first.stdout).toMatch(/^created device bob@corp\.test\/laptop \(/m);
    expect(first.stdout).toMatch(/^created rule accept 10\.1\.0\.0\/16 \(alice@corp\.test\) \(/m);
    expect(first.stdout).toContain('Apply: 5 done, 1 failed, 0 not attempted.');
    expect(first.stderr).toContain('Running apply again retries what is left.');

    const pending = await netform(server, ['plan', '-f', file]);
    expect(pending.code).toBe(2);
    expect(pending.stdout).toContain('Plan: 1 to create, 0 to update, 0 to replace, 0 to delete.');

    ws.write('netform.yaml', doc(''));
    const second = await netform(server, ['apply', '-f', file, '--yes']);
    expect(second.code, describeResult(second)).toBe(0);
    expect(second.stdout).toContain('Apply: 1 done, 0 failed, 0 not attempted.');
    const converged = await netform(server, ['plan', '-f', file]);
    expect(converged.code, describeResult(converged)).toBe(0);
    const state = await serverState(server);
    expect(state.devices.map((d) => d.name).sort()).toEqual(['laptop', 'laptop', 'phone']);
  });

  it('reports a server that refuses the token clearly, without the token', async () => {
    const file = ws.path('netform.yaml');
    const bad = 'nf_this_token_is_not_valid_0123456789';
    const refused = await netform(server, ['plan', '-f', file], { NETFORM_TOKEN: bad });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /error: cannot read the server's state: GET \/v0\/(users|devices|rules): 401 the token is unknown, revoked or expired/,
    );
    expect(refused.stdout + refused.stderr).not.toContain(bad);
  });
});
