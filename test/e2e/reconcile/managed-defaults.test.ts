/**
 * W3.5 against real server processes: fields a file leaves out are managed at their default
 * (`role: unprivileged`, `use_default_<x>: true`), `ignore_changes` opts out, changes that exist
 * only because of that meaning are "now managed" (listed first, refused by `apply -f` without
 * `--allow-now-managed`, exit 3), and "the server matches" is said only when it does (the plan's
 * outcome: pending exits 2, kept exits 0).
 */
import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import {
  create,
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

const MATCHES = 'No changes: the server matches the desired state.';

type JsonChange = {
  id: string;
  action: string;
  note?: string;
  now_managed?: string[];
  fields: { field: string; before: unknown; after: unknown }[];
};

function jsonPlan(stdout: string): {
  changes: JsonChange[];
  outcome: { status: string; pending: { reason: string }[]; kept: { reason: string; text: string }[] };
  warnings: string[];
} {
  return JSON.parse(stdout);
}

describe('an exported repository (version 2): hand tampering is drift, and apply -f --yes undoes it', () => {
  let server: TestServer;
  let ws: Workspace;
  let carolLaptop: string;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      const carol = await create(s, 'users', { email: 'carol@corp.test' });
      carolLaptop = (await create(s, 'devices', { user_id: carol.id, name: 'laptop', public_key: wgKey() })).id;
      await create(s, 'rules', { action: 'accept', destination: '10.20.0.0/16' });
    },
  );

  it('exports, plans clean, then sees a hand promotion and an endpoint change', async () => {
    const exported = await netform(server, ['export']);
    expect(exported.code, describeResult(exported)).toBe(0);
    const file = ws.write('export.yaml', exported.stdout);
    expect(exported.stdout).not.toMatch(/^\s+(role: unprivileged|use_default_\w+:)/m);
    expect(exported.stdout).toMatch(/^version: 2$/m);
    const clean = await netform(server, ['plan', '-f', file]);
    expect(clean.stdout, describeResult(clean)).toContain(MATCHES);
    expect(clean.code).toBe(0);

    expect((await server.api('PATCH', '/v0/users/carol@corp.test', { user: { role: 'admin' } })).status).toBe(200);
    const tampered = await server.api('PATCH', `/v0/devices/${carolLaptop}`, {
      device: {
        use_default_allowed_ips: false,
        allowed_ips: ['0.0.0.0/0'],
        use_default_endpoint: false,
        endpoint: 'evil.example.net:51820',
      },
    });
    expect(tampered.status).toBe(200);

    const drift = await netform(server, ['drift', '-f', file, '--format', 'json']);
    expect(drift.code, describeResult(drift)).toBe(2);
    const plan = jsonPlan(drift.stdout);
    expect(plan.outcome.status).toBe('changes');
    const user = plan.changes.find((c) => c.id === 'user:carol@corp.test')!;
    expect(user.fields).toEqual([{ field: 'role', before: 'admin', after: 'unprivileged' }]);
    // Version 2 means the defaults as written: an ordinary change, not "now managed".
    expect(user.now_managed).toBeUndefined();
    expect(user.note ?? '').not.toContain('now managed');
    const device = plan.changes.find((c) => c.id === 'device:carol@corp.test/laptop')!;
    expect(device.fields.map((f) => [f.field, f.before, f.after])).toEqual([
      ['use_default_allowed_ips', false, true],
      ['use_default_endpoint', false, true],
    ]);
    expect(device.now_managed).toBeUndefined();

    const text = await netform(server, ['drift', '-f', file]);
    expect(text.code).toBe(2);
    expect(text.stdout).not.toContain('now managed');
    expect(text.stdout).not.toContain(MATCHES);
  });

  it('apply -f --yes reverts the hand promotion and the tunnel (a scheduled remediation needs no flag)', async () => {
    const file = ws.path('export.yaml');
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const state = await serverState(server);
    expect(state.users.find((u) => u.email === 'carol@corp.test').role).toBe('unprivileged');
    const laptop = state.devices.find((d) => d.id === carolLaptop);
    expect(laptop).toMatchObject({ use_default_allowed_ips: true, use_default_endpoint: true });
    expect(laptop.endpoint).not.toBe('evil.example.net:51820');
    const after = await netform(server, ['plan', '-f', file]);
    expect(after.stdout, describeResult(after)).toContain(MATCHES);
  });

  it('apply of a reviewed plan makes them: the review was the approval', async () => {
    const file = ws.path('export.yaml');
    expect((await server.api('PATCH', '/v0/users/carol@corp.test', { user: { role: 'admin' } })).status).toBe(200);
    const saved = ws.path('plan.json');
    const planned = await netform(server, ['plan', '-f', file, '-o', saved]);
    expect(planned.code, describeResult(planned)).toBe(2);
    const applied = await netform(server, ['apply', saved]);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect((await serverState(server)).users.find((u) => u.email === 'carol@corp.test').role).toBe('unprivileged');
  });
});

