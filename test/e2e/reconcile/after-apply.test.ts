/**
 * Plan, apply and drift judge access on the server as it will be after apply (the managed part as
 * the files declare it, plus every live object apply leaves in place), against real servers: a
 * hand-made global rule broader than manage.rules, a hand-made rule kept because prune is off, a
 * user outside manage.users, drift's wording of an exposure, and a pull request that ratifies a
 * hand promotion.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import type { TestServer } from '../../helpers/server.js';
import { startWebhookReceiver } from '../../helpers/drift.js';
import { startScheduledDrift } from '../../helpers/drift-in-process.js';
import { git } from '../../helpers/git.js';
import { closedPlanValidators } from '../../helpers/plan-schema-closed.js';
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

/** The repository: bob with a laptop, a global drop of the managed block, and two tests. */
function teamYaml(settings: { prune?: boolean; undeclared?: string } = {}): string {
  return `version: 1
settings:
  prune: ${settings.prune ?? true}
  manage: { users: ["*@corp.test"], rules: ["10.0.0.0/8"] }
${settings.undeclared ? `  drift: { undeclared: ${settings.undeclared} }\n` : ''}users:
  - email: bob@corp.test
    devices:
      - { name: laptop, public_key: "${BOB_KEY}" }
rules:
  - { action: drop, destination: 10.0.0.0/8 }
tests:
  - { name: bob not past the range, from: bob@corp.test, to: "10.20.99.5:22/tcp", expect: drop }
  - { name: bob reaches the internet, from: bob@corp.test, to: "1.1.1.1:443/tcp", expect: accept }
`;
}

async function applied(server: TestServer, file: string): Promise<void> {
  const r = await netform(server, ['apply', '-f', file, '--yes']);
  expect(r.code, describeResult(r)).toBe(0);
}

