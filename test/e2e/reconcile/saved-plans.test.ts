/** Saved plans: applied exactly; refused with exit 4, changing nothing, when the server changed since. */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import {
  bulkFixture,
  describeResult,
  netform,
  serverState,
  type Workspace,
  useServerAndWorkspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
const bulk = bulkFixture(2);
const yaml = bulk.yaml;

useServerAndWorkspace((started) => ({ server, ws } = started), bulk.seed);

describe('saved plans', () => {
  it('writes the versioned document, applies it exactly, and refuses it once applied (stale)', async () => {
    const file = ws.write('saved.yaml', yaml('  - email: new@bulk.test\n', 1300));
    const planPath = ws.path('plan.json');
    const planned = await netform(server, ['plan', '-f', file, '-o', planPath, '--format', 'json']);
    expect(planned.code, describeResult(planned)).toBe(2);
    const doc = JSON.parse(readFileSync(planPath, 'utf8'));
    expect(JSON.parse(planned.stdout)).toEqual(doc);
    expect(doc).toMatchObject({
      format: 'netform.plan',
      format_version: 3,
      server: server.url,
      summary: { create: 1, update: 1, delete: 0, replace: 0 },
    });
    expect(doc.changes.map((c: any) => `${c.action} ${c.id} ${c.fingerprint === null ? 'absent' : 'fp'}`)).toEqual([
      'create user:new@bulk.test absent',
      'update device:u0@bulk.test/laptop fp',
    ]);

    // The files change after the plan was made: the saved plan still does exactly what it showed.
    ws.write('saved.yaml', yaml('', 1500));
    // Writing the plan was the approval: no --yes, no question, even without a terminal.
    const applied = await netform(server, ['apply', planPath]);
    expect(applied.code, describeResult(applied)).toBe(0);
    const state = await serverState(server);
    expect(state.devices[0].mtu).toBe(1300);
    expect(state.users.map((u) => u.email)).toContain('new@bulk.test');

    const reapplied = await netform(server, ['apply', planPath, '--yes']);
    expect(reapplied.code, describeResult(reapplied)).toBe(4);
    expect(reapplied.stderr).toContain('user new@bulk.test: created on the server since the plan was made');
    expect(reapplied.stderr).toContain('device u0@bulk.test/laptop: changed since the plan was made');
  });

  it('refuses a saved plan with exit 4 and changes nothing when someone edited the server in between', async () => {
    const file = ws.write('stale.yaml', yaml('  - email: later@bulk.test\n', 1280));
    const planPath = ws.path('stale.json');
    expect((await netform(server, ['plan', '-f', file, '-o', planPath])).code).toBe(2);
    const device = (await serverState(server)).devices[0];
    const edit = await server.api('PATCH', `/v0/devices/${device.id}`, { device: { description: 'edited by hand' } });
    expect(edit.status).toBe(200);

    const refused = await netform(server, ['apply', planPath, '--yes']);
    expect(refused.code, describeResult(refused)).toBe(4);
    expect(refused.stderr).toContain(
      'The saved plan is stale: the server changed since it was made. Nothing was changed.',
    );
    expect(refused.stderr).toContain('device u0@bulk.test/laptop: changed since the plan was made');
    const state = await serverState(server);
    expect(state.users.map((u) => u.email)).not.toContain('later@bulk.test');
    expect(state.devices[0]).toMatchObject({ mtu: 1300, description: 'edited by hand' });
  });

  it('refuses a saved plan made against another server, and malformed plan files', async () => {
    const planPath = ws.path('elsewhere.json');
    const file = ws.write('elsewhere.yaml', yaml('  - email: x@bulk.test\n', 1300));
    expect((await netform(server, ['plan', '-f', file, '-o', planPath])).code).toBe(2);
    const doc = JSON.parse(readFileSync(planPath, 'utf8'));
    const sameServerOtherName = server.url.replace('127.0.0.1', 'localhost');
    const other = await netform(server, ['apply', planPath], { NETFORM_URL: sameServerOtherName });
    expect(other.code, describeResult(other)).toBe(1);
    expect(other.stderr).toContain(`error: the saved plan was made against ${server.url}, not ${sameServerOtherName}`);

    writeFileSync(planPath, JSON.stringify({ ...doc, format_version: 99 }));
    const version = await netform(server, ['apply', planPath, '--yes']);
    expect(version.code).toBe(1);
    expect(version.stderr).toContain(
      'was made by a newer netform (plan format version 99; this netform reads versions 2 and 3): upgrade netform',
    );
    const notAPlan = await netform(server, ['apply', file, '--yes']);
    expect(notAPlan.code).toBe(1);
    expect(notAPlan.stderr).toContain('not a saved plan (not JSON)');
  });

  it('refuses a saved plan edited by hand (exit 1, nothing written), saying it was modified', async () => {
    const file = ws.write('tamper.yaml', yaml('  - email: tamper@bulk.test\n', 1300));
    const planPath = ws.path('tamper.json');
    expect((await netform(server, ['plan', '-f', file, '-o', planPath])).code).toBe(2);
    const doc = JSON.parse(readFileSync(planPath, 'utf8'));
    const create = doc.changes.find((c: any) => c.id === 'user:tamper@bulk.test');
    // What it would show and what it would send, edited apart: the role shown admin, sent unprivileged.
    create.fields.push({ field: 'role', before: null, after: 'admin' });
    create.body.role = 'unprivileged';
    writeFileSync(planPath, JSON.stringify(doc, null, 2));
    const refused = await netform(server, ['apply', planPath]);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toContain(
      `error: ${planPath}: the saved plan was modified after netform plan wrote it (its seal does not match). Nothing was changed`,
    );
    expect((await serverState(server)).users.map((u) => u.email)).not.toContain('tamper@bulk.test');

    delete doc.seal;
    writeFileSync(planPath, JSON.stringify(doc));
    const unsigned = await netform(server, ['apply', planPath]);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toContain('the saved plan has no seal');
  });
});
