/**
 * Access over time against a real server: a device, a user's rule, a global rule, a user and an
 * admin role with `expires:` / `role_expires:`, before and after their instants, in every command
 * (plan, drift, test, explain, who-can-reach, reach, review, validate, nft, apply). Read-only
 * commands are given the instant with `--now`; apply and drift run at their own clock (the run's
 * io clock, set here as a scheduled run's would be).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netformAt } from '../../helpers/clocked.js';
import { closedPlanValidators } from '../../helpers/plan-schema-closed.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { describeResult, netform, serverState, wgKey, workspace, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
let file: string;
const laptop = wgKey();
const phone = wgKey();
const bobKey = wgKey();

const DOC = `version: 2
settings:
  manage: { users: ["*@corp.test"], rules: [10.0.0.0/8] }
users:
  - email: alice@corp.test
    role: admin
    role_expires: 2026-12-31
    devices:
      - { name: laptop, public_key: "${laptop}", expires: 2026-12-20 }
      - { name: phone, public_key: "${phone}" }
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "443", expires: "2026-12-25T12:00:00+01:00" }
  - email: bob@corp.test
    expires: 2026-12-28
    devices:
      - { name: laptop, public_key: "${bobKey}" }
rules:
  - { action: drop, destination: 10.0.0.0/8 }
  - { action: accept, destination: 10.9.0.0/16, expires: 2026-12-22 }
tests:
  - { name: alice reaches the lab, from: alice@corp.test, to: 10.9.1.1:22/tcp, expect: accept }
`;

beforeAll(async () => {
  server = await startInProcessServer();
  ws = workspace();
  file = ws.write('netform.yaml', DOC);
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

const BEFORE = '2026-12-01T00:00:00Z';

describe('expires and role_expires in every command', () => {
  it('apply before any expiry creates everything; the plan records what each grant expires at', async () => {
    const plan = await netformAt(server, BEFORE, ['plan', '-f', file, '--format', 'json']);
    expect(plan.code, describeResult(plan)).toBe(2);
    const changes = JSON.parse(plan.stdout).changes as { id: string; expires?: string }[];
    const expires = Object.fromEntries(changes.map((c) => [c.id, c.expires]));
    expect(expires['device:alice@corp.test/laptop']).toBe('2026-12-20');
    expect(expires['user:alice@corp.test']).toBe('2026-12-31'); // written as an admin until then
    expect(expires['device:alice@corp.test/phone']).toBeUndefined();
    expect(expires['user:bob@corp.test']).toBe('2026-12-28');
    expect(expires['device:bob@corp.test/laptop']).toBe('2026-12-28');
    const apply = await netformAt(server, BEFORE, ['apply', '-f', file, '--yes']);
    expect(apply.code, describeResult(apply)).toBe(0);
    const state = await serverState(server);
    expect(state.devices).toHaveLength(3);
    expect(state.rules).toHaveLength(3);
    const clean = await netformAt(server, BEFORE, ['drift', '-f', file]);
    expect(clean.code, describeResult(clean)).toBe(0);
  });

  it('validate: an expiry it cannot parse is refused at its line; a past one is a warning', async () => {
    const bad = ws.write('bad.yaml', DOC.replace('expires: 2026-12-28', 'expires: 2026-12-28T10:00'));
    const refused = await netform(server, ['validate', '-f', bad]);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr + refused.stdout).toMatch(/bad\.yaml:14:\d+.*expires: expected a date/);
    const later = await netform(server, ['validate', '-f', file, '--now', '2026-12-21']);
    expect(later.code, describeResult(later)).toBe(0);
    const said = later.stdout + later.stderr;
    expect(said).toMatch(/netform\.yaml:9:\d+.*expires 2026-12-20 has passed/);
    expect(said).not.toContain('2026-12-28 has passed');
    const early = await netform(server, ['validate', '-f', file, '--now', BEFORE]);
    expect(early.stdout + early.stderr).not.toContain('has passed');
  });

  it('plan and drift: an expired device is deleted, and drift says it expired but is still on the server (exit 2)', async () => {
    const plan = await netform(server, ['plan', '-f', file, '--now', '2026-12-21']);
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stdout).toContain('- device alice@corp.test/laptop  (expired 2026-12-20)');
    expect(plan.stdout).toMatch(/1 to delete/);
    const drift = await netformAt(server, '2026-12-21T00:00:00Z', ['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain('device alice@corp.test/laptop expired 2026-12-20 but still on the server');
    const json = await netformAt(server, '2026-12-21T00:00:00Z', ['drift', '-f', file, '--format', 'json']);
    const change = JSON.parse(json.stdout).changes.find(
      (c: { id: string }) => c.id === 'device:alice@corp.test/laptop',
    );
    expect(change).toMatchObject({ action: 'delete', expired: '2026-12-20' });
  });

  it('a global rule: explain, who-can-reach and test accept before, drop after; plan deletes it with prune off', async () => {
    const before = await netform(server, ['explain', 'bob@corp.test', '10.9.1.1:22/tcp', '-f', file, '--now', BEFORE]);
    expect(before.code, describeResult(before)).toBe(0);
    expect(before.stdout).toMatch(/ACCEPT/i);
    const after = await netform(server, [
      'explain',
      'bob@corp.test',
      '10.9.1.1:22/tcp',
      '-f',
      file,
      '--now',
      '2026-12-23',
    ]);
    expect(after.stdout, describeResult(after)).toMatch(/DROP/i);
    const whoBefore = await netform(server, ['who-can-reach', '10.9.1.1:22/tcp', '-f', file, '--now', BEFORE]);
    expect(whoBefore.stdout, describeResult(whoBefore)).toMatch(/accepted by a rule: 2 users/);
    const whoAfter = await netform(server, ['who-can-reach', '10.9.1.1:22/tcp', '-f', file, '--now', '2026-12-23']);
    expect(whoAfter.stdout, describeResult(whoAfter)).toContain('accepted by a rule: nobody');
    const testBefore = await netform(server, ['test', '-f', file, '--now', BEFORE]);
    expect(testBefore.code, describeResult(testBefore)).toBe(0);
    const testAfter = await netform(server, ['test', '-f', file, '--now', '2026-12-23']);
    expect(testAfter.code, describeResult(testAfter)).toBe(1);
    const plan = await netform(server, ['plan', '-f', file, '--now', '2026-12-23']);
    // The files' test now fails on the state after apply: the plan shows why, and cannot be saved.
    expect(plan.code, describeResult(plan)).toBe(1);
    expect(plan.stdout).toContain('- rule accept 10.9.0.0/16 (global)  (expired 2026-12-22)');
  });

  it("a user's rule: reach lists it before its instant (an offset date-time) and not after", async () => {
    const before = await netform(server, ['reach', 'alice@corp.test', '-f', file, '--now', '2026-12-25T10:59:00Z']);
    expect(before.code, describeResult(before)).toBe(0);
    expect(before.stdout).toContain('10.1.0.0/16');
    const after = await netform(server, ['reach', 'alice@corp.test', '-f', file, '--now', '2026-12-25T11:00:00Z']);
    expect(after.stdout, describeResult(after)).not.toContain('10.1.0.0/16');
  });

  it('a user and an admin role: plan deletes bob with his devices and demotes alice; nft leaves bob out', async () => {
    const untested = ws.write('untested.yaml', DOC.slice(0, DOC.indexOf('tests:')));
    const plan = await netform(server, ['plan', '-f', untested, '--now', '2027-01-01', '--format', 'json']);
    expect(plan.code, describeResult(plan)).toBe(2);
    const document = JSON.parse(plan.stdout);
    const { plan: closed } = closedPlanValidators();
    expect(closed(document), JSON.stringify(closed.errors)).toBe(true);
    const changes = document.changes as { id: string; action: string; expired?: string }[];
    expect(changes.find((c) => c.id === 'user:bob@corp.test')).toMatchObject({
      action: 'delete',
      expired: '2026-12-28',
    });
    expect(changes.find((c) => c.id === 'user:alice@corp.test')).toMatchObject({
      action: 'update',
      expired: '2026-12-31',
    });
    const early = await netform(server, ['plan', '-f', untested, '--now', '2026-12-27', '--format', 'json']);
    const earlyIds = (JSON.parse(early.stdout).changes as { id: string }[]).map((c) => c.id);
    expect(earlyIds).not.toContain('user:bob@corp.test');
    expect(earlyIds).not.toContain('user:alice@corp.test');
    // nft (files only) judges at the run's clock: alice's own rule is in the ruleset until it expires.
    const offline = { NETFORM_URL: undefined, NETFORM_TOKEN: undefined };
    const nftBefore = await netformAt(server, '2026-12-24T00:00:00Z', ['nft', '-f', untested], offline);
    expect(nftBefore.code, describeResult(nftBefore)).toBe(0);
    expect(nftBefore.stdout).toContain('10.1.0.0/16');
    const nftAfter = await netformAt(server, '2026-12-26T00:00:00Z', ['nft', '-f', untested], offline);
    expect(nftAfter.code, describeResult(nftAfter)).toBe(0);
    expect(nftAfter.stdout).not.toContain('10.1.0.0/16');
  });

  it('review lists expired grants still on the server and those expiring within --expiring-days', async () => {
    const review = await netform(server, ['review', '-f', file, '--now', '2026-12-21', '--format', 'json']);
    expect(review.code, describeResult(review)).toBe(0);
    const { expiries } = JSON.parse(review.stdout);
    expect(expiries.expired.map((e: { key: string }) => e.key)).toEqual(['alice@corp.test/laptop']);
    expect(expiries.expiring.map((e: { expires: string }) => e.expires)).toEqual([
      '2026-12-22',
      '2026-12-25T12:00:00+01:00',
      '2026-12-28',
      '2026-12-31',
    ]);
    const narrow = await netform(server, ['review', '-f', file, '--now', '2026-12-21', '--expiring-days', '2']);
    expect(narrow.stdout, describeResult(narrow)).toContain('Expiring within 2 days (1)');
    expect(narrow.stdout).toContain('Expired but still on the server (1)');
  });

  it('--now is refused where netform writes: apply, plan -o, drift --every', async () => {
    const apply = await netform(server, ['apply', '-f', file, '--yes', '--now', '2027-01-01']);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toBe('error: --now is only for commands that read: apply judges expiries at its own clock\n');
    const saved = await netform(server, ['plan', '-f', file, '-o', ws.path('p.json'), '--now', '2027-01-01']);
    expect(saved.code).toBe(1);
    expect(saved.stderr).toMatch(/^error: --now .*(plan -o|-o)/);
    expect(() => readFileSync(ws.path('p.json'))).toThrow();
    const every = await netform(server, ['drift', '-f', file, '--every', '* * * * *', '--now', '2027-01-01']);
    expect(every.code).toBe(1);
    expect(every.stderr).toMatch(/^error: --now .*--every/);
    expect((await serverState(server)).devices).toHaveLength(3);
  });
});
