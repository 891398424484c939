import { describe, expect, it } from 'vitest';
import { planChanges, PlanError, type Change, type Plan } from '../../../src/plan/index.js';
import { fingerprintOf } from '../../../src/plan/fingerprint.js';
import { warningText } from '../../../src/views/plan-warnings.js';
import { inWords } from '../../helpers/plan-words.js';
import { planProblemsText } from '../../../src/views/plan-problems.js';
import {
  desired,
  device,
  KEY_A,
  KEY_B,
  liveDevice,
  liveRule,
  liveState,
  liveUser,
  OPTIONS,
  PSK_LIVE,
  PSK_NEW,
  rule,
  secret,
  user,
} from '../../helpers/plan-fixtures.js';
import { noteText } from '../../../src/views/notes.js';

const admin = () => liveUser('admin@example.com', { role: 'admin' });
const byId = (plan: Plan, id: string): Change | undefined => plan.changes.find((c) => c.id === id);
const actions = (plan: Plan) => plan.changes.map((c) => `${c.action} ${c.id}`);

describe('planChanges: creating', () => {
  it('creates users, their devices and rules from empty, devices and rules referring to the new user', () => {
    const plan = planChanges(
      desired({
        users: [
          user('Alice@Example.com', {
            role: 'admin',
            password: secret('alice-password-123', 'ALICE_PW'),
            devices: [
              device(
                'laptop',
                { public_key: KEY_A, mtu: 1380, use_default_mtu: false },
                { preshared_key: secret(PSK_NEW, 'PSK') },
              ),
            ],
            rules: [rule('10.1.0.0/16', { port_type: 'tcp', port_range: '443' })],
          }),
        ],
        rules: [rule('10.9.0.0/16', { action: 'drop' })],
      }),
      liveState({ users: [admin()] }),
      OPTIONS,
    );
    expect(actions(plan)).toEqual([
      'create user:alice@example.com',
      'create device:alice@example.com/laptop',
      'create rule:*|drop|10.9.0.0/16|any',
      'create rule:alice@example.com|accept|10.1.0.0/16|tcp:443 - 443',
    ]);
    const u = byId(plan, 'user:alice@example.com')!;
    expect(u.body).toEqual({ email: 'Alice@Example.com', role: 'admin' });
    expect(u.secrets).toEqual([{ field: 'password', ref: { env: 'ALICE_PW' } }]);
    const d = byId(plan, 'device:alice@example.com/laptop')!;
    expect(d.body).toEqual({
      user_id: { $ref: 'user:alice@example.com' },
      name: 'laptop',
      public_key: KEY_A,
      mtu: 1380,
      use_default_mtu: false,
    });
    expect(d.dependsOn).toEqual(['user:alice@example.com']);
    expect(d.secrets).toEqual([{ field: 'preshared_key', ref: { env: 'PSK' } }]);
    expect(byId(plan, 'rule:alice@example.com|accept|10.1.0.0/16|tcp:443 - 443')!.body).toEqual({
      action: 'accept',
      destination: '10.1.0.0/16',
      port_type: 'tcp',
      port_range: '443',
      user_id: { $ref: 'user:alice@example.com' },
    });
    expect(plan.summary).toEqual({ create: 4, update: 0, delete: 0, replace: 0, cascade: 0 });
    expect(plan.changes.every((c) => c.fingerprint === null)).toBe(true);
    const text = JSON.stringify(plan);
    expect(text).not.toContain('alice-password-123');
    expect(text).not.toContain(PSK_NEW);
  });
});

