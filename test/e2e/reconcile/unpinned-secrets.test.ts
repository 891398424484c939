/**
 * Plans without production secrets, against a real server: a pull request's plan made where the
 * password's variable is unset shows its reference, exits 2 as any plan with changes does, and
 * seals the secret as `pinned: false`; applied later (`apply PLANFILE`, `apply -f --reviewed`) the
 * secret is read then, said before the writes, and a secret still missing stops the apply before
 * any write, naming the variable and where it is declared. A secret file that cannot be read stays
 * an error at plan time. No secret value reaches any output.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CliResult } from '../../helpers/cli.js';
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

const PASSWORD = `kim-${randomBytes(12).toString('hex')}`;
const outputs: CliResult[] = [];

/** netform, keeping every output for the check that no secret value appears in any. */
async function run(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const result = await netform(server, args, { KIM_PASSWORD: undefined, ...env });
  outputs.push(result);
  return result;
}

/** kim of DOMAIN, created with the password from KIM_PASSWORD (line 6, column 15) and a rule. */
function team(domain: string): string {
  return `version: 2
settings:
  manage: { users: ["*@${domain}"], rules: [] }
users:
  - email: kim@${domain}
    password: { env: KIM_PASSWORD }
    rules:
      - { action: accept, destination: 10.10.7.0/24 }
`;
}

async function emailsOf(domain: string): Promise<string[]> {
  const { users } = await serverState(server);
  return users.map((u) => u.email as string).filter((email) => email.endsWith(`@${domain}`));
}

describe('a plan made where KIM_PASSWORD is not set', () => {
  it('shows the reference, exits 2 and seals the secret as not pinned', async () => {
    const file = ws.write('a/team.yaml', team('a.test'));
    const out = ws.path('a/pr.json');
    const plan = await run(['plan', '-f', file, '-o', out]);
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stdout).toContain('password from environment variable KIM_PASSWORD, read at apply: not pinned');
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    const kim = doc.changes.find((c: { id: string }) => c.id === 'user:kim@a.test');
    expect(kim.secrets).toHaveLength(1);
    expect(kim.secrets[0]).toMatchObject({ field: 'password', ref: { env: 'KIM_PASSWORD' }, pinned: false });
    expect(kim.secrets[0].hmac).toBeUndefined();
    expect(kim.secrets[0].at).toMatch(/team\.yaml:6:15$/);
    const { saved } = closedPlanValidators();
    expect(saved(doc), JSON.stringify(saved.errors)).toBe(true);
    // Sealed: the secret pinned by hand is an edited plan.
    const edited = ws.write('a/edited.json', readFileSync(out, 'utf8').replace('"pinned": false', '"pinned": true'));
    const refused = await run(['apply', edited], { KIM_PASSWORD: PASSWORD });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('was modified after netform plan wrote it');
  });

  it('apply PLANFILE without the variable fails before any write, naming it and where it is declared', async () => {
    const before = await serverState(server);
    const r = await run(['apply', ws.path('a/pr.json')]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stderr).toMatch(
      /team\.yaml:6:15: user kim@a\.test: its password: environment variable KIM_PASSWORD is not set/,
    );
    expect(r.stderr).toContain('nothing was changed');
    expect(await serverState(server)).toEqual(before);
  });

  it('apply PLANFILE with a value the server would refuse fails before any write', async () => {
    const before = await serverState(server);
    const r = await run(['apply', ws.path('a/pr.json')], { KIM_PASSWORD: 'short' });
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stderr).toMatch(/team\.yaml:6:15: user kim@a\.test: its password .*\(env:KIM_PASSWORD\)/);
    expect(await serverState(server)).toEqual(before);
  });

  it('apply PLANFILE with the variable reads it then, says so before writing, and creates kim', async () => {
    const r = await run(['apply', ws.path('a/pr.json')], { KIM_PASSWORD: PASSWORD });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toContain('1 secret was not pinned at review: read now');
    expect(await emailsOf('a.test')).toEqual(['kim@a.test']);
  });
});

describe('apply -f --reviewed with a reviewed plan that did not pin the password', () => {
  it('without the variable: fails before any write, naming it and where it is declared', async () => {
    const file = ws.write('b/team.yaml', team('b.test'));
    const reviewed = ws.path('b/pr.json');
    expect((await run(['plan', '-f', file, '-o', reviewed])).code).toBe(2);
    const before = await serverState(server);
    const r = await run(['apply', '-f', file, '--reviewed', reviewed]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stderr).toMatch(
      /team\.yaml:6:15: user kim@b\.test is created with its password, and environment variable KIM_PASSWORD is not set/,
    );
    expect(await serverState(server)).toEqual(before);
  });

  it('with the variable: the change is the reviewed one, read now, said before writing, and written', async () => {
    const r = await run(['apply', '-f', ws.path('b/team.yaml'), '--reviewed', ws.path('b/pr.json')], {
      KIM_PASSWORD: PASSWORD,
    });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toContain('1 secret was not pinned at review: read now');
    expect(r.stdout).not.toContain('withheld');
    expect(await emailsOf('b.test')).toEqual(['kim@b.test']);
  });
});

describe('secrets that stay errors', () => {
  it('apply -f without the variable names where the password is declared', async () => {
    const file = ws.write('c/team.yaml', team('c.test'));
    const r = await run(['apply', '-f', file, '--yes']);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stderr).toMatch(
      /error: cannot plan: .*team\.yaml:6:15: user kim@c\.test is created with its password, and environment variable KIM_PASSWORD is not set/,
    );
    expect(await emailsOf('c.test')).toEqual([]);
  });

  it('a secret file inside the repository that cannot be read is an error at plan time, with file:line', async () => {
    const file = ws.write('d/team.yaml', team('d.test').replace('{ env: KIM_PASSWORD }', '{ file: kim.password }'));
    const out = ws.path('d/pr.json');
    const r = await run(['plan', '-f', file, '-o', out]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stderr).toMatch(
      /team\.yaml:6:15: user kim@d\.test is created with its password, and secret file kim\.password cannot be read/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('no secret value appears in any output', () => {
    expect(outputs.length).toBeGreaterThan(8);
    for (const r of outputs) {
      expect(r.stdout).not.toContain(PASSWORD);
      expect(r.stderr).not.toContain(PASSWORD);
    }
  });
});
