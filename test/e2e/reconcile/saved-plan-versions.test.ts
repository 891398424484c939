/**
 * The saved-plan format against a real server: a plan of every change kind, as `plan --format
 * json` prints it and `plan -o` saves it, has the shape schemas/plan.schema.json gives; a saved
 * plan of format version 2, written by an earlier netform, still applies; one of version 4 (a
 * newer netform's) is refused, naming its version, before anything is read or written.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/plan/canonical.js';
import { PlanKey } from '../../../src/plan/seal.js';
import { closedPlanValidators } from '../../helpers/plan-schema-closed.js';
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
useServerAndWorkspace((started) => ({ server, ws } = started));

const validators = closedPlanValidators;

describe('the plan schema', () => {
  it('describes a plan of every change kind, as plan --format json prints it and plan -o saves it', async () => {
    const d = 'kinds.test';
    const alice = await create(server, 'users', { email: `alice@${d}` });
    const gone = await create(server, 'users', { email: `gone@${d}` });
    await create(server, 'users', { email: `bob@${d}` });
    await create(server, 'devices', {
      user_id: alice.id,
      name: 'laptop',
      public_key: wgKey(),
      use_default_mtu: false,
      mtu: 1280,
    });
    const phoneKey = wgKey();
    await create(server, 'devices', { user_id: alice.id, name: 'phone', public_key: phoneKey });
    await create(server, 'devices', { user_id: gone.id, name: 'pc', public_key: wgKey() });
    await create(server, 'rules', {
      user_id: alice.id,
      action: 'accept',
      destination: '10.1.0.0/16',
      port_type: 'tcp',
      port_range: '443',
    });
    await create(server, 'rules', { user_id: gone.id, action: 'accept', destination: '10.2.0.0/16' });
    const laptop = (await serverState(server)).devices.find((x) => x.user_id === alice.id && x.name === 'laptop');
    ws.write('kinds/secrets/kim-laptop.psk', `${wgKey()}\n`);
    const file = ws.write(
      'kinds/netform.yaml',
      `version: 1
settings:
  prune: true
  manage: { users: ["*@${d}"], rules: ["10.0.0.0/8"] }
rules:
  - { action: drop, destination: 10.0.0.0/8 }
configuration:
  default_client_mtu: 1380
users:
  - email: alice@${d}
    role: admin
    devices:
      - { name: laptop, public_key: "${laptop.public_key}", use_default_mtu: false, mtu: 1400 }
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "8443" }
  - email: bob@${d}
    devices:
      - { name: phone, public_key: "${phoneKey}" }
  - email: kim@${d}
    password: { env: KIM_PASSWORD }
    devices:
      - { name: laptop, public_key: "${wgKey()}", preshared_key: { file: secrets/kim-laptop.psk } }
    rules:
      - { action: accept, destination: 10.3.0.0/16, port_type: udp, port_range: "53" }
tests:
  - { name: kim reaches dns, from: "kim@${d}", to: "10.3.0.1:53/udp", expect: accept }
`,
    );
    const env = { KIM_PASSWORD: 'kim-password-for-the-schema-1' };
    const saved = ws.path('kinds.json');
    const printed = await netform(server, ['plan', '-f', file, '--format', 'json', '-o', saved], env);
    expect(printed.code, describeResult(printed)).toBe(2);
    const doc = JSON.parse(printed.stdout);
    const kinds = new Set(doc.changes.map((c: any) => `${c.action} ${c.kind}`));
    for (const kind of [
      'create user',
      'update user',
      'delete user',
      'create device',
      'update device',
      'replace device',
      'create rule',
      'replace rule',
      'update configuration',
    ])
      expect(kinds, kind).toContain(kind);
    expect(doc.changes.some((c: any) => c.note?.includes('moved from'))).toBe(true);
    expect(doc.changes.some((c: any) => c.cascade?.length)).toBe(true);
    expect(
      doc.changes
        .flatMap((c: any) => c.secrets ?? [])
        .map((s: any) => s.field)
        .sort(),
    ).toEqual(['password', 'preshared_key']);
    expect(doc.tests).toMatchObject({ passed: 1, failed: 0 });
    expect(doc.access.users.length).toBeGreaterThan(0);

    const { plan, saved: savedPlan } = validators();
    expect(plan(doc), JSON.stringify(plan.errors)).toBe(true);
    expect(savedPlan(doc), JSON.stringify(savedPlan.errors)).toBe(true);
    // Closed as said: a member the schema does not describe is caught.
    expect(plan({ ...doc, changes: [{ ...doc.changes[0], undocumented: true }, ...doc.changes.slice(1)] })).toBe(false);
    const file2 = JSON.parse(readFileSync(saved, 'utf8'));
    expect(savedPlan(file2), JSON.stringify(savedPlan.errors)).toBe(true);
    expect(file2.format_version).toBe(3);
    // Drift's report is the same document, unsealed: of the plan schema, never of the saved plan's.
    const drift = await netform(server, ['drift', '-f', file, '--format', 'json'], env);
    const report = JSON.parse(drift.stdout);
    expect(plan(report), JSON.stringify(plan.errors)).toBe(true);
    expect(savedPlan(report)).toBe(false);
  });
});

describe('saved plans of other versions', () => {
  const FIXTURE = new URL('../../fixtures/saved-plan-v2/', import.meta.url);
  const KEY = 'v2-fixture-key-0123456789abcdefghijklmnop';
  const ENV = { NETFORM_PLAN_KEY: KEY, V2_KIM_PASSWORD: 'v2-fixture-password-Kim-123' };

  /** The v2 fixture, pointed at this test's server and sealed again with its key (the seal is the same in version 2 and 3). */
  function fixtureFor(over: Record<string, unknown> = {}): string {
    const doc = { ...JSON.parse(readFileSync(new URL('plan-v2.json', FIXTURE), 'utf8')), server: server.url, ...over };
    delete doc.seal;
    doc.seal = PlanKey.from({ NETFORM_PLAN_KEY: KEY }, () => '').sealOf(canonicalJson(doc));
    ws.write(
      'v2/desired/secrets/kim-laptop.psk',
      readFileSync(new URL('desired/secrets/kim-laptop.psk', FIXTURE), 'utf8'),
    );
    const path = ws.path(`v2/plan-${String(over.format_version ?? 2)}.json`);
    writeFileSync(path, JSON.stringify(doc, null, 2));
    return path;
  }

  it('applies a version 2 plan made by an earlier netform: its users, device (with the preshared key) and rule', async () => {
    const path = fixtureFor();
    const applied = await netform(server, ['apply', path], ENV, ws.path('v2'));
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stdout).toContain('Apply: 4 done, 0 failed, 0 not attempted.');
    const state = await serverState(server);
    const kim = state.users.find((u) => u.email === 'kim@v2plan.test');
    expect(state.users.find((u) => u.email === 'lee@v2plan.test')?.role).toBe('admin');
    const laptop = state.devices.find((x) => x.user_id === kim.id);
    expect(laptop).toMatchObject({ name: 'laptop', preshared_key: 'kFrGwkK1Dwr8iB3V5Sg4Q2q6Vn7Q3V1s9kT0aXbCd2E=' });
    expect(state.rules.filter((r) => r.user_id === kim.id).map((r) => r.destination)).toEqual(['10.20.0.0/16']);
  });

  it('refuses a version 4 plan, naming its version and saying to upgrade netform; nothing is written', async () => {
    const before = await serverState(server);
    const path = fixtureFor({ format_version: 4, server: server.url });
    const refused = await netform(server, ['apply', path], ENV, ws.path('v2'));
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toBe(
      `error: ${path}: the saved plan was made by a newer netform (plan format version 4; this netform reads versions 2 and 3): upgrade netform to apply it, or make the plan with this netform. Nothing was changed\n`,
    );
    expect(await serverState(server)).toEqual(before);
  });
});