describe('planChanges: matching and normalising', () => {
  it('finds nothing to do when only spellings differ and undeclared fields differ', () => {
    const a = liveUser('alice@example.com', { role: 'admin' });
    const live = liveState({
      users: [admin(), a],
      devices: [
        liveDevice(a, 'laptop', {
          use_default_allowed_ips: false,
          allowed_ips: ['10.0.0.0/8', 'fd00:0:0:0::/64'],
          use_default_dns: false,
          dns: ['DNS.Example.com', '10.0.0.53'],
          use_default_endpoint: false,
          endpoint: 'VPN.example.com:51820',
          ipv4: '10.3.2.7',
          mtu: 1500,
          description: 'set by hand',
        }),
      ],
      rules: [
        liveRule({ destination: '10.0.0.1', port_type: 'tcp', port_range: '80', user_id: a.id }),
        liveRule({ destination: '2001:db8::/32', action: 'drop' }),
      ],
    });
    const plan = planChanges(
      desired({
        users: [
          user('ALICE@example.com', {
            role: 'admin',
            devices: [
              device(
                'laptop',
                {
                  allowed_ips: ['fd00::/64', '10.0.0.0/8'],
                  use_default_allowed_ips: false,
                  dns: ['10.0.0.53', 'dns.example.com'],
                  use_default_dns: false,
                  endpoint: 'vpn.example.com:51820',
                  use_default_endpoint: false,
                  ipv4: '10.3.2.7',
                  public_key: KEY_A,
                  // use_default_mtu on: mtu is the server's business, not compared.
                  use_default_persistent_keepalive: true,
                },
                { preshared_key: secret(PSK_LIVE, 'PSK') },
              ),
            ],
            rules: [rule('10.0.0.1/32', { port_type: 'tcp', port_range: '80 - 80' })],
          }),
        ],
        rules: [rule('2001:0db8:0000::/32', { action: 'drop' })],
      }),
      live,
      OPTIONS,
    );
    // Only the email's case is written (W3.5: the key stays case-insensitive, the server keeps the case given).
    expect(plan.changes.map((c) => [c.id, c.action, c.body])).toEqual([
      ['user:alice@example.com', 'update', { email: 'ALICE@example.com' }],
    ]);
    expect(plan.summary).toMatchObject({ create: 0, update: 1, delete: 0, replace: 0 });
  });

  it('compares pinned addresses by value: a server echoing the spelling a client sent is no change', () => {
    const a = liveUser('alice@example.com');
    const live = liveState({
      users: [admin(), a],
      devices: [liveDevice(a, 'laptop', { ipv4: '10.3.2.7', ipv6: 'FD00::3:2:AB' })],
    });
    const same = planChanges(
      desired({
        users: [
          user('alice@example.com', {
            devices: [device('laptop', { ipv4: ' 10.3.2.7', ipv6: 'fd00:0:0:0:0:3:2:0ab' })],
          }),
        ],
      }),
      live,
      OPTIONS,
    );
    expect(same.changes).toEqual([]);
    const moved = planChanges(
      desired({
        users: [user('alice@example.com', { devices: [device('laptop', { ipv4: '10.3.2.7', ipv6: 'fd00::3:2:ac' })] })],
      }),
      live,
      OPTIONS,
    );
    expect(byId(moved, 'device:alice@example.com/laptop')).toMatchObject({
      action: 'update',
      fields: [{ field: 'ipv6', before: 'FD00::3:2:AB', after: 'fd00::3:2:ac' }],
      body: { ipv6: 'fd00::3:2:ac' },
    });
  });

  it('does not compare <x> when use_default_<x> is declared on', () => {
    const a = liveUser('alice@example.com');
    const plan = planChanges(
      desired({ users: [user('alice@example.com', { devices: [device('laptop', { use_default_mtu: true })] })] }),
      liveState({ users: [admin(), a], devices: [liveDevice(a, 'laptop', { use_default_mtu: true, mtu: 1280 })] }),
      OPTIONS,
    );
    expect(plan.changes).toEqual([]);
  });

  it('plans field-level updates with before and after, and a changed preshared key as sensitive only', () => {
    const a = liveUser('alice@example.com');
    const laptop = liveDevice(a, 'laptop', { mtu: 1280 });
    const plan = planChanges(
      desired({
        users: [
          user('alice@example.com', {
            role: 'admin',
            devices: [
              device('laptop', { mtu: 1380, use_default_mtu: false }, { preshared_key: secret(PSK_NEW, 'PSK') }),
            ],
          }),
        ],
      }),
      liveState({ users: [admin(), a], devices: [laptop] }),
      OPTIONS,
    );
    expect(byId(plan, 'user:alice@example.com')).toMatchObject({
      action: 'update',
      liveId: a.id,
      fields: [{ field: 'role', before: 'unprivileged', after: 'admin' }],
      body: { role: 'admin' },
      phase: 1,
    });
    const d = byId(plan, 'device:alice@example.com/laptop')!;
    expect(d.action).toBe('update');
    expect(d.fields).toEqual([
      { field: 'use_default_mtu', before: true, after: false },
      { field: 'mtu', before: 1280, after: 1380 },
      { field: 'preshared_key', before: null, after: null, sensitive: true },
    ]);
    expect(d.body).toEqual({ use_default_mtu: false, mtu: 1380 });
    expect(d.secrets).toEqual([{ field: 'preshared_key', ref: { env: 'PSK' } }]);
    expect(d.fingerprint).toBe(fingerprintOf('device', laptop));
    expect(JSON.stringify(plan)).not.toContain(PSK_NEW);
    expect(JSON.stringify(plan)).not.toContain(PSK_LIVE);
  });

  it('refuses to guess between two live objects with one key', () => {
    const a1 = liveUser('bob@example.com');
    const a2 = liveUser('BOB@example.com');
    const error = (() => {
      try {
        planChanges(desired({ users: [user('bob@example.com')] }), liveState({ users: [admin(), a1, a2] }), OPTIONS);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PlanError);
    expect(planProblemsText((error as PlanError).problems)).toMatch(/2 users with the key bob@example.com/);
  });

  it('refuses to prune between duplicates too, reporting each key once', () => {
    const r1 = liveRule({ destination: '10.0.0.0/8' });
    const r2 = liveRule({ destination: '10.0.0.0/8' });
    expect(
      inWords(() =>
        planChanges(
          desired({ settings: { prune: true }, users: [user('admin@example.com')] }),
          liveState({ users: [liveUser('admin@example.com', { role: 'admin' })], rules: [r1, r2] }),
          OPTIONS,
        ),
      ),
    ).toThrow(/^the server holds 2 rules with the key \*\|accept\|10\.0\.0\.0\/8\|any; netform will not guess/);
  });

  it('matches a single port whichever form the server answers ("443" as 0.7.36 and netform now, "443 - 443" as older netform) and the file uses', () => {
    for (const answered of ['443', '443 - 443']) {
      for (const declared of ['443', '443-443', '443 - 443', ' 443 ']) {
        const live = liveRule({ destination: '10.1.0.0/16', port_type: 'tcp', port_range: answered });
        const plan = planChanges(
          desired({
            rules: [rule('10.1.0.0/16', { port_type: 'tcp', port_range: declared })],
            settings: { prune: true },
          }),
          liveState({ users: [admin()], rules: [live] }),
          OPTIONS,
        );
        expect(plan.changes, `${answered} vs ${declared}`).toEqual([]);
      }
    }
  });

  it('replaces an overlapping live rule of the same owner and action (delete, then create: never an update in place)', () => {
    const old = liveRule({ destination: '10.0.0.0/8', port_type: 'tcp', port_range: '80 - 80' });
    const otherAction = liveRule({ destination: '10.0.0.0/8', action: 'drop' });
    const plan = planChanges(
      desired({
        rules: [
          rule('10.1.0.0/16', { port_type: 'tcp', port_range: '80-443' }),
          rule('10.0.0.0/8', { action: 'drop' }),
        ],
        settings: { prune: true },
      }),
      liveState({ users: [admin()], rules: [old, otherAction] }),
      OPTIONS,
    );
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]).toMatchObject({
      action: 'replace',
      kind: 'rule',
      liveId: old.id,
      key: '*|accept|10.1.0.0/16|tcp:80 - 443',
      fields: [
        { field: 'destination', before: '10.0.0.0/8', after: '10.1.0.0/16' },
        { field: 'port_range', before: '80 - 80', after: '80-443' },
      ],
      body: { action: 'accept', destination: '10.1.0.0/16', port_type: 'tcp', port_range: '80-443', user_id: null },
    });
    expect(noteText(plan.changes[0]!.note)).toContain('between the two requests the old rule no longer filters');
    expect(plan.summary).toMatchObject({ create: 0, update: 0, replace: 1, delete: 0 });
  });

  it('deletes other overlapping rules first when prune is on; prune off, a second overlapping live rule is a plan error', () => {
    const r1 = liveRule({ destination: '10.1.0.0/16' });
    const r2 = liveRule({ destination: '10.2.0.0/16' });
    const d = desired({ rules: [rule('10.0.0.0/8')], settings: { prune: true } });
    const pruned = planChanges(d, liveState({ users: [admin()], rules: [r1, r2] }), OPTIONS);
    expect(actions(pruned)).toEqual(['delete rule:*|accept|10.2.0.0/16|any', 'replace rule:*|accept|10.0.0.0/8|any']);
    expect(pruned.changes[0]!.phase).toBeLessThan(pruned.changes[1]!.phase!);
    expect(pruned.changes[1]!.dependsOn).toEqual(['rule:*|accept|10.2.0.0/16|any']);
    expect(
      inWords(() =>
        planChanges(
          { ...d, settings: { ...d.settings, prune: false } },
          liveState({ users: [admin()], rules: [r1, r2] }),
          OPTIONS,
        ),
      ),
    ).toThrow(
      /rule accept 10\.0\.0\.0\/8 \(global\) overlaps the live rule accept 10\.2\.0\.0\/16 \(global\).*prune is off/,
    );
  });
});

