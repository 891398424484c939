/**
 * `forget:` and `acknowledged:` against real servers, through the in-process CLI: a forgotten user
 * stays on the server through an apply with prune on; a forgotten object a file still declares is
 * an error at validate; an acknowledged difference is left alone until its `until` (judged with
 * --now), alerts again when the live value changes, and is ordinary drift after the date; an entry
 * that matches nothing is a warning; an acknowledged broad live rule no longer counts as access drift.
 */
import { describe, expect, it } from 'vitest';
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

const BOB_KEY = wgKey();
const CAROL_KEY = wgKey();

function team(extra = ''): string {
  return `version: 2
settings:
  prune: true
  manage: { users: ["*@corp.test"], rules: ["10.0.0.0/8"] }
users:
  - email: bob@corp.test
    devices:
      - { name: laptop, public_key: "${BOB_KEY}", endpoint: "198.51.100.1:51820" }
rules:
  - { action: drop, destination: 10.0.0.0/8 }
${extra}`;
}

async function applied(server: TestServer, file: string): Promise<void> {
  const r = await netform(server, ['apply', '-f', file, '--yes']);
  expect(r.code, describeResult(r)).toBe(0);
}

describe('forget: a user the repository stops managing', () => {
  let server: TestServer;
  let ws: Workspace;
  useServerAndWorkspace((started) => ({ server, ws } = started));

  it('stays on the server through an apply with prune on, and plan says so once', async () => {
    const file = ws.write('team.yaml', team());
    await applied(server, file);
    await create(server, 'users', { email: 'carol@corp.test', role: 'unprivileged' });
    const carol = (await serverState(server)).users.find((u) => u.email === 'carol@corp.test');
    await create(server, 'devices', { user_id: carol.id, name: 'phone', public_key: CAROL_KEY });

    // Without forget:, prune deletes carol.
    const before = await netform(server, ['plan', '-f', file]);
    expect(before.code, describeResult(before)).toBe(2);
    expect(before.stdout).toContain('carol@corp.test');

    ws.write('team.yaml', team('forget:\n  - user:carol@corp.test\n'));
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(0);
    const forgotten = 'user carol@corp.test: forgotten: stays on the server, no longer managed';
    expect(plan.stdout.split(forgotten).length - 1, plan.stdout).toBe(1);
    const apply = await netform(server, ['apply', '-f', file, '--yes']);
    expect(apply.code, describeResult(apply)).toBe(0);
    const state = await serverState(server);
    expect(state.users.map((u) => u.email)).toContain('carol@corp.test');
    expect(state.devices.map((d) => d.name)).toContain('phone');
    const drift = await netform(server, ['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(0);
  });

  it('is an error at validate when a file still declares it, naming file and line', async () => {
    const file = ws.write('declared.yaml', team('forget:\n  - "user:BOB@corp.test"\n'));
    const r = await netform(server, ['validate', '-f', file]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stderr + r.stdout).toMatch(
      /declared\.yaml:6:\d+.*user:bob@corp\.test is forgotten \(forget: at .*declared\.yaml:12\) but still declared here/,
    );
  });
});

describe('acknowledged: a hand change kept until a date', () => {
  let server: TestServer;
  let ws: Workspace;
  let file: string;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      file = ws.write('team.yaml', team());
      await applied(s, file);
    },
  );

  async function moveEndpoint(endpoint: string): Promise<void> {
    const laptop = (await serverState(server)).devices.find((d) => d.name === 'laptop');
    const res = await fetch(`${server.url}/v0/devices/${laptop.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ device: { endpoint } }),
    });
    expect(res.status).toBe(200);
  }

  const ACK = `acknowledged:
  - key: device:bob@corp.test/laptop
    field: endpoint
    value: "203.0.113.9:51820"
    reason: moved during incident 4711
    until: "2026-12-31"
`;

  it('is left alone before until, reported as acknowledged, and ordinary drift after it', async () => {
    await moveEndpoint('203.0.113.9:51820');
    ws.write('team.yaml', team(ACK));
    const drift = await netform(server, ['drift', '-f', file, '--now', '2026-12-01']);
    expect(drift.code, describeResult(drift)).toBe(0);
    expect(drift.stdout).toContain(
      'device bob@corp.test/laptop: endpoint is "203.0.113.9:51820" on the server, acknowledged until 2026-12-31 (moved during incident 4711)',
    );
    expect(drift.stdout).not.toContain('matches nothing');
    console.log(`--- drift report with one acknowledged difference ---\n${drift.stdout}`);
    const plan = await netform(server, ['plan', '-f', file, '--now', '2026-12-01']);
    expect(plan.code, describeResult(plan)).toBe(0);
    expect(plan.stdout).toContain('1 difference acknowledged until a date');
    const json = JSON.parse(
      (await netform(server, ['plan', '-f', file, '--now', '2026-12-01', '--format', 'json'])).stdout,
    );
    expect(json.changes).toEqual([]);
    expect(json.outcome).toMatchObject({
      status: 'kept',
      kept: [{ reason: 'acknowledged', id: 'device:bob@corp.test/laptop' }],
    });
    const { plan: validPlan } = closedPlanValidators();
    expect(validPlan(json), JSON.stringify(validPlan.errors)).toBe(true);

    const after = await netform(server, ['drift', '-f', file, '--now', '2026-12-31']);
    expect(after.code, describeResult(after)).toBe(2);
    expect(after.stdout).toContain(
      'device bob@corp.test/laptop: endpoint: acknowledgement expired 2026-12-31 (moved during incident 4711)',
    );
    expect(after.stdout).toContain('endpoint is "203.0.113.9:51820" on the server, the files say "198.51.100.1:51820"');

    // --now is for runs that write nothing.
    const saved = await netform(server, ['plan', '-f', file, '--now', '2026-12-01', '-o', ws.path('p.json')]);
    expect(saved.code).toBe(1);
    expect(saved.stderr).toContain('--now cannot be given with -o');
  });

  it('alerts at once when the live value changes again', async () => {
    await moveEndpoint('203.0.113.77:51820');
    ws.write('team.yaml', team(ACK));
    const drift = await netform(server, ['drift', '-f', file, '--now', '2026-12-01']);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain(
      'device bob@corp.test/laptop: endpoint: changed on the server since it was acknowledged',
    );
    expect(drift.stdout).toContain('endpoint is "203.0.113.77:51820" on the server');
  });

  it('warns about an entry that matches nothing', async () => {
    ws.write(
      'team.yaml',
      team(`acknowledged:
  - key: device:nobody@corp.test/phone
    field: mtu
    value: 1280
    reason: test
    until: "2026-12-31"
  - key: user:bob@corp.test
    field: role
    value: unprivileged
    reason: nothing to keep
    until: "2026-12-31"
`),
    );
    const plan = await netform(server, ['plan', '-f', file, '--now', '2026-12-01']);
    expect(plan.stdout).toContain('acknowledged: device:nobody@corp.test/phone mtu matches nothing on the server');
    expect(plan.stdout).toContain(
      'acknowledged: user:bob@corp.test role matches nothing: it does not differ from the files',
    );
  });
});
