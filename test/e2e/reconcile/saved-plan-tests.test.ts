/**
 * A saved plan carries its access tests to its apply, which judges them again on the server as it
 * is then, after apply, before any write: against a real server, a plan saved while its tests
 * pass, then a hand-made global rule outside the scope that makes one fail, is refused by `apply
 * PLANFILE` with nothing written; the tests are sealed with the plan.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import type { TestServer } from '../../helpers/server.js';
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

const TEAM = `version: 2
settings:
  prune: true
  manage: { users: ["*@corp.test"], rules: ["10.0.0.0/8"] }
users:
  - email: bob@corp.test
    devices:
      - { name: laptop, public_key: "${wgKey()}" }
rules:
  - { action: drop, destination: 10.0.0.0/8 }
tests:
  - { name: bob not past the range, from: bob@corp.test, to: "10.20.99.5:22/tcp", expect: drop }
  - { name: bob reaches the internet, from: bob@corp.test, to: "1.1.1.1:443/tcp", expect: accept }
`;

describe('apply PLANFILE judges the access tests on the server as it is at apply time', () => {
  let server: TestServer;
  let ws: Workspace;
  useServerAndWorkspace((started) => ({ server, ws } = started));

  it('refuses a plan saved while its tests passed once a hand-made rule makes one fail, and writes nothing', async () => {
    const file = ws.write('team.yaml', TEAM);
    const saved = ws.path('plan.json');
    const plan = await netform(server, ['plan', '-f', file, '-o', saved]);
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stdout).toContain('Access tests (after apply): all 2 passed.');
    const doc = JSON.parse(readFileSync(saved, 'utf8'));
    expect(doc.access_tests.tests).toHaveLength(2);
    expect(doc.access_tests.tests[0]).toMatchObject({ name: 'bob not past the range', expect: 'drop' });
    expect(doc.access_tests.tests[0].at).toMatch(/team\.yaml:12$/);
    expect(doc.access_tests.manage).toEqual({ users: ['*@corp.test'], rules: ['10.0.0.0/8'] });
    const { saved: validSaved } = closedPlanValidators();
    expect(validSaved(doc), JSON.stringify(validSaved.errors)).toBe(true);

    // The tests are sealed with the plan: one taken out is an edited plan.
    const edited = ws.path('edited.json');
    writeFileSync(edited, JSON.stringify({ ...doc, access_tests: { ...doc.access_tests, tests: [] } }));
    const tampered = await netform(server, ['apply', edited]);
    expect(tampered.code, describeResult(tampered)).not.toBe(0);
    expect(tampered.stderr).toContain('the saved plan was modified after netform plan wrote it');

    // Outside manage.rules, so no change of the plan is stale; but every user now reaches 10.0.0.0/8.
    const broad = await create(server, 'rules', { action: 'accept', destination: '10.0.0.0/7' });
    const before = await serverState(server);
    const refused = await netform(server, ['apply', saved]);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toContain(
      '1 access test failed on the server as it would be after apply; nothing was written:',
    );
    expect(refused.stderr).toContain('bob not past the range');
    expect(refused.stderr).toContain(
      'fails because of rule accept 10.0.0.0/7 (global, outside manage.rules), which this repository cannot change',
    );
    expect(await serverState(server)).toEqual(before);

    // The refusal did not spend the plan: once the rule is gone, the same plan applies.
    expect((await server.api('DELETE', `/v0/rules/${broad.id}`)).status).toBeLessThan(300);
    const applied = await netform(server, ['apply', saved]);
    expect(applied.code, describeResult(applied)).toBe(0);
    const after = await serverState(server);
    expect(after.users.map((u) => u.email)).toContain('bob@corp.test');
    expect(after.rules.map((r) => r.destination)).toEqual(['10.0.0.0/8']);
  });
});