describe('planChanges: prune, manage, protect, absent', () => {
  const setup = () => {
    const a = liveUser('alice@example.com');
    const b = liveUser('bob@example.com');
    const c = liveUser('carol@partner.org');
    return {
      a,
      b,
      c,
      live: liveState({
        users: [admin(), a, b, c],
        devices: [liveDevice(a, 'laptop'), liveDevice(a, 'old-phone'), liveDevice(b, 'phone'), liveDevice(c, 'tablet')],
        rules: [
          liveRule({ destination: '10.5.0.0/16', user_id: b.id }),
          liveRule({ destination: '10.7.0.0/16', user_id: a.id }),
          liveRule({ destination: '192.168.0.0/24' }),
          liveRule({ destination: '10.8.0.0/16', action: 'drop' }),
        ],
      }),
    };
  };
  const declared = () => [
    user('admin@example.com', { role: 'admin' }),
    user('alice@example.com', { devices: [device('laptop')] }),
  ];

  it('with prune off, adopts what exists and deletes nothing', () => {
    const { live } = setup();
    const plan = planChanges(desired({ users: declared() }), live, OPTIONS);
    expect(plan.changes).toEqual([]);
  });

  it('with prune on, deletes what no file declares inside manage, a user with its devices and rules as cascade', () => {
    const { live, b } = setup();
    const plan = planChanges(
      desired({
        users: declared(),
        settings: { prune: true, manage: { users: ['*@example.com'], rules: ['10.0.0.0/8'] } },
      }),
      live,
      OPTIONS,
    );
    expect(actions(plan)).toEqual([
      'delete device:alice@example.com/old-phone',
      'delete rule:*|drop|10.8.0.0/16|any',
      'delete rule:alice@example.com|accept|10.7.0.0/16|any',
      'delete user:bob@example.com',
    ]);
    const bob = byId(plan, 'user:bob@example.com')!;
    expect(bob.liveId).toBe(b.id);
    expect(bob.cascade?.map((x) => x.label)).toEqual([
      'device bob@example.com/phone',
      'rule accept 10.5.0.0/16 (bob@example.com)',
    ]);
    expect(plan.summary).toMatchObject({ delete: 4, cascade: 2 });
    expect(plan.limits.find((l) => l.kind === 'delete')).toMatchObject({ planned: 6 });
  });

  it('never deletes a protected user, and says so', () => {
    const { live } = setup();
    const plan = planChanges(
      desired({
        users: declared(),
        settings: { prune: true, manage: { users: ['*@example.com'], rules: [] }, protect: { users: ['bob@*'] } },
      }),
      live,
      OPTIONS,
    );
    expect(plan.changes.map((c) => c.id)).not.toContain('user:bob@example.com');
    expect(plan.warnings.map(warningText)).toContain(
      'not deleting user bob@example.com: it is protected (settings.protect)',
    );
  });

  it('deletes absent users and devices even with prune off', () => {
    const { live } = setup();
    const plan = planChanges(
      desired({
        users: declared(),
        absent: {
          users: [{ email: 'Carol@partner.org' }, { email: 'nobody@example.com' }],
          devices: [{ user: 'alice@example.com', name: 'old-phone' }],
        },
      }),
      live,
      OPTIONS,
    );
    expect(actions(plan)).toEqual(['delete device:alice@example.com/old-phone', 'delete user:carol@partner.org']);
    expect(byId(plan, 'user:carol@partner.org')!.cascade).toHaveLength(1);
  });

  it('refuses a user both declared and absent', () => {
    expect(
      inWords(() =>
        planChanges(
          desired({ users: [user('a@example.com')], absent: { users: [{ email: 'A@example.com' }], devices: [] } }),
          liveState(),
          OPTIONS,
        ),
      ),
    ).toThrow(/both declared and listed under absent/);
  });
});

