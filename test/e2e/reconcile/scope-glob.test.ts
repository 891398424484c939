/**
 * Security review F3: an admin whose email holds `/` (`ops/backdoor@example.com`) was outside
 * `manage.users: ["*@example.com"]` (a path glob's `*` stops at `/`), so plan, drift and prune never
 * showed it, and `protect.users` could miss it the same way. One matcher now decides both, and
 * validate's scope check with them, against a real server process.
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

let server: TestServer;
let ws: Workspace;
const BACKDOOR = 'ops/backdoor@example.com';

useServerAndWorkspace(
  (started) => ({ server, ws } = started),
  async (s) => {
    const backdoor = await create(s, 'users', { email: BACKDOOR, role: 'admin' });
    await create(s, 'devices', { user_id: backdoor.id, name: 'vpn', public_key: wgKey() });
    await create(s, 'rules', { user_id: backdoor.id, action: 'accept', destination: '0.0.0.0/0' });
  },
);

const files = (protect: string[] = []) => `version: 1
settings:
  prune: true
  manage: { users: ["*@example.com"] }
  protect: { users: ${JSON.stringify(protect)} }
users:
  - { email: admin@example.com, role: admin }
`;

describe('one scope matcher (F3)', { timeout: 60_000 }, () => {
  it('plan and drift show an admin whose email holds / as inside *@example.com: undeclared, pruned', async () => {
    const file = ws.write('netform.yaml', files());
    const planned = await netform(server, ['plan', '-f', file]);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain(`  - user ${BACKDOOR}`);
    expect(planned.stdout).toContain('Plan: 0 to create, 0 to update, 0 to replace, 1 to delete (+2 with their user).');

    const json = await netform(server, ['plan', '-f', file, '--format', 'json']);
    const doc = JSON.parse(json.stdout);
    expect(doc.undeclared).toEqual([
      expect.objectContaining({ kind: 'user', key: BACKDOOR, fate: 'delete', reason: 'prune is on' }),
    ]);

    const drift = await netform(server, ['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain(BACKDOOR);
  });

  it('protect.users covers it with the same matcher: kept, and said so', async () => {
    // `*backdoor@example.com`: a path glob's `*` cannot cross `ops/`, so it protected nothing.
    const file = ws.write('protected.yaml', files(['*backdoor@example.com']));
    const planned = await netform(server, ['plan', '-f', file]);
    expect(planned.code, describeResult(planned)).toBe(0);
    expect(planned.stdout).not.toContain(`  - user ${BACKDOOR}`);
    expect(planned.stdout + planned.stderr).toContain(
      `not deleting user ${BACKDOOR}: it is protected (settings.protect)`,
    );
    const json = JSON.parse((await netform(server, ['plan', '-f', file, '--format', 'json'])).stdout);
    expect(json.undeclared).toEqual([
      expect.objectContaining({
        kind: 'user',
        key: BACKDOOR,
        fate: 'keep',
        reason: expect.stringMatching(/^protected/),
      }),
    ]);
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect((await serverState(server)).users.map((u) => u.email)).toContain(BACKDOOR);
  });

  it('validate draws the same edges: a declared email holding / is inside the scope, and protect covers absent', async () => {
    const file = ws.write(
      'declared.yaml',
      `version: 1
settings:
  manage: { users: ["*@example.com"] }
  protect: { users: ["*backdoor@example.com"] }
users:
  - { email: "ops/second@example.com", role: admin }
  - { email: "other/x@example.org" }
absent:
  users: ["${BACKDOOR}"]
`,
    );
    const result = await netform(server, ['validate', '-f', file]);
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr).not.toContain('ops/second@example.com');
    expect(result.stderr).toContain(
      'users[1].email: other/x@example.org is outside settings.manage.users (*@example.com): this repository does not manage it',
    );
    expect(result.stderr).toMatch(
      /absent\.users\[0\]: ops\/backdoor@example\.com is protected \(settings\.protect\.users at [^)]*declared\.yaml:4:\d+\) and cannot be deleted/,
    );
    expect(result.stderr).toMatch(/^2 errors in /m);
  });

  it('apply with prune deletes it, with its device and its accept-everything rule', async () => {
    const file = ws.write('netform.yaml', files());
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const state = await serverState(server);
    expect(state.users.map((u) => u.email)).toEqual(['admin@example.com']);
    expect(state.devices).toEqual([]);
    expect(state.rules).toEqual([]);
    const drift = await netform(server, ['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(0);
  });
});
