/**
 * The package as users get it: `npm pack`, then `npm install <tarball>` in an empty folder, then
 * `npx netform --help`, `validate`, and `plan` against a real server, whose saved plan a script
 * checks with the plan schema imported from the installed package (`netform/schemas/plan.schema.json`). Install scripts are skipped
 * (`--ignore-scripts`): the tarball holds the built dist/, and these commands do not need the
 * bundled server's native SQLite module. Slow (an install from the registry or npm's cache).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
let dir: string;
let server: TestServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netform-pack-'));
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const result = spawnSync(command, args, {
    cwd,
    env: { ...process.env, NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: 540_000,
  });
  return {
    code: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    all: `${result.stdout}\n${result.stderr}`,
  };
}

describe('npm pack', () => {
  it('makes a tarball that installs into an empty folder and runs with npx', { timeout: 600_000 }, () => {
    // dist/ is built by `npm test` before the tests run; --ignore-scripts keeps pack from building again.
    const packed = run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], ROOT);
    expect(packed.code, packed.all).toBe(0);
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    expect(tarball).toMatch(/^netform-\d+\.\d+\.\d+\.tgz$/);

    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{ "name": "gitops-repo", "private": true }\n');
    const installed = run(
      'npm',
      ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', join(dir, tarball)],
      app,
    );
    expect(installed.code, installed.all).toBe(0);

    const help = run('npx', ['--no-install', 'netform', '--help'], app);
    expect(help.code, help.all).toBe(0);
    expect(help.stdout).toContain('Usage: netform');
    for (const command of ['validate', 'plan', 'apply', 'drift', 'export', 'show'])
      expect(help.stdout).toContain(command);

    writeFileSync(join(app, 'netform.yaml'), 'version: 1\nusers:\n  - email: packed@example.com\n');
    const validated = run('npx', ['--no-install', 'netform', 'validate', '-f', 'netform.yaml'], app);
    expect(validated.code, validated.all).toBe(0);
    expect(validated.stdout).toBe('netform.yaml is valid: 1 user, 0 devices, 0 rules\n');

    const planned = run('npx', ['--no-install', 'netform', 'plan', '-f', 'netform.yaml', '-o', 'plan.json'], app, {
      NETFORM_URL: server.url,
      NETFORM_TOKEN: server.token,
    });
    expect(planned.code, planned.all).toBe(2);
    expect(planned.stdout).toContain('+ user packed@example.com');

    // CI users check saved plans (and plan --format json) against the schema the package ships.
    writeFileSync(
      join(app, 'check-plan.mjs'),
      `import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import schema from 'netform/schemas/plan.schema.json' with { type: 'json' };
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
ajv.addSchema(schema);
const saved = ajv.getSchema(schema.$id + '#/$defs/savedPlan');
const plan = JSON.parse(readFileSync('plan.json', 'utf8'));
console.log(schema.title, plan.format_version, saved(plan) ? 'valid' : JSON.stringify(saved.errors));
`,
    );
    const checked = run(process.execPath, ['check-plan.mjs'], app);
    expect(checked.code, checked.all).toBe(0);
    expect(checked.stdout).toBe('netform plan 3 valid\n');
  });
});