describe('planChanges: the token owner and the last admin', () => {
  it('never deletes or demotes the token owner', () => {
    const me = liveUser('admin@example.com', { role: 'admin' });
    const other = liveUser('other@example.com', { role: 'admin' });
    const plan = planChanges(
      desired({ users: [user('ADMIN@example.com', { role: 'unprivileged' })], settings: { prune: true } }),
      liveState({ users: [me, other] }),
      OPTIONS,
    );
    // The email's case is written (W3.5); the demotion is not, and leaves the plan pending.
    expect(actions(plan)).toEqual(['update user:admin@example.com', 'delete user:other@example.com']);
    expect(plan.changes[0]!.body).toEqual({ email: 'ADMIN@example.com' });
    expect(plan.warnings.map(warningText)).toContain(
      'not demoting user ADMIN@example.com: the API token in use belongs to it',
    );
    expect(plan.outcome?.pending).toEqual([expect.objectContaining({ reason: 'guard', id: 'user:admin@example.com' })]);
  });

  it('deletes no admin when the token owner is unknown', () => {
    const plan = planChanges(
      desired({ settings: { prune: true }, users: [user('keep@example.com', { role: 'admin' })] }),
      liveState({
        users: [
          liveUser('keep@example.com', { role: 'admin' }),
          liveUser('ci@example.com', { role: 'admin' }),
          liveUser('u@example.com'),
        ],
      }),
      { ...OPTIONS, tokenUser: null },
    );
    expect(actions(plan)).toEqual(['delete user:u@example.com']);
    expect(plan.warnings.map(warningText).join('\n')).toMatch(
      /not deleting user ci@example.com: it is an admin and the token's owner is unknown/,
    );
  });

  it('keeps the last admin', () => {
    const plan = planChanges(
      desired({
        users: [user('a@example.com', { role: 'unprivileged' }), user('b@example.com', { role: 'unprivileged' })],
      }),
      liveState({
        users: [liveUser('a@example.com', { role: 'admin' }), liveUser('b@example.com', { role: 'admin' })],
      }),
      { ...OPTIONS, tokenUser: null },
    );
    expect(actions(plan)).toEqual(['update user:a@example.com']);
    expect(plan.warnings.map(warningText)).toContain(
      'not demoting user b@example.com: it would leave the server without an admin',
    );
  });
});