describe('upgrading: a file written for the old meaning, with a hand-set split tunnel', () => {
  let server: TestServer;
  let ws: Workspace;
  let laptopId: string;
  const key = wgKey();
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      const dana = await create(s, 'users', { email: 'dana@corp.test' });
      laptopId = (
        await create(s, 'devices', {
          user_id: dana.id,
          name: 'laptop',
          public_key: key,
          use_default_allowed_ips: false,
          allowed_ips: ['10.0.0.0/8'],
        })
      ).id;
    },
  );
  const oldFile = () =>
    ws.write(
      'netform.yaml',
      `version: 1
settings: { manage: { users: ["*@corp.test"] } }
users:
  - email: dana@corp.test
    devices:
      - { name: laptop, public_key: "${key}" }
`,
    );

  it('plans the tunnel back to the default as "now managed", and apply -f refuses it', async () => {
    const file = oldFile();
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stdout).toMatch(/use_default_allowed_ips: false -> true/);
    expect(plan.stdout).toContain(
      "now managed: the file leaves allowed_ips out, which means use_default_allowed_ips: true (the server's default)",
    );
    const refused = await netform(server, ['apply', '-f', file, '--yes']);
    expect(refused.code, describeResult(refused)).toBe(3);
    expect(refused.stderr).toMatch(/^Refused: the plan is over a safety limit\. Nothing was changed\./m);
    const laptop = (await serverState(server)).devices.find((d) => d.id === laptopId);
    expect(laptop).toMatchObject({ use_default_allowed_ips: false, allowed_ips: ['10.0.0.0/8'] });
  });

  it('is clean once the file says what it means (the value, or ignore_changes, which the plan mentions)', async () => {
    const pinned = ws.write(
      'pinned/netform.yaml',
      `version: 1
settings: { manage: { users: ["*@corp.test"] } }
users:
  - email: dana@corp.test
    devices:
      - { name: laptop, public_key: "${key}", allowed_ips: [10.0.0.0/8] }
`,
    );
    const clean = await netform(server, ['plan', '-f', pinned]);
    expect(clean.stdout, describeResult(clean)).toContain(MATCHES);
    expect(clean.code).toBe(0);

    const ignoring = ws.write(
      'ignoring/netform.yaml',
      `version: 1
settings: { manage: { users: ["*@corp.test"] }, ignore_changes: { devices: [allowed_ips] } }
users:
  - email: dana@corp.test
    devices:
      - { name: laptop, public_key: "${key}" }
`,
    );
    const ignored = await netform(server, ['plan', '-f', ignoring, '--format', 'json']);
    expect(ignored.code, describeResult(ignored)).toBe(0);
    const plan = jsonPlan(ignored.stdout);
    expect(plan.changes).toEqual([]);
    expect(plan.outcome.status).toBe('kept');
    expect(plan.outcome.kept).toEqual([
      expect.objectContaining({ reason: 'ignored', text: expect.stringContaining('use_default_allowed_ips') }),
    ]);
    const text = await netform(server, ['plan', '-f', ignoring]);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain(MATCHES);
    expect(text.stdout).toContain(
      'No changes, but not everything matches: 1 field differs under ignore_changes, not managed (device:dana@corp.test/laptop use_default_allowed_ips).',
    );
  });

  it('applies it with --allow-now-managed: removing the field from the file means the default', async () => {
    const applied = await netform(server, ['apply', '-f', oldFile(), '--yes', '--allow-now-managed']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const laptop = (await serverState(server)).devices.find((d) => d.id === laptopId);
    expect(laptop.use_default_allowed_ips).toBe(true);
    const after = await netform(server, ['plan', '-f', oldFile()]);
    expect(after.stdout, describeResult(after)).toContain(MATCHES);
  });
});

