/**
 * Rules are never changed in place (a real 0.7.36 server's firewall ignores rule updates): a
 * changed rule is deleted, then created, shown as `-/+` and counted once. The server sees no
 * PATCH or PUT of a rule: requests are counted through a recording loopback proxy.
 * With prune off the plan says the old rule stays and its access remains.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startRecordingProxy, type RecordingProxy } from '../../helpers/recording-proxy.js';
import {
  create,
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
let proxy: RecordingProxy;
useServerAndWorkspace((started) => ({ server, ws } = started));
beforeEach(async () => {
  proxy = await startRecordingProxy(server.url);
});
afterEach(async () => {
  await proxy.close();
});

/** A user of its own for each test, with one live rule made by hand. */
async function userWithRule(email: string, ports: string): Promise<void> {
  const user = await create(server, 'users', { email });
  await create(server, 'rules', {
    user_id: user.id,
    action: 'accept',
    destination: '10.1.0.0/16',
    port_type: 'tcp',
    port_range: ports,
  });
}
const files = (email: string, prune: boolean, ports: string) => `version: 1
settings: { prune: ${prune}, manage: { users: ["${email}"], rules: [] } }
users:
  - email: ${email}
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "${ports}" }
`;
const viaProxy = (args: string[]) => netform(server, args, { NETFORM_URL: proxy.url });
const ruleWrites = () =>
  proxy.requests.filter((r) => /^(POST|PATCH|PUT|DELETE) \/v0\/rules/.test(r)).map((r) => r.split(' ')[0]);
const portsOf = async (email: string) => {
  const state = await serverState(server);
  const id = state.users.find((u) => u.email === email).id;
  return state.rules.filter((r) => r.user_id === id).map((r) => r.port_range);
};

describe('rule changes are delete-then-create', () => {
  it('a port change (22 -> 2222) with prune on: -/+, one replacement, DELETE then POST, no PATCH', async () => {
    await userWithRule('port@corp.test', '22');
    const file = ws.write('port.yaml', files('port@corp.test', true, '2222'));
    const planned = await viaProxy(['plan', '-f', file]);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain(
      '  -/+ rule accept 10.1.0.0/16 tcp 2222 (port@corp.test)  (replaces the live rule accept 10.1.0.0/16 tcp 22 (port@corp.test): ' +
        'deleted, then the new one created, never changed in place; between the two requests the old rule no longer filters)\n',
    );
    expect(planned.stdout).toContain('      port_range: "22" -> "2222"\n');
    expect(planned.stdout).toContain('Plan: 0 to create, 0 to update, 1 to replace, 0 to delete.');

    const applied = await viaProxy(['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(ruleWrites()).toEqual(['DELETE', 'POST']);
    expect(await portsOf('port@corp.test')).toEqual(['2222']);
    expect((await viaProxy(['plan', '-f', file])).code).toBe(0);
  });

  it('a declared rule replacing an overlapping live rule (prune off) is delete-then-create, never a PATCH', async () => {
    await userWithRule('overlap@corp.test', '2222');
    const file = ws.write('overlap.yaml', files('overlap@corp.test', false, '2000-3000'));
    const planned = await viaProxy(['plan', '-f', file]);
    expect(planned.stdout).toContain(
      '  -/+ rule accept 10.1.0.0/16 tcp 2000-3000 (overlap@corp.test)  (replaces the live rule accept 10.1.0.0/16 tcp 2222 (overlap@corp.test), which it overlaps:',
    );
    const applied = await viaProxy(['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(ruleWrites()).toEqual(['DELETE', 'POST']);
    expect(await portsOf('overlap@corp.test')).toEqual(['2000 - 3000']);
  });

  it('prune off: a changed rule that does not overlap is a create, and the plan says the old rule stays with its access', async () => {
    await userWithRule('keep@corp.test', '22');
    const file = ws.write('keep.yaml', files('keep@corp.test', false, '2222'));
    const planned = await viaProxy(['plan', '-f', file]);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain(
      '(prune is off: the live rule accept 10.1.0.0/16 tcp 22 (keep@corp.test) that no file declares stays, and the access it grants remains)',
    );
    expect(planned.stdout).toContain(
      '  = rule accept 10.1.0.0/16 tcp 22 (keep@corp.test)  (kept: prune is off: the access it grants remains)',
    );
    expect(planned.stdout).toContain(
      'Undeclared: 1 live object inside the managed scope that no file declares: 1 kept (prune is off).',
    );
  });
});
