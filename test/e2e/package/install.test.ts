/**
 * The package as users get it: `npm pack`, then `npm install <tarball>` in an empty folder, then
 * `npx netform --help`, then `validate` and `plan` through the bin npm linked
 * (node_modules/.bin/netform, the file npx runs) against a real server, whose saved plan a script
 * checks with the plan schema imported from the installed package (`netform/schemas/plan.schema.json`). Install scripts are skipped
 * (`--ignore-scripts`): the tarball holds the built dist/, and these commands do not need the
 * bundled server's native SQLite module. Slow (an install from the registry or npm's cache): the
 * pack starts while the server starts, and the example's synth runs while npm installs. The server
 * runs in this process (it is not what is tested), and the node processes that live a second or
 * less (the bin's commands, the scripts, the synth) run with V8's optimizing compiler off
 * (test/helpers/short-lived-env.ts); npm's own processes as they are.
 *
 * cdktf and constructs are optional peer dependencies: the install leaves them out, `plan` reads a
 * synthesized cdk.tf.json without them, and `netform/cdktf` throws one line saying what to install;
 * then, with them installed beside netform, the CDKTF example synthesizes and plans as before.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdktfPeersMissing } from '../../../src/views/cdktf.js';
import { builtCli } from '../../helpers/cli.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { shortLivedNodeOptions } from '../../helpers/short-lived-env.js';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
let dir: string;
let server: TestServer;
/** The folder the tarball is installed into, once the first test has installed it. */
let installedApp: string | undefined;
/** examples/cdktf synthesized with the checkout's own cdktf. */
let stackText: string;
/** The plan of that stack from the installed package without cdktf. */
let stackPlan: string;

const STACK = join('cdktf.out', 'stacks', 'example-corp');
const SECRETS = {
  TF_VAR_alice_password: 'example-alice.password',
  TF_VAR_bob_password: 'example-bob.password',
  TF_VAR_alice_laptop_psk: 'example-alice-laptop.psk',
  TF_VAR_carol_laptop_psk: 'example-carol-laptop.psk',
};

/** `npm pack` of the checkout, started before the server so that the two overlap. */
let packing: Promise<Ran>;

beforeAll(async () => {
  // The tarball holds dist/ as it is: a build older than the sources is refused by name.
  builtCli();
  dir = mkdtempSync(join(tmpdir(), 'netform-pack-'));
  // dist/ is built by `npm test` before the tests run; --ignore-scripts keeps pack from building again.
  packing = run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], ROOT);
  server = await startTestServer({ logLevel: 'warn' }); // its request logs are not read here
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** For a node process that lives a second or less: V8's optimizing compiler off (NODE_OPTIONS). */
const SHORT_LIVED = { NODE_OPTIONS: shortLivedNodeOptions(process.env.NODE_OPTIONS) };

