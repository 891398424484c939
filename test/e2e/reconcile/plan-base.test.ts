/**
 * `netform plan --base REF` in a real git repository against a real server: while the server has
 * drifted and an earlier merge is not applied yet, the pull request's plan tells its own changes
 * from those already on its base, and lists what it undoes. A path missing at REF: every change is
 * the pull request's, with a note. `--base-file` names the base's files directly (a CDKTF stack).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
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
import { git } from '../../helpers/git.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const LAPTOP = wgKey();
const PSK = wgKey();

/** The desired state of the repository: alice (laptop, its preshared key in an untracked file) and bob, plus `more`. */
function desiredYaml(more: { mtu?: number; bobAdmin?: boolean; users?: string[] } = {}): string {
  return `version: 1
settings:
  prune: true
  manage: { users: ["*@base.test"], rules: [] }
users:
  - email: alice@base.test
    devices:
      - name: laptop
        public_key: "${LAPTOP}"
        mtu: ${more.mtu ?? 1280}
        preshared_key: { file: ../secrets/laptop.psk }
  - email: bob@base.test${more.bobAdmin ? '\n    role: admin' : ''}
${(more.users ?? []).map((u) => `  - email: ${u}@base.test\n`).join('')}`;
}

describe('plan --base', () => {
  it("tells the pull request's own changes from drift and an unapplied merge, and lists what it undoes", async () => {
    const repo = ws.path('repo');
    ws.write('repo/README.md', 'GitOps\n');
    ws.write('repo/secrets/laptop.psk', `${PSK}\n`);
    ws.write('repo/.gitignore', 'secrets/\n');
    git(ws.dir, 'init', '-q', '-b', 'main', repo);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'no desired state yet');
    const before = git(repo, 'rev-parse', 'HEAD');

    // main: the desired state, applied.
    ws.write('repo/desired/netform.yaml', desiredYaml());
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'adopt');
    const applied = await netform(server, ['apply', '-f', 'desired/', '--yes'], {}, repo);
    expect(applied.code, describeResult(applied)).toBe(0);

    // Drift: carol made by hand. An earlier merge not applied yet: dave added, bob an admin, mtu 1300.
    await create(server, 'users', { email: 'carol@base.test' });
    ws.write('repo/desired/netform.yaml', desiredYaml({ mtu: 1300, bobAdmin: true, users: ['dave'] }));
    git(repo, 'commit', '-q', '-am', 'dave, bob admin, mtu 1300');
    const main = git(repo, 'rev-parse', 'HEAD');

    // The pull request: kim added, bob not an admin after all, the laptop's mtu 1400.
    git(repo, 'checkout', '-q', '-b', 'add-kim');
    ws.write('repo/desired/netform.yaml', desiredYaml({ mtu: 1400, users: ['dave', 'kim'] }));
    git(repo, 'commit', '-q', '-am', 'kim');

    const json = await netform(server, ['plan', '-f', 'desired/', '--base', 'main', '--format', 'json'], {}, repo);
    expect(json.code, describeResult(json)).toBe(2);
    const doc = JSON.parse(json.stdout);
    expect(doc.changes.map((c: any) => `${c.origin} ${c.action} ${c.id}`)).toEqual([
      'base create user:dave@base.test',
      'pr create user:kim@base.test',
      'pr update device:alice@base.test/laptop',
      'base delete user:carol@base.test',
    ]);
    expect(doc.resolved_by_pr.map((c: any) => `${c.action} ${c.id}`)).toEqual(['update user:bob@base.test']);
    expect(doc.base).toMatchObject({ ref: 'main', commit: main });
    expect(json.stdout).not.toContain(PSK);

    const md = await netform(server, ['plan', '-f', 'desired/', '--base', 'main', '--format', 'markdown'], {}, repo);
    expect(md.code, describeResult(md)).toBe(2);
    const text = md.stdout;
    expect(text).toContain(
      `Compared with \`main\` (\`${main.slice(0, 12)}\`): 2 changes by this pull request, 2 changes also applied on merge (already in its plan), 1 change undone.`,
    );
    const own = text.indexOf("<summary>This pull request's changes</summary>");
    const also = text.indexOf("<summary>Also applied on merge: already in main's plan");
    const undone = text.indexOf("<summary>Undone by this pull request: in main's plan, not made on merge</summary>");
    expect(own).toBeGreaterThan(0);
    expect(also).toBeGreaterThan(own);
    expect(undone).toBeGreaterThan(also);
    const at = (s: string) => text.indexOf(s);
    expect(at('+ user kim@base.test')).toBeGreaterThan(own);
    expect(at('+ user kim@base.test')).toBeLessThan(also);
    expect(at('      mtu: 1280 -> 1400')).toBeLessThan(also);
    expect(at('+ user dave@base.test')).toBeGreaterThan(also);
    expect(at('- user carol@base.test')).toBeGreaterThan(also);
    expect(at('~ user bob@base.test')).toBeGreaterThan(undone);

    // The saved plan carries the origins; applying it changes nothing about what it does.
    const planPath = ws.path('base-plan.json');
    expect((await netform(server, ['plan', '-f', 'desired/', '--base', 'main', '-o', planPath], {}, repo)).code).toBe(
      2,
    );
    const saved = JSON.parse(await readFile(planPath, 'utf8'));
    expect(saved.changes.filter((c: any) => c.origin === 'pr')).toHaveLength(2);

    // A ref where the path does not exist: everything is the pull request's, and the plan says why.
    const early = await netform(server, ['plan', '-f', 'desired/', '--base', before, '--format', 'json'], {}, repo);
    expect(early.code, describeResult(early)).toBe(2);
    const earlyDoc = JSON.parse(early.stdout);
    expect(new Set(earlyDoc.changes.map((c: any) => c.origin))).toEqual(new Set(['pr']));
    expect(earlyDoc.base.note).toBe(
      `desired does not exist at ${before}: every change counts as introduced by this pull request`,
    );
    const earlyText = await netform(server, ['plan', '-f', 'desired/', '--base', before], {}, repo);
    expect(earlyText.stdout).toContain(`  ! desired does not exist at ${before}: every change counts as introduced`);

    // A ref that names no commit, and a folder outside git: refused before the server is asked.
    const unknown = await netform(server, ['plan', '-f', 'desired/', '--base', 'no-such-branch'], {}, repo);
    expect(unknown.code, describeResult(unknown)).toBe(1);
    expect(unknown.stderr).toContain('error: --base no-such-branch: no such commit in this repository');
    const outside = ws.write('outside/netform.yaml', desiredYaml());
    const notGit = await netform(server, ['plan', '-f', outside, '--base', 'main']);
    expect(notGit.code, describeResult(notGit)).toBe(1);
    expect(notGit.stderr).toMatch(/error: .*outside\/netform\.yaml is not inside a git repository/);

    // Nothing was written by any of it.
    expect((await serverState(server)).users.map((u) => u.email)).not.toContain('kim@base.test');
  });

  it("reads REF's blobs within the desired state's bound: sizes checked first, nothing over it read (2026-11b G4)", async () => {
    const repo = ws.path('big-base');
    ws.write('big-base/desired/n.yaml', 'version: 1\nusers:\n  - email: a@base.test\n');
    git(ws.dir, 'init', '-q', '-b', 'main', repo);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'base');
    // One 130 MiB blob (zeros: small in the object store), under two names in REF's desired/ folder:
    // 260 MiB in total, over the 256 MiB the working tree's loader allows.
    const size = 130 * 1024 * 1024;
    const blob = (
      await promisify(execFile)('sh', ['-c', `head -c ${size} /dev/zero | git hash-object -w --stdin`], { cwd: repo })
    ).stdout.trim();
    const small = git(repo, 'rev-parse', 'HEAD:desired/n.yaml');
    const mktree = (lines: string[]) =>
      promisify(execFile)('sh', ['-c', `printf '${lines.join('\\n')}\\n' | git mktree`], { cwd: repo }).then((r) =>
        r.stdout.trim(),
      );
    const desiredTree = await mktree([
      `100644 blob ${blob}\tbig1.yaml`,
      `100644 blob ${blob}\tbig2.yaml`,
      `100644 blob ${small}\tn.yaml`,
    ]);
    const rootTree = await mktree([`040000 tree ${desiredTree}\tdesired`]);
    const big = git(repo, 'commit-tree', rootTree, '-p', 'HEAD', '-m', 'big');
    git(repo, 'branch', 'big', big);

    const refused = await netform(server, ['plan', '-f', 'desired', '--base', 'big'], {}, repo);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'error: desired/big2.yaml at --base big: takes the desired state past 256 MiB in total, the limit for the desired state; it is not read\n',
    );
  });

  it('--base-file: a synthesized CDKTF stack as the base', async () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const dir = await mkdtemp(join(tmpdir(), 'netform-base-cdktf-'));
    try {
      await promisify(execFile)(process.execPath, [join(root, 'examples', 'cdktf', 'main.mjs'), join(dir, 'out')], {
        cwd: dir,
      });
      const stack = join(dir, 'out', 'stacks', 'example-corp', 'cdk.tf.json');
      const secret = async (name: string) =>
        (await readFile(join(root, 'examples', 'basic', 'secrets', name), 'utf8')).trim();
      const env = {
        TF_VAR_alice_password: await secret('example-alice.password'),
        TF_VAR_bob_password: await secret('example-bob.password'),
        TF_VAR_alice_laptop_psk: await secret('example-alice-laptop.psk'),
        TF_VAR_carol_laptop_psk: await secret('example-carol-laptop.psk'),
      };
      const result = await netform(server, ['plan', '-f', stack, '--base-file', stack, '--format', 'json'], env, dir);
      expect(result.code, describeResult(result)).toBe(2);
      const doc = JSON.parse(result.stdout);
      expect(doc.changes.length).toBeGreaterThan(0);
      expect(new Set(doc.changes.map((c: any) => c.origin))).toEqual(new Set(['base']));
      expect(doc.base).toEqual(expect.objectContaining({ ref: stack }));
      const both = await netform(server, ['plan', '-f', stack, '--base-file', stack, '--base', 'main'], env, dir);
      expect(both.code).toBe(1);
      expect(both.stderr).toContain('error: give --base REF or --base-file PATH, not both');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