describe('planChanges: limits', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => liveUser(`u${i}@example.com`));

  it('applies the default delete limit (25%, at least 5) with cascades counted', () => {
    const live = liveState({ users: [admin(), ...many(19)] });
    const plan = planChanges(desired({ users: [user('admin@example.com')], settings: { prune: true } }), live, OPTIONS);
    expect(plan.limits[0]).toEqual({
      kind: 'delete',
      planned: 19,
      allowed: 5,
      source: { code: 'default', percent: 25, atLeast: 5 },
      exceeded: true,
    });
    const lifted = planChanges(desired({ users: [user('admin@example.com')], settings: { prune: true } }), live, {
      ...OPTIONS,
      allowDeletes: 19,
    });
    expect(lifted.limits[0]).toMatchObject({ planned: 19, allowed: 19, source: '--allow-deletes 19', exceeded: false });
  });

  it('applies limits from the files: percent of live objects, or a count', () => {
    const live = liveState({ users: [admin(), ...many(9)] });
    const d = desired({
      users: [
        user('admin@example.com', { role: 'unprivileged' }),
        ...many(9).map((u) => user(u.email, { role: 'admin' })),
      ],
      settings: { limits: { delete: { kind: 'count', value: 0 }, update: { kind: 'percent', value: 50 } } },
    });
    const plan = planChanges(d, live, OPTIONS);
    expect(plan.limits).toEqual([
      { kind: 'delete', planned: 0, allowed: 0, source: '0', exceeded: false },
      { kind: 'update', planned: 9, allowed: 5, source: '50%', exceeded: true },
    ]);
  });
});