describe('"the server matches" only when it does', () => {
  let server: TestServer;
  let ws: Workspace;
  const erinKey = wgKey();
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      await create(s, 'users', { email: 'frank.contractor@case.test' });
      const erin = await create(s, 'users', { email: 'erin@target.test' });
      await create(s, 'devices', { user_id: erin.id, name: 'phone', public_key: erinKey });
      await create(s, 'users', { email: 'gina@target.test' });
      await create(s, 'users', { email: 'mallory@undeclared.test', role: 'admin' });
      await create(s, 'users', { email: 'plain@undeclared.test' });
      await create(s, 'users', { email: 'vip@protect.test', role: 'admin' });
      await create(s, 'rules', { action: 'drop', destination: '10.66.0.0/16', port_type: 'tcp', port_range: '22' });
    },
  );

  it('the token owner: a demotion the guard cancels is pending (exit 2), in plan and drift', async () => {
    const file = ws.write(
      'owner.yaml',
      `version: 1
settings: { manage: { users: ["${TEST_ADMIN_EMAIL}"], rules: [] } }
users:
  - { email: ${TEST_ADMIN_EMAIL}, role: unprivileged }
`,
    );
    for (const command of ['plan', 'drift']) {
      const text = await netform(server, [command, '-f', file]);
      expect(text.code, describeResult(text)).toBe(2);
      expect(text.stdout).not.toContain(MATCHES);
      expect(text.stdout).toContain('No changes planned, but the server does not match the desired state');
      expect(text.stdout).toContain('the API token in use belongs to it');
    }
    const json = jsonPlan((await netform(server, ['plan', '-f', file, '--format', 'json'])).stdout);
    expect(json.outcome.status).toBe('pending');
    expect(json.outcome.pending.map((p) => p.reason)).toEqual(['guard']);
    const markdown = await netform(server, ['plan', '-f', file, '--format', 'markdown']);
    expect(markdown.code).toBe(2);
    expect(markdown.stdout).not.toContain('matches the desired state');
  });

  it('--target: changes left out keep it pending; a user target takes its devices and rules', async () => {
    const file = ws.write(
      'target.yaml',
      `version: 1
settings: { manage: { users: ["*@target.test"], rules: [] } }
users:
  - email: erin@target.test
    devices:
      - { name: phone, public_key: "${erinKey}", mtu: 1380 }
    rules:
      - { action: accept, destination: 10.30.0.0/16 }
  - email: gina@target.test
    rules:
      - { action: accept, destination: 10.31.0.0/16 }
`,
    );
    const erin = await netform(server, ['plan', '-f', file, '--target', 'user:erin@target.test', '--format', 'json']);
    expect(erin.code, describeResult(erin)).toBe(2);
    const plan = jsonPlan(erin.stdout);
    expect(plan.changes.map((c) => c.id).sort()).toEqual([
      'device:erin@target.test/phone',
      'rule:erin@target.test|accept|10.30.0.0/16|any',
    ]);
    expect(plan.outcome.pending).toEqual([expect.objectContaining({ reason: 'target' })]);

    // A target with nothing of its own to do, while others have changes: not "matches".
    const done = await netform(server, ['apply', '-f', file, '--yes', '--target', 'user:erin@target.test']);
    expect(done.code, describeResult(done)).toBe(0);
    const left = await netform(server, ['plan', '-f', file, '--target', 'user:erin@target.test']);
    expect(left.code, describeResult(left)).toBe(2);
    expect(left.stdout).not.toContain(MATCHES);
    expect(left.stdout).toContain('1 change left out by --target');
  });

  it('a case-only email change is one PATCH of email', async () => {
    const file = ws.write(
      'case.yaml',
      `version: 1
settings: { manage: { users: ["*@case.test"], rules: [] } }
users:
  - { email: Frank.Contractor@case.test }
`,
    );
    const plan = jsonPlan((await netform(server, ['plan', '-f', file, '--format', 'json'])).stdout);
    expect(plan.changes.map((c) => [c.id, c.action, c.fields])).toEqual([
      [
        'user:frank.contractor@case.test',
        'update',
        [{ field: 'email', before: 'frank.contractor@case.test', after: 'Frank.Contractor@case.test' }],
      ],
    ]);
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const emails = (await serverState(server)).users.map((u) => u.email);
    expect(emails).toContain('Frank.Contractor@case.test');
    expect(emails).not.toContain('frank.contractor@case.test');
    const again = await netform(server, ['plan', '-f', file]);
    expect(again.stdout, describeResult(again)).toContain(MATCHES);
  });

  it('undeclared objects with prune off: an admin is pending, others are kept (exit 0, never "matches")', async () => {
    const base = (extra: string) =>
      ws.write(
        'undeclared.yaml',
        `version: 1
settings: { manage: { users: ["*@undeclared.test"], rules: [] }${extra} }
users:
  - { email: plain@undeclared.test }
`,
      );
    const admin = await netform(server, ['drift', '-f', base(''), '--format', 'json']);
    expect(admin.code, describeResult(admin)).toBe(2);
    expect(jsonPlan(admin.stdout).outcome.pending).toEqual([
      expect.objectContaining({ reason: 'undeclared', text: expect.stringContaining('mallory@undeclared.test') }),
    ]);
    const none = await netform(server, ['plan', '-f', base(', drift: { undeclared: none }')]);
    expect(none.code, describeResult(none)).toBe(0);
    expect(none.stdout).not.toContain(MATCHES);
    expect(none.stdout).toContain('1 undeclared object kept');

    // An undeclared unprivileged user is kept, not pending, by default; `all` counts it.
    const plainOnly = (policy: string) =>
      ws.write(
        'plain.yaml',
        `version: 1
settings: { manage: { users: ["plain@undeclared.test"], rules: [] }${policy} }
users: []
`,
      );
    const kept = await netform(server, ['plan', '-f', plainOnly('')]);
    expect(kept.code, describeResult(kept)).toBe(0);
    expect(kept.stdout).toContain('No changes, but not everything matches: 1 undeclared object kept');
    expect((await netform(server, ['drift', '-f', plainOnly(', drift: { undeclared: all }')])).code).toBe(2);
  });

  it('an undeclared rule inside manage is pending with prune off', async () => {
    const file = ws.write(
      'rules.yaml',
      `version: 1
settings: { manage: { users: ["nobody@rules.test"], rules: [10.66.0.0/16] } }
users: []
`,
    );
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stdout).toContain('No changes planned, but the server does not match the desired state');
  });

  it('settings.protect: a protected user kept by prune is "kept (protected)", exit 0 in drift', async () => {
    const file = ws.write(
      'protect.yaml',
      `version: 1
settings: { prune: true, manage: { users: ["*@protect.test"], rules: [] }, protect: { users: ["vip@protect.test"] } }
users: []
`,
    );
    const drift = await netform(server, ['drift', '-f', file, '--format', 'json']);
    expect(drift.code, describeResult(drift)).toBe(0);
    const plan = jsonPlan(drift.stdout);
    expect(plan.changes).toEqual([]);
    expect(plan.outcome).toMatchObject({ status: 'kept', pending: [] });
    expect(plan.outcome.kept).toEqual([expect.objectContaining({ reason: 'protected' })]);
    const text = await netform(server, ['drift', '-f', file]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('1 user kept (protected)');
    expect(text.stdout).not.toContain(MATCHES);
  });

  it('rule keys: tcp:22, tcp/22, tcp:22-22, tcp:20 - 22, * or global; others get the shape and the nearest key', async () => {
    for (const key of [
      'rule:*|drop|10.66.0.0/16|tcp:22',
      'rule:global|drop|10.66.0.0/16|tcp/22',
      'rule:*|drop|10.66.0.0/16|tcp:22-22',
      'rule:GLOBAL|drop|10.66.0.0/16|tcp: 22 - 22',
    ]) {
      const shown = await netform(server, ['show', key]);
      expect(shown.code, `${key}\n${describeResult(shown)}`).toBe(0);
      expect(shown.stdout).toContain('destination: 10.66.0.0/16');
    }
    const near = await netform(server, ['show', 'rule:*|drop|10.66.0.0/16|tcp:23']);
    expect(near.code).toBe(1);
    expect(near.stderr).toContain('(did you mean rule:*|drop|10.66.0.0/16|tcp:22 - 22?)');
    const bad = await netform(server, ['show', 'rule:*|drop|10.66.0.0/16|ssh']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('a rule is rule:OWNER|ACTION|DESTINATION|PORTS');
    const target = await netform(server, [
      'plan',
      '-f',
      ws.path('rules.yaml'),
      '--target',
      'rule:*|drop|10.0.0.0/8|tcp',
    ]);
    expect(target.code, describeResult(target)).toBe(2); // accepted (the undeclared rule keeps the plan pending)
    const badTarget = await netform(server, ['plan', '-f', ws.path('rules.yaml'), '--target', 'rule:tcp/22']);
    expect(badTarget.code).toBe(1);
    expect(badTarget.stderr).toContain('a rule key has 4 parts');
  });

  it('an email change without renamed_from gets a hint', async () => {
    const file = ws.write(
      'rename.yaml',
      `version: 1
settings: { manage: { users: ["erin*@target.test"], rules: [] } }
users:
  - email: erin.new@target.test
    devices:
      - { name: phone, public_key: "${erinKey}" }
`,
    );
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.stdout + plan.stderr).toContain(
      'if it is erin@target.test renamed, write renamed_from: erin@target.test under it',
    );
  });
});

