/**
 * Objects made by hand are adopted by natural key (no state file); a field left out is managed at
 * its default, so the hand-set mtu is kept by `ignore_changes: [mtu]` (W3.5); prune off deletes
 * only what `absent` lists; prune on deletes what no file declares inside
 * `manage`, never a protected user, never anything outside `manage`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import {
  create,
  describeResult,
  netform,
  serverState,
  wgKey,
  workspace,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
const PHONE = wgKey();

beforeAll(async () => {
  server = await startTestServer();
  ws = workspace();
  const hand = await create(server, 'users', { email: 'hand@corp.test' });
  await create(server, 'devices', {
    user_id: hand.id,
    name: 'phone',
    public_key: PHONE,
    use_default_mtu: false,
    mtu: 1300,
  });
  await create(server, 'devices', { user_id: hand.id, name: 'old', public_key: wgKey() });
  await create(server, 'rules', { action: 'accept', destination: '10.20.0.0/16' });
  await create(server, 'users', { email: 'gone@corp.test' });
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

describe('adoption, prune, protect, absent', () => {
  it('adopts objects made by hand and changes only what the files say; absent deletes with prune off', async () => {
    const file = ws.write(
      'adopt.yaml',
      `version: 1
settings: { manage: { users: ["*@corp.test"] } }
users:
  - email: HAND@corp.test
    devices:
      - { name: phone, public_key: "${PHONE}", description: adopted, ignore_changes: [mtu] }
rules:
  - { action: accept, destination: 10.20.0.0/16 }
absent:
  users: [gone@corp.test, never-existed@corp.test]
  devices: [{ user: hand@corp.test, name: old }]
`,
    );
    const planned = await netform(server, ['plan', '-f', file]);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain('  ~ device hand@corp.test/phone\n      description: (none) -> "adopted"\n');
    expect(planned.stdout).toContain('  - device hand@corp.test/old  (listed under absent)\n');
    expect(planned.stdout).toContain('  - user gone@corp.test  (listed under absent)\n');
    // The email's case is written (W3.5): one update of the email, the same user.
    expect(planned.stdout).toContain('  ~ user HAND@corp.test\n      email: "hand@corp.test" -> "HAND@corp.test"\n');
    expect(planned.stdout).toContain('Plan: 0 to create, 2 to update, 0 to replace, 2 to delete.');
    expect(planned.stdout).not.toContain('mtu');

    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const state = await serverState(server);
    expect(state.devices).toHaveLength(1);
    expect(state.devices[0]).toMatchObject({
      name: 'phone',
      description: 'adopted',
      mtu: 1300,
      use_default_mtu: false,
    });
    expect(state.users.map((u) => u.email).sort()).toEqual(['HAND@corp.test', 'admin@example.com']);

    const again = await netform(server, ['plan', '-f', file]);
    expect(again.code, describeResult(again)).toBe(0);
  });

  it('prune off leaves undeclared objects; prune on deletes them inside manage only, sparing protected users', async () => {
    const extra = await create(server, 'users', { email: 'extra@corp.test' });
    await create(server, 'devices', { user_id: extra.id, name: 'laptop', public_key: wgKey() });
    await create(server, 'rules', { action: 'drop', destination: '10.5.0.0/16', user_id: extra.id });
    await create(server, 'users', { email: 'keep@corp.test' });
    const outsider = await create(server, 'users', { email: 'other@else.org' });
    await create(server, 'devices', { user_id: outsider.id, name: 'laptop', public_key: wgKey() });
    await create(server, 'rules', { action: 'accept', destination: '172.16.0.0/12' });
    await create(server, 'rules', { action: 'accept', destination: '10.30.0.0/16' });

    const declared = (prune: boolean) => `version: 1
settings:
  prune: ${prune}
  manage: { users: ["*@corp.test"], rules: ["10.0.0.0/8"] }
  protect: { users: ["keep@*"] }
users:
  - email: HAND@corp.test
    devices:
      - { name: phone, public_key: "${PHONE}", description: adopted, ignore_changes: [mtu] }
rules:
  - { action: accept, destination: 10.20.0.0/16 }
`;
    // Prune off: nothing to write, but an undeclared rule inside manage (and extra's own rule) is
    // access the files do not grant: pending (exit 2), never "matches" (W3.5).
    const off = await netform(server, ['plan', '-f', ws.write('off.yaml', declared(false))]);
    expect(off.code, describeResult(off)).toBe(2);
    expect(off.stdout).toContain('No changes planned, but the server does not match the desired state');

    const onFile = ws.write('on.yaml', declared(true));
    const on = await netform(server, ['plan', '-f', onFile]);
    expect(on.code, describeResult(on)).toBe(2);
    expect(on.stdout).toContain('  - rule accept 10.30.0.0/16 (global)  (declared in no file (prune))\n');
    expect(on.stdout).toContain(
      '  - user extra@corp.test  (declared in no file (prune))\n      - device extra@corp.test/laptop (goes with the user)\n      - rule drop 10.5.0.0/16 (extra@corp.test) (goes with the user)\n',
    );
    expect(on.stdout).toContain('  ! not deleting user keep@corp.test: it is protected (settings.protect)');
    expect(on.stdout).toContain('Plan: 0 to create, 0 to update, 0 to replace, 2 to delete (+2 with their user).');
    expect(on.stdout).not.toContain('other@else.org');
    expect(on.stdout).not.toContain('172.16');
    expect(on.stdout).not.toContain('admin@example.com');

    const applied = await netform(server, ['apply', '-f', onFile, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const state = await serverState(server);
    expect(state.users.map((u) => u.email).sort()).toEqual([
      'HAND@corp.test',
      'admin@example.com',
      'keep@corp.test',
      'other@else.org',
    ]);
    expect(state.rules.map((r) => r.destination).sort()).toEqual(['10.20.0.0/16', '172.16.0.0/12']);
    expect(state.devices).toHaveLength(2);
    // The protected user and the ignored mtu are kept: exit 0, and said so rather than "matches" (W3.5).
    const again = await netform(server, ['plan', '-f', onFile]);
    expect(again.code, describeResult(again)).toBe(0);
    expect(again.stdout).toMatch(
      /No changes, but not everything matches: 1 user kept \(protected\); 1 field differs under ignore_changes, not managed \(device:\S+ (use_default_)?mtu\)\./,
    );
  });
});