describe('planChanges: replace for servers that ignore device updates', () => {
  it('plans delete-then-create keeping keys, pinned addresses and hand-set values', () => {
    const a = liveUser('alice@example.com');
    const laptop = liveDevice(a, 'laptop', { use_default_dns: false, dns: ['9.9.9.9'], description: 'kept' });
    // The hand-set dns is kept because the file names dns in ignore_changes (left out, it would mean the default: W3.5).
    const d = desired({
      users: [
        user('alice@example.com', {
          devices: [
            {
              ...device('laptop', { mtu: 1400, use_default_mtu: false, public_key: KEY_B }),
              ignore_changes: ['dns'],
            },
          ],
        }),
      ],
    });
    const plan = planChanges(d, liveState({ users: [admin(), a], devices: [laptop] }), { ...OPTIONS, replace: true });
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]).toMatchObject({
      action: 'replace',
      liveId: laptop.id,
      keepFromLive: ['preshared_key'],
      body: {
        user_id: a.id,
        name: 'laptop',
        description: 'kept',
        public_key: KEY_B,
        ipv4: '10.3.2.2',
        ipv6: 'fd00::3:2:2',
        use_default_dns: false,
        dns: ['9.9.9.9'],
        use_default_mtu: false,
        mtu: 1400,
        use_default_allowed_ips: true,
      },
    });
    expect(plan.changes[0]!.body).not.toHaveProperty('preshared_key');
    expect(plan.summary.replace).toBe(1);
    // Only name and description changes stay updates: those such servers do apply.
    const described = planChanges(
      desired({
        users: [
          user('alice@example.com', {
            devices: [{ ...device('laptop', { description: 'new' }), ignore_changes: ['dns'] }],
          }),
        ],
      }),
      liveState({ users: [admin(), a], devices: [laptop] }),
      { ...OPTIONS, replace: true },
    );
    expect(actions(described)).toEqual(['update device:alice@example.com/laptop']);
  });
});

describe('fingerprintOf', () => {
  it('ignores tunnel statistics and updated_at, and notices real edits', () => {
    const a = liveUser('alice@example.com');
    const d = liveDevice(a, 'laptop');
    const f = fingerprintOf('device', d);
    expect(
      fingerprintOf('device', {
        ...d,
        rx_bytes: 5,
        tx_bytes: 9,
        latest_handshake: '2024-02-02T00:00:00Z',
        remote_ip: '1.2.3.4',
        updated_at: '2025-01-01T00:00:00Z',
      }),
    ).toBe(f);
    expect(fingerprintOf('device', { ...d, mtu: 1300 })).not.toBe(f);
    expect(fingerprintOf('device', { ...d, preshared_key: PSK_NEW })).not.toBe(f);
    expect(f).not.toContain(PSK_LIVE);
  });
});

describe('planChanges: the token owner given by --token-user', () => {
  it('is a plan error when it names no live user, or a user that is not an admin', () => {
    const live = liveState({
      users: [liveUser('admin@example.com', { role: 'admin' }), liveUser('plain@example.com')],
    });
    expect(inWords(() => planChanges(desired(), live, { ...OPTIONS, tokenUser: 'admni@example.com' }))).toThrow(
      /admni@example.com names no user on the server/,
    );
    expect(inWords(() => planChanges(desired(), live, { ...OPTIONS, tokenUser: 'plain@example.com' }))).toThrow(
      /plain@example.com is not an admin/,
    );
    expect(() => planChanges(desired(), live, { ...OPTIONS, tokenUser: 'ADMIN@example.com' })).not.toThrow();
  });
});

