#!/usr/bin/env node
/**
 * What one `netform` process costs from start to exit, per command, for this build (dist/) and,
 * with `--baseline DIST`, another build's bin (e.g. main's dist/) in the same run: the two bins
 * take turns command by command (which goes first alternates from round to round), so that the
 * load of a shared machine falls on both alike. Medians of RUNS rounds: CPU (user + system of the
 * process, from bash's `time`) and wall time. The commands (COMMANDS below): --version, --help,
 * validate, plan, plan --format json, apply -f, drift -f (once), test, test --live, explain, nft,
 * adopt --dry-run, export; and plan, apply -f and drift -f against a port nothing listens on
 * (a failure before anything is planned, as most of the safety net's cells are), all
 * against a server in this process (this build's, on a temporary SQLite file) holding a small
 * fleet (bench/scale-data.mjs: 20 users, 40 devices, 60 rules), FILE its desired state. With
 * `--modules`, also the number of modules each command loads (ES modules and CommonJS ones,
 * Node's built-ins left out), counted by a loader hook in the child.
 *
 * `--only 'plan,plan (refused)'`: those commands alone.
 *
 *   npm run build && node bench/cli-start.mjs [--runs 7] [--baseline OTHER/dist] [--modules] [--only NAMES]
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { argValue, desiredYaml, median, model, prepareDatabase, seed } from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '7'));
const BASELINE = argValue('--baseline', '');
const MODULES = process.argv.includes('--modules');
const HERE = fileURLToPath(new URL('../dist', import.meta.url));

const bins = [{ name: 'this', main: join(HERE, 'src/cli/main.js') }];
if (BASELINE) bins.push({ name: 'baseline', main: join(resolve(BASELINE), 'src/cli/main.js') });

const dir = mkdtempSync(join(tmpdir(), 'netform-cli-start-'));
const dbPath = join(dir, 'bench.db');
const file = join(dir, 'netform.yaml');
const errFile = join(dir, 'stderr.txt');
const token = await prepareDatabase(dbPath);
const fleet = model({ users: 20, devices: 40, rules: 60 });
await seed(dbPath, fleet);
writeFileSync(file, desiredYaml(fleet).text);
const { startServer } = await import('../dist/server/index.js');
const server = await startServer({ dbPath, port: 0, host: '127.0.0.1', logger: false });

/**
 * Each command and the exit codes that are its success (plan and drift: 2 is "changes"; test: 1 is
 * a failing test). `plan (refused)`: against a port nothing listens on (no retries), as most of
 * the safety net's cells fail: early, before anything is planned.
 */
const COMMANDS = [
  { name: '--version', args: ['--version'], codes: [0] },
  { name: '--help', args: ['--help'], codes: [0] },
  { name: 'validate', args: ['validate', '-f', file], codes: [0] },
  { name: 'plan', args: ['plan', '-f', file], codes: [0, 2] },
  { name: 'plan (refused)', args: ['plan', '-f', file, '--retries', '0'], codes: [1], refused: true },
  { name: 'plan --format json', args: ['plan', '-f', file, '--format', 'json'], codes: [0, 2] },
  { name: 'apply -f', args: ['apply', '-f', file, '--yes'], codes: [0] },
  { name: 'apply -f (refused)', args: ['apply', '-f', file, '--yes', '--retries', '0'], codes: [1], refused: true },
  { name: 'drift -f', args: ['drift', '-f', file], codes: [0, 2] },
  { name: 'drift -f (refused)', args: ['drift', '-f', file, '--retries', '0'], codes: [1], refused: true },
  { name: 'test', args: ['test', '-f', file], codes: [0, 1] },
  { name: 'test --live', args: ['test', '-f', file, '--live'], codes: [0, 1] },
  { name: 'explain', args: ['explain', 'user-1@bench.test', '10.9.0.1', '-f', file], codes: [0] },
  { name: 'nft', args: ['nft', '-f', file], codes: [0] },
  { name: 'adopt --dry-run', args: ['adopt', '-f', file, '--all-drift', '--dry-run'], codes: [0, 2] },
  { name: 'export', args: ['export'], codes: [0] },
];
/** A port nothing listens on: bound, then closed. */
const refusedUrl = await new Promise((done) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => done(`http://127.0.0.1:${port}`));
  });
});
const ONLY = argValue('--only', '');
const chosen = ONLY ? COMMANDS.filter((c) => ONLY.split(',').includes(c.name)) : COMMANDS;
const env = {
  ...process.env,
  NETFORM_URL: server.url,
  NETFORM_TOKEN: token,
  NO_COLOR: '1',
  NETFORM_BENCH_ERR: errFile,
};
delete env.NODE_OPTIONS;

