/**
 * plan and apply against a real server process: create from empty, a second run that has nothing
 * to do, then one edit of every kind (update, sensitive update, rule replaced in place, prune
 * delete, user delete with cascade, create) and convergence.
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

const KEYS = { alice: wgKey(), bob: wgKey(), dave: wgKey(), carol: wgKey() };
const PSK1 = wgKey();
const PSK2 = wgKey();
const ENV = { ALICE_PW: 'alice-password-one' };

const V1 = `version: 1
settings:
  prune: true
  manage: { users: ["*@corp.test"], rules: ["10.0.0.0/8"] }
users:
  - email: alice@corp.test
    role: admin
    password: { env: ALICE_PW }
    devices:
      - name: laptop
        public_key: "${KEYS.alice}"
        preshared_key: { file: alice.psk }
        allowed_ips: [10.0.0.0/8]
        mtu: 1380
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "443" }
  - email: bob@corp.test
    devices:
      - { name: phone, public_key: "${KEYS.bob}" }
  - email: dave@corp.test
    devices:
      - { name: tablet, public_key: "${KEYS.dave}" }
rules:
  - { action: drop, destination: 10.9.0.0/16 }
`;

const V2 = `version: 1
settings:
  prune: true
  manage: { users: ["*@corp.test"], rules: ["10.0.0.0/8"] }
users:
  - email: Alice@corp.test
    role: admin
    password: { env: ALICE_PW }
    devices:
      - name: laptop
        public_key: "${KEYS.alice}"
        preshared_key: { file: alice.psk }
        allowed_ips: [192.168.0.0/16, 10.0.0.0/8]
        mtu: 1400
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: 443 - 8443 }
  - email: bob@corp.test
    role: admin
  - email: carol@corp.test
    devices:
      - { name: laptop, public_key: "${KEYS.carol}", dns: [10.0.0.53] }
rules:
  - { action: drop, destination: 10.9.0.0/17 }
`;

let server: TestServer;
let ws: Workspace;

useServerAndWorkspace((started) => ({ server, ws } = started));

describe('plan and apply', () => {
  it('creates everything from empty, then has nothing to do', async () => {
    const file = ws.write('netform.yaml', V1);
    ws.write('alice.psk', `${PSK1}\n`);

    const planned = await netform(server, ['plan', '-f', file], ENV);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain('Plan: 8 to create, 0 to update, 0 to replace, 0 to delete.');

    const applied = await netform(server, ['apply', '-f', file, '--yes'], ENV);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stdout).toContain('Apply: 8 done, 0 failed, 0 not attempted.');

    const state = await serverState(server);
    const alice = state.users.find((u) => u.email === 'alice@corp.test');
    expect(alice.role).toBe('admin');
    const laptop = state.devices.find((d) => d.user_id === alice.id);
    expect(laptop).toMatchObject({
      name: 'laptop',
      public_key: KEYS.alice,
      preshared_key: PSK1,
      mtu: 1380,
      use_default_mtu: false,
      allowed_ips: ['10.0.0.0/8'],
    });
    expect(
      state.rules
        .map((r) => `${r.action} ${r.destination} ${r.port_type} ${r.user_id === alice.id ? 'alice' : r.user_id}`)
        .sort(),
    ).toEqual(['accept 10.1.0.0/16 tcp alice', 'drop 10.9.0.0/16 null null']);
    expect(state.devices).toHaveLength(3);

    const again = await netform(server, ['plan', '-f', file], ENV);
    expect(again.code, describeResult(again)).toBe(0);
    expect(again.stdout).toContain('No changes: the server matches the desired state.');
    const reapplied = await netform(server, ['apply', '-f', file], ENV);
    expect(reapplied.code, describeResult(reapplied)).toBe(0);
  });

  it('plans and applies one edit of every kind, then converges', async () => {
    const before = await serverState(server);
    const aliceRule = before.rules.find((r) => r.user_id !== null);
    const globalRule = before.rules.find((r) => r.user_id === null);
    const file = ws.write('netform.yaml', V2);
    ws.write('alice.psk', PSK2);

    const planned = await netform(server, ['plan', '-f', file], ENV);
    expect(planned.code, describeResult(planned)).toBe(2);
    const out = planned.stdout;
    expect(out).toContain('  ~ user bob@corp.test\n      role: "unprivileged" -> "admin"\n');
    expect(out).toContain('  ~ device alice@corp.test/laptop\n');
    expect(out).toContain('      allowed_ips: ["10.0.0.0/8"] -> ["192.168.0.0/16","10.0.0.0/8"]\n');
    expect(out).toContain('      mtu: 1380 -> 1400\n');
    expect(out).toContain('      preshared_key: (sensitive value changed)\n');
    expect(out).toContain(
      '  -/+ rule accept 10.1.0.0/16 tcp 443-8443 (Alice@corp.test)  (replaces the live rule accept 10.1.0.0/16 tcp 443 (alice@corp.test), which it overlaps: deleted, then the new one created, never changed in place; between the two requests the old rule no longer filters)\n      port_range: "443" -> "443 - 8443"\n',
    );
    expect(out).toContain('  -/+ rule drop 10.9.0.0/17 (global)');
    expect(out).toContain('      destination: "10.9.0.0/16" -> "10.9.0.0/17"\n');
    expect(out).toContain('  + user carol@corp.test\n');
    expect(out).toContain('  + device carol@corp.test/laptop\n');
    expect(out).toContain('  - device bob@corp.test/phone  (declared in no file (prune))\n');
    expect(out).toContain(
      '  - user dave@corp.test  (declared in no file (prune))\n      - device dave@corp.test/tablet (goes with the user)\n',
    );
    expect(out).toContain('Plan: 2 to create, 3 to update, 2 to replace, 2 to delete (+1 with their user).');
    // Alice's email case differs from the server's: one update of the email (W3.5), the same user.
    expect(out).toContain('  ~ user Alice@corp.test\n      email: "alice@corp.test" -> "Alice@corp.test"\n');

    const applied = await netform(server, ['apply', '-f', file, '--yes', '--parallelism', '2'], ENV);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stdout).toContain('Apply: 9 done, 0 failed, 0 not attempted.');

    const after = await serverState(server);
    expect(after.users.map((u) => `${u.email} ${u.role}`).sort()).toEqual([
      'Alice@corp.test admin',
      'admin@example.com admin',
      'bob@corp.test admin',
      'carol@corp.test unprivileged',
    ]);
    const laptop = after.devices.find((d) => d.public_key === KEYS.alice);
    expect(laptop).toMatchObject({ mtu: 1400, preshared_key: PSK2 });
    expect([...laptop.allowed_ips].sort()).toEqual(['10.0.0.0/8', '192.168.0.0/16']);
    // Rules are never changed in place: the old ones are gone, replaced by new ones.
    expect(after.rules.find((r) => r.id === aliceRule.id)).toBeUndefined();
    expect(after.rules.find((r) => r.id === globalRule.id)).toBeUndefined();
    expect(after.rules.map((r) => r.port_range ?? r.destination).sort()).toEqual(['10.9.0.0/17', '443 - 8443']);
    expect(after.devices.map((d) => d.name).sort()).toEqual(['laptop', 'laptop']);

    const again = await netform(server, ['plan', '-f', file], ENV);
    expect(again.code, describeResult(again)).toBe(0);
  });
});