/** The server and the example's secrets (TF_VAR_*), for a plan of the example stack. */
function planEnv(): Record<string, string> {
  const env: Record<string, string> = { ...SHORT_LIVED, NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
  for (const [name, file] of Object.entries(SECRETS))
    env[name] = readFileSync(join(ROOT, 'examples', 'basic', 'secrets', file), 'utf8').trim();
  return env;
}

/** The installed package's compiled files, relative to its dist/, that load cdktf or constructs. */
function loadingCdktf(dist: string): string[] {
  const loads = /(?:\bfrom\s*|\bimport\(\s*|\brequire\(\s*)['"](?:cdktf|constructs)['"]/;
  return readdirSync(dist, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js') && loads.test(readFileSync(join(dist, file), 'utf8')))
    .map((file) => file.split(sep).join('/'));
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  all: string;
}

/** Runs a command to its end (never rejects: a command that cannot start has code null). */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((done) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 540_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => (stderr += `${error.message}\n`));
    child.on('close', (code) => done({ code, stdout, stderr, all: `${stdout}\n${stderr}` }));
  });
}

/** The installed bin, as npm linked it: node_modules/.bin/netform (what `npx netform` runs). */
const netform = (app: string) => join(app, 'node_modules', '.bin', 'netform');

describe('npm pack', () => {
  it('makes a tarball that installs into an empty folder and runs with npx', { timeout: 600_000 }, async () => {
    const packed = await packing;
    expect(packed.code, packed.all).toBe(0);
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    expect(tarball).toMatch(/^netform-\d+\.\d+\.\d+\.tgz$/);

    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{ "name": "gitops-repo", "private": true }\n');
    // examples/cdktf, synthesized with the checkout's cdktf from the app's folder (the stack's local
    // backend path is the cwd's) while npm installs: its cdk.tf.json is read below, without cdktf.
    const synthesizing = run(
      process.execPath,
      [join(ROOT, 'examples', 'cdktf', 'main.mjs'), join(dir, 'cdktf.out')],
      app,
      SHORT_LIVED,
    );
    const installed = await run(
      'npm',
      ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', join(dir, tarball)],
      app,
    );
    expect(installed.code, installed.all).toBe(0);

    const help = await run('npx', ['--no-install', 'netform', '--help'], app);
    expect(help.code, help.all).toBe(0);
    expect(help.stdout).toContain('Usage: netform');
    for (const command of ['validate', 'plan', 'apply', 'drift', 'export', 'show'])
      expect(help.stdout).toContain(command);

    writeFileSync(join(app, 'netform.yaml'), 'version: 1\nusers:\n  - email: packed@example.com\n');
    const validated = await run(netform(app), ['validate', '-f', 'netform.yaml'], app, SHORT_LIVED);
    expect(validated.code, validated.all).toBe(0);
    expect(validated.stdout).toBe('netform.yaml is valid: 1 user, 0 devices, 0 rules\n');

    const planned = await run(netform(app), ['plan', '-f', 'netform.yaml', '-o', 'plan.json'], app, {
      ...SHORT_LIVED,
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
    const checked = await run(process.execPath, ['check-plan.mjs'], app, SHORT_LIVED);
    expect(checked.code, checked.all).toBe(0);
    expect(checked.stdout).toBe('netform plan 3 valid\n');

    // cdktf and constructs are optional peer dependencies: left out, and loaded by netform/cdktf alone.
    for (const peer of ['cdktf', 'constructs']) expect(existsSync(join(app, 'node_modules', peer)), peer).toBe(false);
    const loaders = loadingCdktf(join(app, 'node_modules', 'netform', 'dist'));
    expect(loaders).toContain('src/cdktf/peers.js');
    expect(loaders.filter((file) => !file.startsWith('src/cdktf/'))).toEqual([]);

    // A synthesized stack is read without them.
    const synth = await synthesizing;
    expect(synth.code, synth.all).toBe(0);
    stackText = readFileSync(join(dir, STACK, 'cdk.tf.json'), 'utf8');
    mkdirSync(join(app, STACK), { recursive: true });
    writeFileSync(join(app, STACK, 'cdk.tf.json'), stackText);
    const stackPlanned = await run(netform(app), ['plan', '-f', STACK], app, planEnv());
    expect(stackPlanned.code, stackPlanned.all).toBe(2);
    for (const name of ['alice', 'bob', 'carol', 'dave', 'erin'])
      expect(stackPlanned.stdout).toContain(`+ user ${name}@example.com`);
    stackPlan = stackPlanned.stdout;
    rmSync(join(app, 'cdktf.out'), { recursive: true });

    // The library loads; netform/cdktf throws one line saying what to install.
    writeFileSync(
      join(app, 'use-cdktf.mjs'),
      `const netform = await import('netform');
console.log(typeof netform.planAgainstServer);
try {
  await import('netform/cdktf');
  console.log('netform/cdktf loaded');
} catch (error) {
  console.log(error instanceof Error ? error.message : error);
}
`,
    );
    const imported = await run(process.execPath, ['use-cdktf.mjs'], app, SHORT_LIVED);
    expect(imported.code, imported.all).toBe(0);
    expect(imported.stdout).toBe(`function\n${cdktfPeersMissing(['cdktf', 'constructs'])}\n`);
    expect(imported.stdout.split('\n')).toHaveLength(3); // one line each, then the end
    expect(imported.stdout).toContain('npm install cdktf@0.21 constructs@10');
    installedApp = app;
  });

  it(
    'with cdktf and constructs installed beside it, the CDKTF example synthesizes and plans as before',
    { timeout: 600_000 },
    async () => {
      expect(installedApp, 'the test before installs the tarball').toBeDefined();
      const app = installedApp!;
      // The versions of our own lockfile, which npm's cache holds.
      const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
      const peers = ['cdktf', 'constructs'].map((name) => `${name}@${lock.packages[`node_modules/${name}`].version}`);
      const added = await run(
        'npm',
        ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', ...peers],
        app,
      );
      expect(added.code, added.all).toBe(0);

      cpSync(join(ROOT, 'examples', 'cdktf', 'main.mjs'), join(app, 'main.mjs'));
      const synth = await run(process.execPath, ['main.mjs', 'cdktf.out'], app, SHORT_LIVED);
      expect(synth.code, synth.all).toBe(0);
      expect(readFileSync(join(app, STACK, 'cdk.tf.json'), 'utf8')).toBe(stackText);

      const planned = await run(netform(app), ['plan', '-f', STACK], app, planEnv());
      expect(planned.code, planned.all).toBe(2);
      expect(planned.stdout).toBe(stackPlan);
    },
  );
});