/** One process from start to exit: its CPU (user + system) and wall time, in ms. */
function measure(main, args, extraNodeArgs = [], extraEnv = {}) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(
      'bash',
      [
        '-c',
        'TIMEFORMAT="%U %S"; time "$0" "$@" > /dev/null 2> "$NETFORM_BENCH_ERR"',
        process.execPath,
        ...extraNodeArgs,
        main,
        ...args,
      ],
      { cwd: dir, env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', fail);
    child.on('close', (code) => {
      const [user, sys] = stderr.trim().split('\n').at(-1).split(' ').map(Number);
      done({ code, cpuMs: (user + sys) * 1000, wallMs: performance.now() - started });
    });
  });
}

/** The modules a command loads: a loader hook in the child lists every ES module, and the CommonJS cache at exit. */
async function modulesOf(main, args, extraEnv) {
  const log = join(dir, 'modules.txt');
  const hooks = join(dir, 'hooks.mjs');
  const preload = join(dir, 'preload.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); }\n`,
  );
  writeFileSync(
    preload,
    `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const cache = createRequire(import.meta.url)('node:module')._cache;
process.on('exit', () => appendFileSync(${JSON.stringify(log)}, Object.keys(cache).map((p) => pathToFileURL(p).href).join('\\n') + '\\n'));\n`,
  );
  rmSync(log, { force: true });
  await measure(main, args, ['--import', preload], extraEnv);
  const urls = new Set(
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((u) => u.startsWith('file:')),
  );
  return { all: urls.size, packages: [...urls].filter((u) => u.includes('/node_modules/')).length };
}

const results = new Map(chosen.map((c) => [c.name, new Map(bins.map((b) => [b.name, []]))]));
const loads = [loadavg()[0]];
for (let round = 0; round < RUNS; round++) {
  for (const command of chosen) {
    const order = round % 2 === 0 ? bins : [...bins].reverse();
    for (const bin of order) {
      const result = await measure(bin.main, command.args, [], command.refused ? { NETFORM_URL: refusedUrl } : {});
      if (!command.codes.includes(result.code))
        throw new Error(
          `${bin.name}: ${command.name} exited ${result.code}:\n${readFileSync(errFile, 'utf8').slice(-2000)}`,
        );
      results.get(command.name).get(bin.name).push(result);
    }
  }
  loads.push(loadavg()[0]);
}

const ms = (x) => (x / 1000).toFixed(3);
console.log(
  `netform bin start-up, ${RUNS} rounds, medians in seconds; load average ${loads.map((l) => l.toFixed(1)).join(' → ')}`,
);
const head = ['command', 'CPU', 'wall'];
if (BASELINE) head.push('baseline CPU', 'baseline wall', 'CPU ratio', 'wall ratio');
if (MODULES) head.push('modules (packages)', ...(BASELINE ? ['baseline modules (packages)'] : []));
console.log(`| ${head.join(' | ')} |`);
console.log(`|${head.map(() => '---').join('|')}|`);
for (const command of chosen) {
  const row = [command.name];
  const of = (bin) => {
    const runs = results.get(command.name).get(bin);
    return { cpu: median(runs.map((r) => r.cpuMs)), wall: median(runs.map((r) => r.wallMs)) };
  };
  const mine = of('this');
  row.push(ms(mine.cpu), ms(mine.wall));
  if (BASELINE) {
    const base = of('baseline');
    row.push(ms(base.cpu), ms(base.wall), (mine.cpu / base.cpu).toFixed(2), (mine.wall / base.wall).toFixed(2));
  }
  if (MODULES)
    for (const bin of bins) {
      const m = await modulesOf(bin.main, command.args, command.refused ? { NETFORM_URL: refusedUrl } : {});
      row.push(`${m.all} (${m.packages})`);
    }
  console.log(`| ${row.join(' | ')} |`);
}

await server.close();
rmSync(dir, { recursive: true, force: true });
