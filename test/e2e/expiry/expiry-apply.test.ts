/**
 * Apply judges expiries at its own clock (the run's io clock here, as a scheduled job's would be):
 * `apply --expired-only` writes only the deletions and demotions expiries cause (exit 2 naming the
 * rest); a mass expiry over the delete limit is refused, naming the expiries it blocked (exit 3);
 * a saved plan applied after a grant it makes has expired is stale (exit 4); `apply --reviewed`
 * withholds such a grant as "expired since review" (exit 5).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netformAt } from '../../helpers/clocked.js';
import { closedPlanValidators } from '../../helpers/plan-schema-closed.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { describeResult, serverState, wgKey, workspace, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
const keys = new Map<string, string>();
const key = (name: string) => keys.get(name) ?? (keys.set(name, wgKey()), keys.get(name)!);

beforeAll(async () => {
  server = await startInProcessServer();
  ws = workspace();
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

const HEAD = `version: 2
settings:
  manage: { users: ["*@corp.test"], rules: [10.0.0.0/8] }
`;

const emails = (users: { email: string }[]) => users.map((u) => u.email).sort();

describe('apply and expiries', () => {
  it('--expired-only writes only what expiries delete or demote; the other pending change is named (exit 2)', async () => {
    const start = ws.write(
      'team.yaml',
      `${HEAD}  limits: { delete: 10 }
users:
  - { email: ann@corp.test, role: admin, role_expires: 2026-12-31 }
  - email: ben@corp.test
    expires: 2026-12-31
    devices: [{ name: laptop, public_key: "${key('ben')}" }]
    rules: [{ action: accept, destination: 10.2.0.0/16 }]
  - email: cat@corp.test
    devices: [{ name: laptop, public_key: "${key('cat')}", expires: 2026-12-31 }, { name: phone, public_key: "${key('cat-phone')}" }]
    rules: [{ action: accept, destination: 10.3.0.0/16, expires: 2026-12-31 }]
rules:
  - { action: accept, destination: 10.4.0.0/16, expires: 2026-12-31 }
`,
    );
    const created = await netformAt(server, '2026-12-01T00:00:00Z', ['apply', '-f', start, '--yes']);
    expect(created.code, describeResult(created)).toBe(0);
    // A new user is added to the files, not yet applied, when the expiries pass.
    ws.write('team.yaml', `${readFileSync(start, 'utf8')}  - { action: accept, destination: 10.5.0.0/16 }\n`);
    const run = await netformAt(server, '2027-01-02T00:00:00Z', ['apply', '-f', start, '--expired-only', '--yes']);
    expect(run.code, describeResult(run)).toBe(2);
    expect(run.stderr).toContain(
      '--expired-only: 1 other change is pending and was not written: rule accept 10.5.0.0/16 (global)',
    );
    const state = await serverState(server);
    expect(emails(state.users)).not.toContain('ben@corp.test');
    expect(state.users.find((u) => u.email === 'ann@corp.test').role).toBe('unprivileged');
    expect(state.devices.map((d) => d.name)).toEqual(['phone']);
    expect(state.rules.map((r) => r.destination).sort()).toEqual([]);
    // Only the pending rule is left: drift at the same clock reports that, not the expiries.
    const drift = await netformAt(server, '2027-01-02T00:00:00Z', ['drift', '-f', start]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain('rule accept 10.5.0.0/16 (global) is in the files but not on the server');
    expect(drift.stdout).not.toContain('expired');
  });

  it('a mass expiry over the delete limit is refused, naming the expiries it blocked (exit 3, nothing written)', async () => {
    const names = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5'];
    const file = ws.write(
      'mass.yaml',
      `${HEAD}  limits: { delete: 2 }
users:
${names.map((n) => `  - { email: ${n}@corp.test, expires: 2027-02-01, devices: [{ name: laptop, public_key: "${key(n)}" }] }`).join('\n')}
`,
    );
    const created = await netformAt(server, '2027-01-15T00:00:00Z', ['apply', '-f', file, '--yes']);
    expect(created.code, describeResult(created)).toBe(0);
    const refused = await netformAt(server, '2027-02-02T00:00:00Z', ['apply', '-f', file, '--expired-only', '--yes']);
    expect(refused.code, describeResult(refused)).toBe(3);
    expect(refused.stderr).toContain('Refused: the plan is over a safety limit. Nothing was changed.');
    expect(refused.stderr).toContain('the limit also blocks 6 expiries: user d0@corp.test (expired 2027-02-01)');
    expect(emails((await serverState(server)).users)).toEqual(
      expect.arrayContaining(names.map((n) => `${n}@corp.test`)),
    );
    const lifted = await netformAt(server, '2027-02-02T00:00:00Z', [
      'apply',
      '-f',
      file,
      '--expired-only',
      '--yes',
      '--allow-deletes',
      '12',
    ]);
    expect(lifted.code, describeResult(lifted)).toBe(0);
    expect(emails((await serverState(server)).users).filter((e) => e.startsWith('d'))).toEqual([]);
  });

  it('a saved plan applied after a grant it makes has expired is stale (exit 4, nothing written)', async () => {
    const file = ws.write(
      'temp.yaml',
      `${HEAD}users:
  - { email: eve@corp.test, devices: [{ name: laptop, public_key: "${key('eve')}", expires: "2027-03-01T09:00:00Z" }] }
`,
    );
    const saved = ws.path('eve.json');
    const plan = await netformAt(server, '2027-02-28T00:00:00Z', ['plan', '-f', file, '-o', saved]);
    expect(plan.code, describeResult(plan)).toBe(2);
    // Every member it holds is one the plan schema describes (closed to undescribed ones).
    const document = JSON.parse(readFileSync(saved, 'utf8'));
    expect(document.changes.find((c: { id: string }) => c.id === 'device:eve@corp.test/laptop').expires).toBe(
      '2027-03-01T09:00:00Z',
    );
    const { saved: closed } = closedPlanValidators();
    expect(closed(document), JSON.stringify(closed.errors)).toBe(true);
    const stale = await netformAt(server, '2027-03-01T09:00:00Z', ['apply', saved]);
    expect(stale.code, describeResult(stale)).toBe(4);
    expect(stale.stderr).toContain(
      'The saved plan is stale: what it grants expired since it was made. Nothing was changed.',
    );
    expect(stale.stderr).toContain('device eve@corp.test/laptop: expired 2027-03-01T09:00:00Z since the plan was made');
    expect(emails((await serverState(server)).users)).not.toContain('eve@corp.test');
    // The same saved plan, applied in time, is applied.
    const inTime = await netformAt(server, '2027-03-01T08:59:00Z', ['apply', saved]);
    expect(inTime.code, describeResult(inTime)).toBe(0);
  });

  it('apply --reviewed withholds a reviewed grant that has expired since review (exit 5)', async () => {
    const file = ws.write(
      'review.yaml',
      `${HEAD}users:
  - { email: fay@corp.test, devices: [{ name: laptop, public_key: "${key('fay')}", expires: 2027-04-01 }, { name: phone, public_key: "${key('fay-phone')}" }] }
`,
    );
    const reviewed = ws.path('reviewed.json');
    const plan = await netformAt(server, '2027-03-30T00:00:00Z', ['plan', '-f', file, '-o', reviewed]);
    expect(plan.code, describeResult(plan)).toBe(2);
    const run = await netformAt(server, '2027-04-02T00:00:00Z', ['apply', '-f', file, '--reviewed', reviewed]);
    expect(run.code, describeResult(run)).toBe(5);
    expect(run.stdout).toContain('withheld: expired since review (expired 2027-04-01)');
    const state = await serverState(server);
    const fay = state.users.find((u) => u.email === 'fay@corp.test');
    expect(state.devices.filter((d) => d.user_id === fay.id).map((d) => d.name)).toEqual(['phone']);
  });
});
