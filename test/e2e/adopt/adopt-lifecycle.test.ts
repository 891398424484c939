/**
 * `netform adopt` meets `acknowledged:` and `expires:` against a real server, through the
 * in-process CLI with the run's clock set (adopt writes files, never the server, and takes no
 * `--now`): adopting an acknowledged difference writes the live value and removes its
 * `acknowledged:` entry in the same edit, every other byte kept, and `plan` is clean afterwards;
 * a difference that exists because a grant expired (a device past its `expires`, an admin past its
 * `role_expires`, still on the server) is listed as expired and left, and `expires` is never written.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { netformAt } from '../../helpers/clocked.js';
import type { TestServer } from '../../helpers/server.js';
import { describeResult, serverState, useServerAndWorkspace, wgKey, type Workspace } from '../../helpers/workspace.js';

const BOB_KEY = wgKey();
const CAROL_LAPTOP = wgKey();
const CAROL_PHONE = wgKey();
const CAROL_TABLET = wgKey();

const NOW = '2026-12-01T00:00:00Z';
/** After carol's tablet, phone and admin role expire, before the acknowledgements' 2099. */
const LATER = '2027-07-15T00:00:00Z';

const SETTINGS = `# Team settings: reviewed by the network team.
version: 2
settings:
  prune: false   # keep what we do not declare
  manage: { users: ["*@corp.test"], rules: ["10.0.0.0/8"] }
rules:
  # Nothing inside the managed block unless a user's own rule says so.
  - { action: drop, destination: 10.0.0.0/8 }
  - { action: accept, destination: 10.2.0.0/16, expires: "2027-06-30" }   # the migration window
`;

const BOB = `version: 2
# Bob's laptop; the endpoint is the office gateway.
users:
  - email: bob@corp.test
    devices:
      - name: laptop
        public_key: "${BOB_KEY}"
        endpoint: "198.51.100.1:51820"   # office
        mtu: 1420
`;

const CAROL = `version: 2
users:
  # Carol covers the on-call rota until the end of June.
  - email: carol@corp.test
    role: admin
    role_expires: "2027-06-30"
    devices:
      - { name: laptop, public_key: "${CAROL_LAPTOP}" }
      - name: phone            # the on-call phone
        public_key: "${CAROL_PHONE}"
        mtu: 1420
        expires: "2027-06-30"
      - { name: tablet, public_key: "${CAROL_TABLET}", expires: 2027-05-31 }
`;