describe('planChanges: a changed rule is a replacement', () => {
  const setup = () => {
    const alice = liveUser('alice@example.com');
    const old = liveRule({ destination: '10.1.0.0/16', user_id: alice.id, port_type: 'tcp', port_range: '22' });
    const files = (prune: boolean) =>
      desired({
        settings: { prune },
        users: [user('alice@example.com', { rules: [rule('10.1.0.0/16', { port_type: 'tcp', port_range: '2222' })] })],
      });
    return { live: liveState({ users: [admin(), alice], rules: [old] }), old, files };
  };

  it('prune on: the port change is one -/+ of the old rule, counted once as a replacement', () => {
    const { live, old, files } = setup();
    const plan = planChanges(files(true), live, OPTIONS);
    expect(actions(plan)).toEqual(['replace rule:alice@example.com|accept|10.1.0.0/16|tcp:2222 - 2222']);
    expect(plan.changes[0]).toMatchObject({
      liveId: old.id,
      fields: [{ field: 'port_range', before: '22', after: '2222' }],
    });
    expect(plan.summary).toMatchObject({ create: 0, replace: 1, delete: 0 });
    expect(plan.undeclared!.filter((u) => u.kind === 'rule')).toEqual([]);
  });

  it('prune off: a create, which says in words that the old rule stays and its access remains', () => {
    const { live, files } = setup();
    const plan = planChanges(files(false), live, OPTIONS);
    expect(actions(plan)).toEqual(['create rule:alice@example.com|accept|10.1.0.0/16|tcp:2222 - 2222']);
    expect(noteText(plan.changes[0]!.note)).toBe(
      'prune is off: the live rule accept 10.1.0.0/16 tcp 22 (alice@example.com) that no file declares stays, and the access it grants remains',
    );
  });

  it('an action change on the same destination is a replacement too', () => {
    const alice = liveUser('alice@example.com');
    const old = liveRule({ destination: '10.1.0.0/16', user_id: alice.id });
    const plan = planChanges(
      desired({
        settings: { prune: true },
        users: [user('alice@example.com', { rules: [rule('10.1.0.0/16', { action: 'drop' })] })],
      }),
      liveState({ users: [admin(), alice], rules: [old] }),
      OPTIONS,
    );
    expect(plan.changes).toMatchObject([
      { action: 'replace', liveId: old.id, fields: [{ field: 'action', before: 'accept', after: 'drop' }] },
    ]);
  });
});

describe('planChanges: unique values (conflicts, and freeing before taking)', () => {
  it('a create whose public key a live device holds, which the plan keeps, is a plan error naming both', () => {
    const alice = liveUser('alice@example.com');
    const bob = liveUser('bob@example.com');
    const live = liveState({
      users: [admin(), alice, bob],
      devices: [liveDevice(alice, 'laptop', { public_key: KEY_A })],
    });
    expect(
      inWords(() =>
        planChanges(
          desired({ users: [user('bob@example.com', { devices: [device('phone', { public_key: KEY_A })] })] }),
          live,
          OPTIONS,
        ),
      ),
    ).toThrow(
      /device bob@example.com\/phone needs public_key .*, which the live device alice@example.com\/laptop \(of alice@example.com\) holds/,
    );
  });

  it("an email change (prune on): the new user's device replaces the old user's device, keeping its preshared key and addresses", () => {
    const old = liveUser('old@example.com');
    const laptop = liveDevice(old, 'laptop', { public_key: KEY_A });
    const plan = planChanges(
      desired({
        settings: { prune: true },
        users: [
          user('admin@example.com'),
          user('new@example.com', { devices: [device('laptop', { public_key: KEY_A })] }),
        ],
      }),
      liveState({ users: [admin(), old], devices: [laptop] }),
      OPTIONS,
    );
    expect(actions(plan)).toEqual([
      'create user:new@example.com',
      'replace device:new@example.com/laptop',
      'delete user:old@example.com',
    ]);
    const replace = plan.changes[1]!;
    expect(replace).toMatchObject({
      liveId: laptop.id,
      keepFromLive: ['preshared_key'],
      body: { ipv4: laptop.ipv4, ipv6: laptop.ipv6, user_id: { $ref: 'user:new@example.com' } },
    });
    expect(plan.changes[2]!.cascade ?? []).toEqual([]);
  });

  it('a pinned address held by a device the plan deletes: the deletion goes first', () => {
    const alice = liveUser('alice@example.com');
    const old = liveDevice(alice, 'old', { public_key: KEY_B, ipv4: '10.3.2.9' });
    const plan = planChanges(
      desired({
        settings: { prune: true },
        users: [
          user('admin@example.com'),
          user('alice@example.com', { devices: [device('new', { public_key: KEY_A, ipv4: '10.3.2.9' })] }),
        ],
      }),
      liveState({ users: [admin(), alice], devices: [old] }),
      OPTIONS,
    );
    expect(actions(plan)).toEqual(['delete device:alice@example.com/old', 'create device:alice@example.com/new']);
    expect(plan.changes[1]!.dependsOn).toEqual(['device:alice@example.com/old']);
  });
});

