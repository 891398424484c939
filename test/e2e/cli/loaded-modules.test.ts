/**
 * What the built bin loads at start, per command: a process costs about as much CPU as the modules
 * it loads (Node compiles each), and the test suite and every user pay it at each run. A preload
 * in the child (NODE_OPTIONS=--import) lists every ES module V8 compiles (the inspector's
 * scriptParsed events), and at exit every CommonJS one. `--version` and `--help` load no
 * command's module; a command's own help loads that command only; a client command (validate, plan, drift -f, export, apply) never loads the
 * bundled server (fastify, the SQLite or PostgreSQL drivers) or CDKTF, nor an HTTP library (the
 * client is on Node's http and https); validate loads no HTTP client at all, and a single
 * `drift -f` neither cron nor adopt's YAML editor. A plan, drift check or apply that cannot read
 * the server loads neither the planner, the access evaluator, the writer nor the plan's views. A flag error loads the command's module and
 * its flags only: a command imports its implementation in its action, after commander has
 * checked the flags.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliProcessNode, SHORT_LIVED_NODE } from '../../helpers/cli.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

let dir: string;
let server: TestServer;
let preload: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netform-modules-'));
  preload = join(dir, 'preload.mjs');
  // The inspector's Debugger domain reports every script V8 compiles, each ES module included,
  // in the child's own thread (a loader hook, module.register, would run on a thread of its own
  // and cost the child nearly as much CPU again); CommonJS modules are listed from their cache.
  writeFileSync(
    preload,
    `import { Session } from 'node:inspector';
import { createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const urls = [];
const session = new Session();
session.connect();
session.on('Debugger.scriptParsed', ({ params }) => {
  if (params.url.startsWith('file:') && params.url !== import.meta.url) urls.push(params.url);
});
session.post('Debugger.enable');
const cache = createRequire(import.meta.url)('node:module')._cache;
process.on('exit', () => {
  const lines = [...urls, ...Object.keys(cache).map((p) => pathToFileURL(p).href)].map((u) => u + '\\n').join('');
  appendFileSync(process.env.NETFORM_MODULE_LOG, lines);
});\n`,
  );
  writeFileSync(
    join(dir, 'netform.yaml'),
    'version: 1\nsettings: { manage: { users: ["*@modules.test"] } }\nusers:\n  - email: ann@modules.test\n',
  );
  server = await startTestServer();
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let runs = 0;

/** The bin's exit code and the paths (under the package root, or node_modules/NAME/…) of every module it loaded. */
async function loaded(args: string[], codes = [0], env: Record<string, string> = {}): Promise<string[]> {
  const log = join(dir, `modules-${++runs}.txt`);
  // A process that lives a second or less (SHORT_LIVED_NODE): what it loads is the same.
  const result = await runCliProcessNode(SHORT_LIVED_NODE, args, {
    cwd: dir,
    env: {
      NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`,
      NETFORM_MODULE_LOG: log,
      NETFORM_URL: server.url,
      NETFORM_TOKEN: server.token,
      ...env,
    },
  });
  expect(codes, `netform ${args.join(' ')}: ${result.stderr}`).toContain(result.code);
  const urls = readFileSync(log, 'utf8').split('\n');
  const paths = urls
    .filter((u) => u.startsWith('file:'))
    .map((u) => decodeURIComponent(new URL(u).pathname).replace(/^.*\/node_modules\//, 'node_modules/'));
  const ours = paths.filter((p) => p.includes('/dist/'));
  // The hook saw the bin itself: an empty list would pass every assertion below.
  expect(ours.some((p) => p.endsWith('/dist/src/cli/main.js'))).toBe(true);
  return [...new Set(paths.map((p) => p.replace(/^.*\/dist\//, 'dist/')))];
}

const commandModules = (paths: string[]) => paths.filter((p) => p.startsWith('dist/src/cli/commands/'));
/** The packages of node_modules that modules were loaded from (`got`, `@sindresorhus/is`). */
function packagesOf(paths: string[]): Set<string> {
  const names = paths
    .filter((p) => p.startsWith('node_modules/'))
    .map((p) => {
      const parts = p.split('/');
      return parts[1]!.startsWith('@') ? `${parts[1]}/${parts[2]}` : parts[1]!;
    });
  return new Set(names);
}

/** What no client command may load: the bundled server and its stores, and CDKTF. */
function expectNoServerNorCdktf(paths: string[]): void {
  expect(paths.filter((p) => p.startsWith('dist/server/'))).toEqual([]);
  const packages = packagesOf(paths);
  for (const name of ['fastify', 'better-sqlite3', 'pg', 'pino', 'cdktf', 'constructs'])
    expect(packages.has(name), `${name} loaded`).toBe(false);
}

describe('the modules the bin loads at start', () => {
  it('--version and --help load no command module, no server and no HTTP client', async () => {
    for (const args of [['--version'], ['--help'], ['no-such-command']]) {
      const paths = await loaded(args, args[0] === 'no-such-command' ? [1] : [0]);
      expect(commandModules(paths), args.join(' ')).toEqual([]);
      // No workflow: of the operations, the class of their errors alone (the boundary knows it).
      expect(paths.filter((p) => /^dist\/src\/(ops|plan|desired|client)\//.test(p))).toEqual([
        'dist/src/ops/errors.js',
      ]);
      expectNoServerNorCdktf(paths);
      // commander, and what the error boundary's words need (ipaddr.js): never got, yaml, ajv.
      for (const name of packagesOf(paths)) expect(['commander', 'ipaddr.js'], args.join(' ')).toContain(name);
    }
  });

  it("a command's own help loads that command's module alone", async () => {
    const paths = await loaded(['plan', '--help']);
    expect(commandModules(paths)).toEqual(['dist/src/cli/commands/plan.js']);
    expectNoServerNorCdktf(paths);
    expect(packagesOf(paths).has('got')).toBe(false);
  });

  it("a flag error loads the command's flags, not its implementation (no workflow, planner, reader or client)", async () => {
    // A bad flag value (commander's choices), an unknown flag, a bad flag of a writing command.
    for (const args of [
      ['plan', '-f', 'netform.yaml', '--format', 'nope'],
      ['drift', '-f', 'netform.yaml', '--bogus'],
      ['apply', '-f', 'netform.yaml', '--bogus'],
      ['adopt', '-f', 'netform.yaml', '--bogus'],
    ]) {
      const paths = await loaded(args, [1]);
      expect(commandModules(paths), args.join(' ')).toEqual([`dist/src/cli/commands/${args[0]}.js`]);
      // Of the operations, only the boundary's error class and the flags' constants; the saved
      // plan's age rule (apply's --plan-max-age) is all of src/plan.
      const heavy = paths.filter((p) => /^dist\/src\/(ops|plan|access|desired|client|apply|drift)\//.test(p));
      expect(heavy.sort(), args.join(' ')).toEqual([
        'dist/src/ops/embedded-db.js',
        'dist/src/ops/errors.js',
        ...(args[0] === 'apply' ? ['dist/src/plan/age.js'] : []),
      ]);
      expect(
        paths.filter((p) => /^dist\/src\/views\/(plan|drift-render|apply|adopt)\.js$/.test(p)),
        args.join(' '),
      ).toEqual([]);
      expectNoServerNorCdktf(paths);
      for (const name of packagesOf(paths)) expect(['commander', 'ipaddr.js'], args.join(' ')).toContain(name);
    }
  });

  it('validate loads no server, no CDKTF and no HTTP client', async () => {
    const paths = await loaded(['validate', '-f', 'netform.yaml']);
    expect(commandModules(paths)).toEqual(['dist/src/cli/commands/validate.js']);
    expectNoServerNorCdktf(paths);
    expect(packagesOf(paths).has('got')).toBe(false);
    // The schema's validators were compiled at build time: ajv's compiler is not loaded.
    expect(paths.filter((p) => p.startsWith('node_modules/ajv/') && !p.includes('/runtime/'))).toEqual([]);
  });

  it('plan, export and apply against a server load neither the server nor CDKTF', async () => {
    for (const args of [['plan', '-f', 'netform.yaml'], ['apply', '-f', 'netform.yaml', '--yes'], ['export']]) {
      const paths = await loaded(args, [0, 2]);
      expect(commandModules(paths), args.join(' ')).toEqual([`dist/src/cli/commands/${args[0]}.js`]);
      expectNoServerNorCdktf(paths);
      // Node's own http and https: no HTTP library's modules.
      expect(packagesOf(paths).has('got'), args.join(' ')).toBe(false);
    }
  });

  it('a single drift check loads neither the server, CDKTF, the schedule (cron, the sinks) nor adopt', async () => {
    const paths = await loaded(['drift', '-f', 'netform.yaml'], [0, 2]);
    expect(commandModules(paths)).toEqual(['dist/src/cli/commands/drift.js']);
    expectNoServerNorCdktf(paths);
    const packages = packagesOf(paths);
    expect(packages.has('node-cron')).toBe(false);
    expect(packages.has('yaml')).toBe(false);
    expect(paths.filter((p) => /^dist\/src\/(drift\/(cron|sinks)|ops\/drift-schedule|ops\/adopt)/.test(p))).toEqual([]);
  });

  it("a plan, drift check or apply that cannot read the server loads neither the planner, the access evaluator, the writer nor the plan's views", async () => {
    const refused = await new Promise<string>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => done(`http://127.0.0.1:${port}`));
      });
    });
    for (const args of [
      ['plan', '-f', 'netform.yaml', '--retries', '0'],
      ['drift', '-f', 'netform.yaml', '--retries', '0'],
      ['apply', '-f', 'netform.yaml', '--yes', '--retries', '0'],
    ]) {
      const paths = await loaded(args, [1], { NETFORM_URL: refused });
      // The files were read (their checks ran) and the client was used: the failure came from the server.
      expect(paths, args.join(' ')).toContain('dist/src/desired/index.js');
      expect(paths, args.join(' ')).toContain('dist/src/client/client.js');
      expect(
        paths.filter((p) =>
          /^dist\/src\/(ops\/(planning|access-delta|owners)|plan\/(index|planner|lifecycle|base)|access\/(plan|after-apply|deciding|delta)|apply\/index|views\/(plan|drift-render|apply|reviewed))\.js$/.test(
            p,
          ),
        ),
        args.join(' '),
      ).toEqual([]);
      expectNoServerNorCdktf(paths);
    }
  });
});