describe('netform adopt with acknowledgements and expiries', () => {
  let server: TestServer;
  let ws: Workspace;
  let dir: string;
  const at = (instant: string, args: string[]) => netformAt(server, instant, args);
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  const files = () =>
    Object.fromEntries(
      readdirSync(dir)
        .sort()
        .map((n) => [n, read(n)]),
    );
  const patchDevice = async (email: string, name: string, device: Record<string, unknown>) => {
    const state = await serverState(server);
    const user = state.users.find((u) => u.email === email);
    const id = state.devices.find((d) => d.user_id === user.id && d.name === name).id as string;
    await server.api('PATCH', `/v0/devices/${id}`, { device });
  };
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      ws.write('repo/settings.yaml', SETTINGS);
      ws.write('repo/bob.yaml', BOB);
      ws.write('repo/carol.yaml', CAROL);
      dir = ws.path('repo');
      const r = await netformAt(s, NOW, ['apply', '-f', dir, '--yes']);
      expect(r.code, describeResult(r)).toBe(0);
    },
  );

  it('adopting an acknowledged difference writes the live value and removes the entry in the same edit', async () => {
    await patchDevice('bob@corp.test', 'laptop', { endpoint: '203.0.113.9:51820', mtu: 1280 });
    const ack = await at(NOW, [
      'acknowledge',
      'device:bob@corp.test/laptop',
      'endpoint',
      '-f',
      dir,
      '--until',
      '2099-12-31',
      '--reason',
      'moved during incident 4711',
    ]);
    expect(ack.code, describeResult(ack)).toBe(0);
    expect(read('bob.yaml')).toContain('acknowledged:\n  - key: "device:bob@corp.test/laptop"\n');
    // The acknowledged endpoint is kept out of the plan; the mtu is ordinary drift.
    const before = await at(NOW, ['plan', '-f', dir, '--format', 'json']);
    const planned = JSON.parse(before.stdout) as { changes: { id: string; fields: { field: string }[] }[] };
    expect(planned.changes.map((c) => [c.id, c.fields.map((f) => f.field)])).toEqual([
      ['device:bob@corp.test/laptop', ['mtu']],
    ]);

    const others = { settings: read('settings.yaml'), carol: read('carol.yaml') };
    const adopt = await at(NOW, ['adopt', '-f', dir, 'device:bob@corp.test/laptop']);
    expect(adopt.code, describeResult(adopt)).toBe(0);
    // The endpoint and the mtu written, the entry gone: every other byte as before `acknowledge`.
    expect(read('bob.yaml')).toBe(
      BOB.replace('endpoint: "198.51.100.1:51820"   #', 'endpoint: "203.0.113.9:51820"   #').replace(
        'mtu: 1420',
        'mtu: 1280',
      ),
    );
    expect(read('settings.yaml')).toBe(others.settings);
    expect(read('carol.yaml')).toBe(others.carol);
    expect(adopt.stdout).toContain('-acknowledged:\n-  - key: "device:bob@corp.test/laptop"\n');
    expect(adopt.stderr).toMatch(
      / {2}~ device bob@corp\.test\/laptop: (endpoint, mtu|mtu, endpoint) \(.*bob\.yaml\)\n/,
    );
    expect(adopt.stderr).toMatch(
      / {2}- device bob@corp\.test\/laptop: its acknowledged: entry removed \(.*bob\.yaml\), the difference is declared now\n/,
    );

    const plan = await at(NOW, ['plan', '-f', dir]);
    expect(plan.code, describeResult(plan)).toBe(0);
    expect(plan.stdout + plan.stderr).not.toContain('acknowledged');
  });

  it('a hand-written acknowledgement of the whole object goes too, even one past its until', async () => {
    await patchDevice('bob@corp.test', 'laptop', { endpoint: '192.0.2.7:51820' });
    const clean = read('bob.yaml');
    const entry = `acknowledged:
  # Expired last year: ordinary drift again.
  - key: device:bob@corp.test/laptop
    field: endpoint
    value: "192.0.2.7:51820"
    reason: the lab router
    until: "2026-06-30"
`;
    ws.write('repo/bob.yaml', clean + entry);
    const drift = await at(NOW, ['plan', '-f', dir]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout + drift.stderr).toContain('acknowledgement expired 2026-06-30');

    const adopt = await at(NOW, ['adopt', '-f', dir, 'device:bob@corp.test/laptop']);
    expect(adopt.code, describeResult(adopt)).toBe(0);
    expect(read('bob.yaml')).toBe(
      clean.replace('endpoint: "203.0.113.9:51820"   #', 'endpoint: "192.0.2.7:51820"   #'),
    );
    const plan = await at(NOW, ['plan', '-f', dir]);
    expect(plan.code, describeResult(plan)).toBe(0);
  });

  it('an expired grant still on the server is listed and left; expires is never written', async () => {
    // Before the expiry, a hand change of the phone is adopted like any other.
    await patchDevice('carol@corp.test', 'phone', { mtu: 1300 });
    const early = await at(NOW, ['adopt', '-f', dir, 'device:carol@corp.test/phone', '--dry-run']);
    expect(early.code, describeResult(early)).toBe(0);
    expect(early.stdout, describeResult(early)).toContain('-        mtu: 1420\n+        mtu: 1300\n');

    const before = files();
    // Adopt writes files: it judges at its own clock and takes no --now.
    const now = await at(NOW, ['adopt', '-f', dir, '--all-drift', '--now', LATER]);
    expect(now.code).toBe(1);
    expect(now.stderr).toContain("unknown option '--now'");
    const named = await at(LATER, ['adopt', '-f', dir, 'device:carol@corp.test/tablet', 'user:carol@corp.test']);
    expect(named.code, describeResult(named)).toBe(0);
    // The phone (a hand change and an expiry) goes with its user; the tablet differs only by its expiry.
    expect(named.stderr).toContain(
      '  device carol@corp.test/phone: expired 2027-06-30: renew it by editing `expires`\n',
    );
    expect(named.stderr).toContain(
      '  device carol@corp.test/tablet: expired 2027-05-31: renew it by editing `expires`\n',
    );
    expect(named.stderr).toContain('  user carol@corp.test: expired 2027-06-30: renew it by editing `expires`\n');
    expect(named.stderr).toContain('adopt: no file changed\n');
    expect(files()).toEqual(before);

    // --all-drift lists them too, and writes nothing for them.
    const all = await at(LATER, ['adopt', '-f', dir, '--all-drift']);
    expect(all.code, describeResult(all)).toBe(0);
    expect(all.stderr).toContain('  device carol@corp.test/phone: expired 2027-06-30');
    expect(all.stderr).toContain('  device carol@corp.test/tablet: expired 2027-05-31');
    expect(all.stderr).toContain('  user carol@corp.test: expired 2027-06-30');
    expect(all.stderr).toContain('  rule *|accept|10.2.0.0/16|any: expired 2027-06-30');
    expect(files()).toEqual(before);
    // The expiry is still pending: the plan at that instant deletes the phone and demotes carol.
    const plan = await at(LATER, ['plan', '-f', dir, '--format', 'json']);
    expect(plan.code, describeResult(plan)).toBe(2);
    const ids = (JSON.parse(plan.stdout) as { changes: { id: string }[] }).changes.map((c) => c.id).sort();
    expect(ids).toEqual([
      'device:carol@corp.test/phone',
      'device:carol@corp.test/tablet',
      'rule:*|accept|10.2.0.0/16|any',
      'user:carol@corp.test',
    ]);

    // Once apply has carried the expiries out, nothing differs in effect: adopt lists nothing for them.
    const applied = await at(LATER, ['apply', '-f', dir, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const after = await at(LATER, ['adopt', '-f', dir, '--all-drift']);
    expect(after.code, describeResult(after)).toBe(0);
    expect(after.stderr).not.toContain('carol@corp.test');
    expect(after.stderr).not.toContain('10.2.0.0/16');
    expect(files()).toEqual(before);
    const clean = await at(LATER, ['plan', '-f', dir]);
    expect(clean.code, describeResult(clean)).toBe(0);
  });
});
