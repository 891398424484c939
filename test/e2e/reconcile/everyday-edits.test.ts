/**
 * Everyday edits of an exported repository do what the plan says (issue 9's Why section):
 * removing a device or changing a rule's port revokes the old access (export writes prune: true);
 * changing a user's email moves its device with its preshared key and addresses (no 422, no
 * second apply); a conflicting create fails the plan with exit 1 and changes nothing.
 * Each edit runs on a server of its own, seeded with the same company.
 */
import { readFileSync } from 'node:fs';
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

const LAPTOP = wgKey();
const PHONE = wgKey();

/** A server of this describe block's own, seeded with alice, her laptop and phone, and one ssh rule. */
function useSeededServer(): () => { server: TestServer; ws: Workspace } {
  let started: { server: TestServer; ws: Workspace } | undefined;
  useServerAndWorkspace(
    (s) => (started = s),
    async (s) => {
      const alice = await create(s, 'users', { email: 'alice@corp.test' });
      await create(s, 'devices', { user_id: alice.id, name: 'laptop', public_key: LAPTOP });
      await create(s, 'devices', { user_id: alice.id, name: 'phone', public_key: PHONE });
      await create(s, 'rules', {
        user_id: alice.id,
        action: 'accept',
        destination: '10.1.0.0/16',
        port_type: 'tcp',
        port_range: '22',
      });
    },
  );
  return () => started!;
}

describe('everyday edits of an exported repository: removing a device, changing a port', () => {
  const seeded = useSeededServer();
  it('export, then remove a device and change a port: the plan deletes the device and replaces the rule, and apply does it', async () => {
    const { server, ws } = seeded();
    const exported = await netform(server, ['export', '-o', ws.path('repo')]);
    expect(exported.code, describeResult(exported)).toBe(0);
    const file = ws.path('repo/netform.yaml');
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('settings:\n  prune: true');
    expect((await netform(server, ['plan', '-f', file])).code).toBe(0);

    const edited = text
      .replace(/\n {6}- name: phone\n(?: {8}.*\n)*/, '\n')
      .replace('port_range: "22"', 'port_range: "2222"');
    expect(edited).not.toContain('phone');
    expect(edited).toContain('2222');
    ws.write('repo/netform.yaml', edited);
    const planned = await netform(server, ['plan', '-f', file]);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain('  - device alice@corp.test/phone  (declared in no file (prune))');
    expect(planned.stdout).toContain('  -/+ rule accept 10.1.0.0/16 tcp 2222 (alice@corp.test)');
    expect(planned.stdout).toContain('Plan: 0 to create, 0 to update, 1 to replace, 1 to delete.');
    expect((await netform(server, ['apply', '-f', file, '--yes'])).code).toBe(0);
    const state = await serverState(server);
    expect(state.devices.map((d) => d.name)).toEqual(['laptop']);
    expect(state.rules.map((r) => r.port_range)).toEqual(['2222']);
    expect((await netform(server, ['plan', '-f', file])).code).toBe(0);
  });
});

describe("everyday edits: changing a user's email", () => {
  const seeded = useSeededServer();
  it("changing a user's email (no renamed_from, prune on) moves its device in one apply, keeping its preshared key and addresses", async () => {
    const { server, ws } = seeded();
    const before = (await serverState(server)).devices.find((d) => d.name === 'laptop');
    const file = ws.write(
      'email.yaml',
      `version: 1
settings: { prune: true, manage: { users: ["*@corp.test", "*@new-corp.test"] } }
users:
  - email: alice@new-corp.test
    devices:
      - { name: laptop, public_key: "${LAPTOP}" }
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "2222" }
`,
    );
    const planned = await netform(server, ['plan', '-f', file]);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain('  -/+ device alice@new-corp.test/laptop  (moved from alice@corp.test/laptop');
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const state = await serverState(server);
    const moved = state.devices.find((d) => d.public_key === LAPTOP);
    expect(state.users.find((u) => u.id === moved.user_id).email).toBe('alice@new-corp.test');
    expect(moved).toMatchObject({ preshared_key: before.preshared_key, ipv4: before.ipv4, ipv6: before.ipv6 });
    expect(state.users.map((u) => u.email)).not.toContain('alice@corp.test');
    expect((await netform(server, ['plan', '-f', file])).code).toBe(0);
  });
});

describe('everyday edits: a conflicting create', () => {
  const seeded = useSeededServer();
  it('a create that needs a public key a kept live device holds fails the plan (exit 1), naming both; the server is unchanged', async () => {
    const { server, ws } = seeded();
    const file = ws.write(
      'conflict.yaml',
      `version: 1
users:
  - email: mallory@corp.test
    devices:
      - { name: copy, public_key: "${LAPTOP}" }
`,
    );
    const before = await serverState(server);
    const result = await netform(server, ['apply', '-f', file, '--yes']);
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr).toContain('device mallory@corp.test/copy needs public_key');
    expect(result.stderr).toContain('which the live device alice@corp.test/laptop (of alice@corp.test) holds');
    expect(await serverState(server)).toEqual(before);
  });
});