describe('a hand-made global accept 10.0.0.0/7, broader than manage.rules', () => {
  let server: TestServer;
  let ws: Workspace;
  let file: string;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      file = ws.write('team.yaml', teamYaml());
      await applied(s, file);
      await create(s, 'rules', { action: 'accept', destination: '10.0.0.0/7' });
    },
  );
  const BROAD =
    'rule accept 10.0.0.0/7 (global, outside manage.rules) decides packets inside 10.0.0.0/8: every user reaches 10.0.0.0/8 (all protocols)';

  it("fails plan's test naming the rule the repository cannot change, writes no saved plan, and apply refuses", async () => {
    const out = ws.path('plan.json');
    const plan = await netform(server, ['plan', '-f', file, '-o', out]);
    expect(plan.code, describeResult(plan)).toBe(1);
    expect(plan.stdout).toContain('1 access test fails: this plan cannot be applied');
    expect(plan.stdout).toContain(
      'fails because of rule accept 10.0.0.0/7 (global, outside manage.rules), which this repository cannot change',
    );
    expect(plan.stdout).toContain('Access tests (after apply): 1 of 2 failed, 1 passed.');
    expect(plan.stdout).toContain(BROAD);
    expect(existsSync(out)).toBe(false);
    const json = JSON.parse((await netform(server, ['plan', '-f', file, '--format', 'json'])).stdout);
    expect(json.tests).toMatchObject({ evaluated: 'after-apply', failed: 1 });
    expect(json.tests.failures[0].because).toMatchObject({ left: 'outside-rules', changeable: false });
    expect(json.deciding).toHaveLength(1);
    expect(json.deciding[0]).toMatchObject({ kind: 'rule', status: 'counts', inside: ['10.0.0.0/8'] });
    // Every member the after-apply judgement adds is documented in the plan schema.
    const { plan: validPlan } = closedPlanValidators();
    expect(validPlan(json), JSON.stringify(validPlan.errors)).toBe(true);

    const before = await serverState(server);
    const refused = await netform(server, ['apply', '-f', file, '--yes']);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toContain(
      '1 access test failed on the server as it would be after apply; nothing was written:',
    );
    expect(refused.stderr).toContain('which this repository cannot change');
    expect(await serverState(server)).toEqual(before);
  });

  it('drift exits 2 and names the rule; --live reports the server as it is', async () => {
    const drift = await netform(server, ['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain(BROAD);
    expect(drift.stdout).toContain('No changes planned, but the server does not match the desired state');

    const live = await netform(server, ['test', '-f', file, '--live']);
    expect(live.code).toBe(1);
    expect(live.stdout).toMatch(/FAIL bob not past the range: .*got accept by accept 10\.0\.0\.0\/7 \(global\) at id /);
    expect(live.stdout).toContain('1 passed, 1 failed (against the live server: live now)');
    const offline = await netform(server, ['test', '-f', file]);
    expect(offline.code).toBe(0);
    expect(offline.stdout).toContain('2 passed, 0 failed (against the declared rules: files only)');
    const after = await netform(server, ['test', '-f', file, '--after-apply']);
    expect(after.code).toBe(1);
    expect(after.stdout).toContain('1 passed, 1 failed (against the server as it will be after apply: after apply)');

    const explain = await netform(server, [
      'explain',
      'bob@corp.test',
      '10.20.99.5:22/tcp',
      '-f',
      file,
      '--after-apply',
    ]);
    expect(explain.code, describeResult(explain)).toBe(0);
    expect(explain.stdout).toContain(
      'bob@corp.test -> 10.20.99.5:22/tcp, against the server as it will be after apply (after apply)',
    );
    expect(explain.stdout).toMatch(
      /bob@corp\.test\/laptop: ACCEPT\n {2}decided by accept 10\.0\.0\.0\/7 \(global\) at id /,
    );
    const who = await netform(server, ['who-can-reach', '10.20.99.5:22/tcp', '-f', file, '--after-apply']);
    expect(who.stdout).toContain('against the server as it will be after apply (after apply):');
    const reach = await netform(server, ['reach', 'bob@corp.test', '-f', file, '--after-apply', '--format', 'json']);
    expect(JSON.parse(reach.stdout).against).toBe('after-apply');
    const noFile = await netform(server, ['test', '--after-apply']);
    expect(noFile.code).not.toBe(0);

    const review = await netform(server, ['review', '-f', file, '--after-apply']);
    expect(review.code, describeResult(review)).toBe(0);
    expect(review.stdout).toContain(
      '### Access tests against the server as it will be after apply (after apply): 1 passed, 1 failed',
    );
    const reviewLive = await netform(server, ['review', '-f', file]);
    expect(reviewLive.stdout).toContain('### Access tests against the live server (live now): 1 passed, 1 failed');
  });

  it('the webhook text names the rule', async () => {
    const hook = await startWebhookReceiver();
    // In this process on a clock the test moves: --run-at-start is the only run.
    const drift = startScheduledDrift(
      ['-f', file, '--every', '*/1 * * * * *', '--run-at-start', '--webhook', hook.url],
      {
        NETFORM_URL: server.url,
        NETFORM_TOKEN: server.token,
      },
    );
    try {
      await hook.waitForCount(1);
      const [first] = hook.received;
      expect(first!.report.status).toBe('drift');
      const text = (JSON.parse(first!.text) as { text: string }).text;
      expect(text).toContain('10.0.0.0/7');
      expect(text).toContain('outside manage.rules');
      expect(text).toContain('decides packets inside 10.0.0.0/8');
    } finally {
      drift.stop();
      await drift.done;
      await hook.close();
    }
  });

  it('settings.drift.undeclared: none still exits 2 on the broad rule', async () => {
    const quiet = ws.write('quiet.yaml', teamYaml({ undeclared: 'none' }));
    const drift = await netform(server, ['drift', '-f', quiet]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain(BROAD);
  });
});

describe('a hand-made global accept inside the scope, kept because prune is off', () => {
  let server: TestServer;
  let ws: Workspace;
  let file: string;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      file = ws.write('team.yaml', teamYaml({ prune: false }));
      await applied(s, file);
      await create(s, 'rules', { action: 'accept', destination: '10.20.0.0/16' });
    },
  );

  it("makes plan's test fail, naming the rule apply leaves in place", async () => {
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(1);
    expect(plan.stdout).toContain(
      'fails because of rule accept 10.20.0.0/16 (global, on the server but in no file), which apply leaves in place (prune is off',
    );
  });
});