describe('format versions: version 1 keeps the upgrade guard, mixed versions are refused', () => {
  let server: TestServer;
  let ws: Workspace;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      await create(s, 'users', { email: 'erin@corp.test', role: 'admin' });
    },
  );
  const users = (version: number) =>
    `version: ${version}\nsettings: { manage: { users: ["*@corp.test"] } }\nusers:\n  - email: erin@corp.test\n`;

  it('version 1: the hand promotion is "now managed", apply -f --yes refuses it and says how to move to version 2', async () => {
    const file = ws.write('v1/netform.yaml', users(1));
    const refused = await netform(server, ['apply', '-f', file, '--yes']);
    expect(refused.code, describeResult(refused)).toBe(3);
    expect(refused.stderr).toMatch(/1 change exists only because the files leave a field out/);
    expect(refused.stderr).toContain('write `version: 2` in every file');
    expect((await serverState(server)).users.find((u) => u.email === 'erin@corp.test').role).toBe('admin');
  });

  it('files of one repository with versions 1 and 2: an error naming both files, nothing planned', async () => {
    ws.write('mixed/a.yaml', users(2));
    ws.write('mixed/b.yaml', 'version: 1\nrules: []\n');
    const result = await netform(server, ['plan', '-f', ws.path('mixed')]);
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr).toMatch(/b\.yaml:1:\d+: .*version 1 here, but version 2 at \S*a\.yaml:1:\d+/);
  });

  it('under --url, a server user named like the embedded admin is an ordinary user: reported as undeclared', async () => {
    await create(server, 'users', { email: 'netform-admin@embedded.local', role: 'admin' });
    const file = ws.write(
      'embedded-name/netform.yaml',
      `version: 2\nusers:\n  - { email: erin@corp.test, role: admin }\n  - { email: ${TEST_ADMIN_EMAIL}, role: admin }\n`,
    );
    const drift = await netform(server, ['drift', '-f', file, '--format', 'json']);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(jsonPlan(drift.stdout).outcome.pending).toEqual([
      expect.objectContaining({ reason: 'undeclared', text: expect.stringContaining('netform-admin@embedded.local') }),
    ]);
  });

  it('an unknown version is refused by its number', async () => {
    const file = ws.write('v3/netform.yaml', 'version: 3\n');
    const result = await netform(server, ['validate', '-f', file]);
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr).toContain('unsupported version 3; this netform reads version 1 or 2');
  });
});
