/**
 * Approvals routed by impact, end to end in a real git repository against a real server: the
 * owners of `settings.owners` as the pull request's base has them, named in the plan (and its
 * pull-request comment) with what each change does inside their blocks; `apply --reviewed` at
 * merge withholds every change that needs a reviewer unless `--approvals FILE` shows one for the
 * pull request's head commit, by someone other than its author (exit 5, naming who is missing).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { git } from '../../helpers/git.js';
import { closedPlanValidators } from '../../helpers/plan-schema-closed.js';
import type { TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const DB_OWNERS = `  owners:
    - blocks: [10.20.0.0/16]
      reviewers: ["@org/db-team"]
`;

/** The repository's desired state: alice and bob of DOMAIN, a global drop of the database network, and `more`. */
function desired(domain: string, more: { owners?: string; alice?: string; bob?: string } = {}): string {
  return `version: 1
settings:
  manage: { users: ["*@${domain}"], rules: [10.20.0.0/16] }
${more.owners ?? DB_OWNERS}users:
  - email: alice@${domain}
${more.alice ?? ''}  - email: bob@${domain}
${more.bob ?? ''}rules:
  - { action: drop, destination: 10.20.0.0/16 }
`;
}

const ALICE_DB = `    rules:
      - { action: accept, destination: 10.20.0.0/16, port_type: tcp, port_range: "5432" }
`;
const BOB_ELSEWHERE = `    rules:
      - { action: drop, destination: 10.99.0.0/16 }
`;

interface PullRequest {
  repo: string;
  file: string;
  head: string;
  older: string;
  plan: string;
  comment: string;
}

/**
 * main applied to the server; a pull request (two commits, by `carol`) with `pr`'s files, planned
 * against main with its head and author recorded; then merged (a merge commit on main).
 */
async function pullRequest(domain: string, pr: string): Promise<PullRequest> {
  const repo = ws.path(domain);
  const file = ws.write(`${domain}/netform.yaml`, desired(domain));
  git(ws.dir, 'init', '-q', '-b', 'main', repo);
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'main');
  const applied = await netform(server, ['apply', '-f', file, '-y']);
  expect(applied.code, describeResult(applied)).toBe(0);
  git(repo, 'checkout', '-q', '-b', 'pr');
  writeFileSync(file, `${pr}# first push\n`);
  git(repo, 'commit', '-q', '-am', 'first push');
  const older = git(repo, 'rev-parse', 'HEAD');
  writeFileSync(file, pr);
  git(repo, 'commit', '-q', '-am', 'second push');
  const head = git(repo, 'rev-parse', 'HEAD');
  const plan = ws.path(`${domain}-plan.json`);
  const planned = await netform(server, [
    'plan',
    '-f',
    file,
    '--base',
    'main',
    '--pr-head',
    head,
    '--pr-author',
    'carol',
    '-o',
    plan,
    '--format',
    'markdown',
  ]);
  expect(planned.code, describeResult(planned)).toBe(2);
  git(repo, 'checkout', '-q', 'main');
  git(repo, 'merge', '-q', '--no-ff', '-m', 'merge pr', 'pr');
  return { repo, file, head, older, plan, comment: planned.stdout };
}

function approvals(domain: string, entries: unknown[]): string {
  return ws.write(`${domain}-approvals.json`, JSON.stringify(entries));
}

async function rulesOf(domain: string): Promise<string[]> {
  const { users, rules } = await serverState(server);
  const ids = new Map(
    users.filter((u) => (u.email as string).endsWith(`@${domain}`)).map((u) => [u.id as string, u.email as string]),
  );
  return rules
    .filter((r) => ids.has(r.user_id))
    .map(
      (r) =>
        `${ids.get(r.user_id)} ${r.action} ${r.destination}${r.port_type ? ` ${r.port_type}:${r.port_range}` : ''}`,
    )
    .sort();
}

function merge(pr: PullRequest, more: string[] = []) {
  return netform(server, ['apply', '-f', pr.file, '--reviewed', pr.plan, '--base', 'HEAD^1', ...more]);
}

