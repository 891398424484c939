/**
 * A plan's `access_delta` against a real server, in-process: `plan --format json` and `plan --base`
 * carry it, it validates against schemas/access-delta.schema.json (and the plan against the plan
 * schema, closed), and examples/policy/access-delta.jq gates on it with Debian's jq, both ways.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { expandAccessDelta } from '../../../src/access/delta-sets.js';
import { git } from '../../helpers/git.js';
import { closedPlanValidators } from '../../helpers/plan-schema-closed.js';
import type { TestServer } from '../../helpers/server.js';
import { describeResult, netform, useServerAndWorkspace, wgKey, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const ALICE = wgKey();
const BOB = wgKey();
const POLICY = new URL('../../../examples/policy/access-delta.jq', import.meta.url).pathname;
const schema = JSON.parse(
  readFileSync(new URL('../../../schemas/access-delta.schema.json', import.meta.url), 'utf8'),
) as object;
const validateDelta = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

function desired(more: { ports?: string; bob?: string; bobAdmin?: boolean; web?: boolean } = {}): string {
  return `version: 1
settings:
  prune: true
  manage: { users: ["*@delta.test"] }
users:
  - email: alice@delta.test
    devices:
      - { name: laptop, public_key: "${ALICE}" }
    rules:
      - { action: accept, destination: 10.20.0.0/16, port_type: tcp, port_range: "${more.ports ?? '5432'}" }
${more.web === false ? '' : '      - { action: accept, destination: 10.30.0.0/16, port_type: tcp, port_range: "443" }\n'}  - email: bob@delta.test${more.bobAdmin ? '\n    role: admin' : ''}
    devices:
      - { name: desk, public_key: "${BOB}" }
${more.bob ? `    rules:\n      - ${more.bob}\n` : ''}rules:
  - { action: drop, destination: 10.0.0.0/8 }
`;
}

function valid(delta: unknown): void {
  const ok = validateDelta(delta);
  expect(ok, JSON.stringify(validateDelta.errors)).toBe(true);
}

/** examples/policy/access-delta.jq on a plan document: its exit code and what it says. */
function policy(plan: string): { code: number | null; out: string; err: string } {
  const r = spawnSync('jq', ['-r', '--argjson', 'max_users', '3', '-f', POLICY], { input: plan, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('plan access_delta', () => {
  it('is in plan --format json, valid against its schema, and the jq policy gates on it both ways', async () => {
    const file = ws.write('plan/netform.yaml', desired());
    expect((await netform(server, ['apply', '-f', file, '--yes'])).code).toBe(0);

    // Passing: a port range widened for one user, a rule removed.
    ws.write('plan/netform.yaml', desired({ ports: '5432-5440', web: false }));
    const pass = await netform(server, ['plan', '-f', file, '--format', 'json']);
    expect(pass.code, describeResult(pass)).toBe(2);
    const doc = JSON.parse(pass.stdout);
    const { plan: validPlan } = closedPlanValidators();
    expect(validPlan(doc), JSON.stringify(validPlan.errors)).toBe(true);
    valid(doc.access_delta);
    expect(doc.access_delta.version).toBe(2);
    expect(doc.access_delta.compared).toEqual({ before: 'the server now', after: 'after apply' });
    // Entries refer to the sets of regions by index; expanded, each lists its own.
    expect(doc.access_delta.entries[0]).toMatchObject({ gained: [0], lost: [1] });
    const alice = expandAccessDelta(doc.access_delta).entries[0]!;
    expect(alice).toMatchObject({ user: 'alice@delta.test', devices: ['laptop'], tunnel: { 4: 'kept', 6: 'kept' } });
    expect(alice.gained).toEqual([
      expect.objectContaining({
        addresses: ['10.20.0.0/16'],
        protocol: 'tcp',
        ports: '5433-5440',
        // As the server stores it: with spaces.
        after: expect.objectContaining({ port_range: '5432 - 5440', line: 10 }),
      }),
    ]);
    expect(alice.lost).toEqual([
      expect.objectContaining({
        addresses: ['10.30.0.0/16'],
        ports: '443',
        before: expect.objectContaining({ id: expect.any(String) }),
      }),
    ]);
    expect(doc.access_delta.blast_radius).toMatchObject({
      users_affected: 1,
      gained: { users: 1, devices: 1, address_ports: String(65536 * 8) },
      lost: { users: 1, devices: 1, address_ports: '65536' },
      admins_gained: [],
    });
    const passed = policy(pass.stdout);
    expect(passed, passed.err).toMatchObject({ code: 0, out: 'access policy: pass\n' });

    // Failing: bob an admin, with every protocol to a block.
    ws.write('plan/netform.yaml', desired({ bobAdmin: true, bob: '{ action: accept, destination: 10.40.0.0/16 }' }));
    const fail = await netform(server, ['plan', '-f', file, '--format', 'json']);
    expect(fail.code, describeResult(fail)).toBe(2);
    valid(JSON.parse(fail.stdout).access_delta);
    const failed = policy(fail.stdout);
    expect(failed.code).toBe(1);
    const lines = failed.err.split('\n');
    expect(lines[0]).toBe('access policy: bob@delta.test becomes an admin');
    expect(lines[1]).toMatch(
      /^access policy: bob@delta\.test \(desk\) gains every protocol and port to 10\.40\.0\.0\/16 by accept 10\.40\.0\.0\/16 \(.*plan\/netform\.yaml:17\)$/,
    );
    expect(lines.slice(2)).toEqual(['']);
  });

  it('with --base: the pull request own changes, valid, in a saved plan too', async () => {
    const repo = ws.path('repo');
    ws.write('repo/desired/netform.yaml', desired());
    git(ws.dir, 'init', '-q', '-b', 'main', repo);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'base');
    expect((await netform(server, ['apply', '-f', 'desired/', '--yes'], {}, repo)).code).toBe(0);
    // On main, not applied yet: alice's port range widened. The pull request: bob gets the database.
    ws.write('repo/desired/netform.yaml', desired({ ports: '5432-5440' }));
    git(repo, 'commit', '-q', '-am', 'widen');
    git(repo, 'checkout', '-q', '-b', 'pr');
    const bobDb = '{ action: accept, destination: 10.20.0.0/16, port_type: tcp, port_range: "5432" }';
    ws.write('repo/desired/netform.yaml', desired({ ports: '5432-5440', bob: bobDb }));
    git(repo, 'commit', '-q', '-am', 'bob');

    const r = await netform(server, ['plan', '-f', 'desired/', '--base', 'main', '--format', 'json'], {}, repo);
    expect(r.code, describeResult(r)).toBe(2);
    const document = JSON.parse(r.stdout).access_delta;
    valid(document);
    expect(document.compared).toEqual({
      before: "after apply of main's changes",
      after: "after apply of this pull request's changes too",
    });
    const delta = expandAccessDelta(document);
    // Only the pull request's own grant: alice's wider range is main's.
    expect(
      delta.entries.map((e: any) => `${e.user} ${e.gained.map((g: any) => `${g.ports} ${g.after.line}`)}`),
    ).toEqual(['bob@delta.test 5432 16']);

    const saved = ws.path('saved-plan.json');
    expect((await netform(server, ['plan', '-f', 'desired/', '--base', 'main', '-o', saved], {}, repo)).code).toBe(2);
    const savedDelta = JSON.parse(readFileSync(saved, 'utf8')).access_delta;
    valid(savedDelta);
    expect(savedDelta.compared).toEqual(delta.compared);
    const applied = await netform(server, ['apply', saved], {}, repo);
    expect(applied.code, describeResult(applied)).toBe(0);
  });
});