describe('planChanges: settings.port_rules false, rules compared as the server stores them (without ports)', () => {
  const ssh = rule('10.0.0.0/8', { port_type: 'tcp', port_range: '22' });

  it('a declared rule with ports matches the live rule the server stored without them: nothing to do', () => {
    const live = liveRule({ destination: '10.0.0.0/8' });
    const plan = planChanges(
      desired({ rules: [ssh], settings: { port_rules: false } }),
      liveState({ users: [admin()], rules: [live] }),
      OPTIONS,
    );
    expect(plan.changes).toEqual([]);
    // With port rules on, the same live rule is another rule: the declared one is created beside it.
    const on = planChanges(desired({ rules: [ssh] }), liveState({ users: [admin()], rules: [live] }), OPTIONS);
    expect(actions(on)).toEqual(['create rule:*|accept|10.0.0.0/8|tcp:22 - 22']);
  });

  it('a live rule stored with its ports still matches exactly', () => {
    const live = liveRule({ destination: '10.0.0.0/8', port_type: 'tcp', port_range: '22 - 22' });
    const plan = planChanges(
      desired({ rules: [ssh], settings: { port_rules: false } }),
      liveState({ users: [admin()], rules: [live] }),
      OPTIONS,
    );
    expect(plan.changes).toEqual([]);
  });

  it('a live portless rule the stripped one overlaps is replaced, or with a second one a plan error; a drop beside it is created', () => {
    const live = liveRule({ destination: '10.1.0.0/16' });
    const other = liveRule({ destination: '10.2.0.0/16' });
    const replaced = planChanges(
      desired({ rules: [ssh], settings: { port_rules: false, prune: false } }),
      liveState({ users: [admin()], rules: [live] }),
      OPTIONS,
    );
    expect(actions(replaced)).toEqual(['replace rule:*|accept|10.0.0.0/8|tcp:22 - 22']);
    expect(noteText(replaced.changes[0]!.note)).toContain('which it overlaps');
    // With port rules on, the two never overlap (one has ports, the other none): a create.
    const on = planChanges(desired({ rules: [ssh] }), liveState({ users: [admin()], rules: [live] }), OPTIONS);
    expect(actions(on)).toEqual(['create rule:*|accept|10.0.0.0/8|tcp:22 - 22']);
    expect(
      inWords(() =>
        planChanges(
          desired({ rules: [ssh], settings: { port_rules: false, prune: false } }),
          liveState({ users: [admin()], rules: [live, other] }),
          OPTIONS,
        ),
      ),
    ).toThrow(/rule accept 10\.0\.0\.0\/8 tcp 22 \(global\) overlaps the live rule accept 10\.2\.0\.0\/16 \(global\)/);
    const drop = rule('10.0.0.0/8', { action: 'drop', port_type: 'tcp', port_range: '22' });
    const plan = planChanges(
      desired({ rules: [drop], settings: { port_rules: false, prune: false } }),
      liveState({ users: [admin()], rules: [live, other] }),
      OPTIONS,
    );
    expect(actions(plan)).toEqual(['create rule:*|drop|10.0.0.0/8|tcp:22 - 22']);
  });
});