describe('a user outside manage.users whose own rule reaches into the managed block', () => {
  let server: TestServer;
  let ws: Workspace;
  let file: string;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      file = ws.write('team.yaml', teamYaml());
      await applied(s, file);
      const carol = await create(s, 'users', { email: 'carol@other.test' });
      await create(s, 'rules', {
        user_id: carol.id,
        action: 'accept',
        destination: '10.1.0.0/16',
        port_type: 'tcp',
        port_range: '22',
      });
    },
  );

  it('is listed once, and plan and drift still exit 0', async () => {
    const line =
      "user carol@other.test (outside this repository's users) reaches inside 10.0.0.0/8 by its own rules: carol@other.test reaches 10.1.0.0/16 tcp 22";
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(0);
    expect(plan.stdout.split(line)).toHaveLength(2);
    expect(plan.stdout).toContain('Access tests (after apply): all 2 passed.');
    const drift = await netform(server, ['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(0);
    expect(drift.stdout).toContain(line);
  });
});

describe("drift's access section with prune on", () => {
  let server: TestServer;
  let ws: Workspace;
  let file: string;
  useServerAndWorkspace(
    (started) => ({ server, ws } = started),
    async (s) => {
      file = ws.write('team.yaml', teamYaml());
      await applied(s, file);
      await create(s, 'rules', { action: 'accept', destination: '10.9.0.0/16' });
    },
  );

  it('says what is reachable now and what apply would do; plan keeps its forward wording', async () => {
    const drift = await netform(server, ['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain(
      '10.9.0.0/16 (all protocols): reachable now by all users because of rule accept 10.9.0.0/16 (global, on the server but in no file); apply would block it',
    );
    expect(drift.stdout).not.toContain('now blocked 10.9.0.0/16');
    const md = await netform(server, ['drift', '-f', file, '--format', 'markdown']);
    expect(md.stdout).toContain(
      '`10.9.0.0/16 (all protocols): reachable now by all users because of rule accept 10.9.0.0/16 (global, on the server but in no file); apply would block it`',
    );
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stdout).toContain('Access changes after apply (compared with the server now):');
    expect(plan.stdout).toContain('all users: now blocked 10.9.0.0/16 (all protocols)');
  });
});

describe('plan --base: a pull request that writes a hand promotion into the files', () => {
  let server: TestServer;
  let ws: Workspace;
  useServerAndWorkspace((started) => ({ server, ws } = started));

  it("lists it under this pull request's access changes as a ratification", async () => {
    const repo = ws.path('repo');
    const withGrace = (admin: boolean) =>
      teamYaml()
        .replace(/\ntests:[\s\S]*$/, '\n')
        .replace('rules:\n', `  - email: grace@corp.test\n${admin ? '    role: admin\n' : ''}rules:\n`);
    ws.write('repo/desired/team.yaml', withGrace(false));
    git(ws.dir, 'init', '-q', '-b', 'main', repo);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'adopt');
    const apply = await netform(server, ['apply', '-f', 'desired/', '--yes'], {}, repo);
    expect(apply.code, describeResult(apply)).toBe(0);
    const grace = (await serverState(server)).users.find((u) => u.email === 'grace@corp.test');
    const promoted = await server.api('PATCH', `/v0/users/${grace.id}`, { user: { role: 'admin' } });
    expect(promoted.status).toBe(200);

    git(repo, 'checkout', '-q', '-b', 'ratify');
    ws.write('repo/desired/team.yaml', withGrace(true));
    git(repo, 'commit', '-q', '-am', 'grace is an admin');
    const plan = await netform(server, ['plan', '-f', 'desired/', '--base', 'main'], {}, repo);
    expect(plan.code, describeResult(plan)).toBe(0);
    const own = plan.stdout.indexOf('Access changes of this pull request (after apply):');
    expect(own).toBeGreaterThan(-1);
    expect(plan.stdout.slice(own)).toMatch(
      /^Access changes of this pull request \(after apply\):\n {2}ratifies: grace@corp\.test is admin \(made by hand on the server\)\n/,
    );
    expect(plan.stdout).not.toContain("(none: merging it changes nothing that main's files would not)");
  });
});