describe('approvals routed by impact', () => {
  it('names the owners in the pull-request comment, and withholds their changes without --approvals (exit 5)', async () => {
    const domain = 'routed.test';
    const pr = await pullRequest(domain, desired(domain, { alice: ALICE_DB, bob: BOB_ELSEWHERE }));
    expect(pr.comment).toContain(
      `> - approval needed from \`@org/db-team\` (gains tcp/5432 to 10.20.0.0/16 for alice@${domain})`,
    );

    const merged = await merge(pr);
    expect(merged.code, describeResult(merged)).toBe(5);
    expect(merged.stdout).toContain(
      'Withheld, not applied: 1 change that the reviewed plan does not show as it is now, or that needs an approval (settings.owners):\n  + rule accept 10.20.0.0/16 tcp 5432',
    );
    expect(merged.stdout).toContain('withheld: approval needed (from @org/db-team)');
    expect(merged.stderr).toContain(
      'Withheld 1 change that the reviewed plan does not show as it is now, or that needs an approval not given',
    );
    expect(merged.stderr).toContain(
      'approval missing from @org/db-team: the changes that need it were withheld (no --approvals FILE was given)',
    );
    // bob's rule needs no reviewer: written; alice's is not.
    expect(await rulesOf(domain)).toEqual([`bob@${domain} drop 10.99.0.0/16`]);
  });

  it('records the owners and the pull request in the sealed plan, every member in the schema, and the seal covers them', async () => {
    const domain = 'sealed.test';
    const pr = await pullRequest(domain, desired(domain, { alice: ALICE_DB }));
    const saved = JSON.parse(readFileSync(pr.plan, 'utf8'));
    expect(saved.format_version).toBe(3);
    expect(saved.owners).toEqual({
      from: expect.stringMatching(/^main \([0-9a-f]{12}\)$/),
      required: [{ owner: '@org/db-team', because: [`gains tcp/5432 to 10.20.0.0/16 for alice@${domain}`] }],
      pull_request: { head: pr.head, author: 'carol' },
    });
    expect(saved.changes.map((c: { required_owners?: string[] }) => c.required_owners)).toEqual([['@org/db-team']]);
    const { saved: validate } = closedPlanValidators();
    expect(validate(saved), JSON.stringify(validate.errors)).toBe(true);

    // In a GitHub pull_request run, the event names the pull request without flags.
    const event = ws.write(
      `${domain}-event.json`,
      JSON.stringify({ pull_request: { head: { sha: pr.head }, user: { login: 'carol' } } }),
    );
    const again = ws.path(`${domain}-event-plan.json`);
    const planned = await netform(server, ['plan', '-f', pr.file, '-o', again], {
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: event,
    });
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(JSON.parse(readFileSync(again, 'utf8')).owners.pull_request).toEqual({ head: pr.head, author: 'carol' });

    // Drift is not a review: its report names no owners.
    const drift = await netform(server, ['drift', '-f', pr.file, '--format', 'json']);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(JSON.parse(drift.stdout)).not.toHaveProperty('owners');

    // The author named as someone else, to let the author approve: the seal no longer matches.
    saved.owners.pull_request.author = 'someone-else';
    writeFileSync(pr.plan, JSON.stringify(saved));
    const carol = approvals(domain, [{ login: 'carol', teams: ['@org/db-team'], commit: pr.head }]);
    const merged = await merge(pr, ['--approvals', carol]);
    expect(merged.code, describeResult(merged)).toBe(1);
    expect(merged.stderr).toContain('the saved plan was modified after netform plan wrote it');
    expect(await rulesOf(domain)).toEqual([]);
  });

  it('counts no approval of an older commit or by the author, and applies with a reviewer of the head commit', async () => {
    const domain = 'approved.test';
    const pr = await pullRequest(domain, desired(domain, { alice: ALICE_DB }));
    const team = ['@org/db-team'];

    const stale = await merge(pr, [
      '--approvals',
      approvals(domain, [{ login: 'dana', teams: team, commit: pr.older }]),
    ]);
    expect(stale.code, describeResult(stale)).toBe(5);
    expect(stale.stderr).toContain(
      `approval missing from @org/db-team: the changes that need it were withheld (an approval counts for commit ${pr.head.slice(0, 12)} only, never from carol (the author)`,
    );
    expect(await rulesOf(domain)).toEqual([]);

    const own = await merge(pr, ['--approvals', approvals(domain, [{ login: 'Carol', teams: team, commit: pr.head }])]);
    expect(own.code, describeResult(own)).toBe(5);
    expect(await rulesOf(domain)).toEqual([]);

    const otherTeam = await merge(pr, [
      '--approvals',
      approvals(domain, [{ login: 'erin', teams: ['@org/web-team'], commit: pr.head }]),
    ]);
    expect(otherTeam.code, describeResult(otherTeam)).toBe(5);
    expect(await rulesOf(domain)).toEqual([]);

    const approved = await merge(pr, [
      '--approvals',
      approvals(domain, [{ login: 'dana', teams: team, commit: pr.head }]),
    ]);
    expect(approved.code, describeResult(approved)).toBe(0);
    expect(approved.stdout).not.toContain('withheld');
    expect(await rulesOf(domain)).toEqual([`alice@${domain} accept 10.20.0.0/16 tcp:5432`]);
  });

  it('withholds a pull request that drops its owners and widens their access in the same change', async () => {
    const domain = 'disowned.test';
    const pr = await pullRequest(domain, desired(domain, { owners: '', alice: ALICE_DB, bob: BOB_ELSEWHERE }));
    // The owners are the base's: the pull request cannot remove them for itself.
    expect(pr.comment).toContain('settings.owners no longer gives it 10.20.0.0/16');
    expect(pr.comment).toContain(`gains tcp/5432 to 10.20.0.0/16 for alice@${domain}`);

    const web = approvals(domain, [{ login: 'erin', teams: ['@org/web-team'], commit: pr.head }]);
    const merged = await merge(pr, ['--approvals', web]);
    expect(merged.code, describeResult(merged)).toBe(5);
    expect(merged.stderr).toContain('approval missing from @org/db-team');
    // Narrowing the owners needs them for every change of the pull request: nothing is written.
    expect(await rulesOf(domain)).toEqual([]);
  });

  it('refuses a bad approvals file, naming the entry and field, and writes nothing', async () => {
    const domain = 'badfile.test';
    const pr = await pullRequest(domain, desired(domain, { alice: ALICE_DB }));
    const bad = approvals(domain, [
      { login: 'dana', teams: ['@org/db-team'], commit: pr.head },
      { login: 'erin', teams: 'db', commit: pr.head },
    ]);
    const merged = await merge(pr, ['--approvals', bad]);
    expect(merged.code, describeResult(merged)).toBe(1);
    expect(merged.stderr).toContain(`--approvals ${bad}: entry 2: "teams" must be a list of handles`);
    expect(await rulesOf(domain)).toEqual([]);
  });

  it('validate names the file and line of a bad owners entry', async () => {
    ws.write(
      'bad-owners/netform.yaml',
      `version: 2
settings:
  owners:
    - blocks: [10.20.0.0/16, not-a-block]
      reviewers: ["@org/db-team"]
    - users: ["*@db.test"]
      reviewers: ["org/db-team"]
    - reviewers: ["@org/web-team"]
`,
    );
    const checked = await netform(server, ['validate', '-f', 'bad-owners/netform.yaml'], {}, ws.dir);
    expect(checked.code, describeResult(checked)).toBe(1);
    const at = 'bad-owners/netform.yaml';
    expect(checked.stderr).toContain(
      `${at}:4:30: settings.owners[0].blocks[1]: "not-a-block" is not a CIDR block or an address`,
    );
    expect(checked.stderr).toContain(
      `${at}:7:19: settings.owners[1].reviewers[0]: "org/db-team" is a team: write it with its @`,
    );
    expect(checked.stderr).toContain(`${at}:8:7: settings.owners[2]: an owners entry names the blocks or the users`);
  });
});
