#!/usr/bin/env node
/**
 * The whole-fleet commands of wave 4 against their floors, every figure from one run, on the
 * 10,000-user fleet of bench/scale-data.mjs (10,000 users, 20,000 devices, 30,000 rules, seeded
 * through the Store, served by a real server in this process) and its desired state in which 1%
 * differs:
 *   - `check no-new-access --base REF -f FILE`, the files at the base (the server's export,
 *     committed in a throwaway git repository) against the 1%-changed file: ≤ 2× a `plan`;
 *   - `review -f FILE` with `expires:` on 2% of the per-user grants: ≤ 10 s;
 *   - `adopt --all-drift -f FILE` (the 1% difference is the drift it adopts, on a fresh copy of
 *     the file each round): ≤ 2× a `plan`;
 *   - `migrate firezone-1x -f FILE -o DIR`: ≤ 10 s;
 *   - with `--before PATH` (the `main.js` of an older build), `plan`, `drift -f` and `validate`
 *     by that bin and by this one in turns: within 5% of each other. `drift -f` reads the
 *     server's export, which writes `version: 2`: a bin from before version 2 cannot read it.
 * Each command runs in turn with the others, RUNS rounds, medians reported, so that the load of the
 * shared machine falls on all alike.
 *
 *   npm run build && node bench/wave4-commands.mjs [--runs N] [--before OLD/dist/src/cli/main.js]
 *     [--skip migrate,adopt,...]   (commands left out, by their first word)
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer } from '../dist/server/index.js';
import { argValue, CLI, desiredYaml, median, model, prepareDatabase, runCli, seed } from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '3'));
const BEFORE = argValue('--before', '');
/** A loaded machine answers 10,000-user lists slowly: wait, rather than fail the run. */
const SLOW = ['--timeout', '600'];
const SKIP = new Set(argValue('--skip', '').split(',').filter(Boolean));

/** The floor (as bench/fleet.mjs): a fresh Node process that fetches the three lists and parses them. */
const FLOOR_SCRIPT = `
const headers = { authorization: 'Bearer ' + process.env.NETFORM_TOKEN };
const lists = await Promise.all(['users', 'devices', 'rules'].map(async (c) => JSON.parse(await (await fetch(process.env.NETFORM_URL + '/v0/' + c, { headers })).text())));
if (lists.some((l) => !Array.isArray(l.data))) process.exit(1);
`;

/** A Node process from start to exit: wall time, and CPU time (user + system, its children's too). */
function measure(nodeArgs, env, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      'bash',
      ['-c', 'TIMEFORMAT="%U %S"; time "$0" "$@" > /dev/null 2> "$NETFORM_BENCH_ERR"', process.execPath, ...nodeArgs],
      { cwd, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const [user, sys] = stderr.trim().split('\n').at(-1).split(' ').map(Number);
      resolve({ code: Number(code), wallMs: performance.now() - started, cpuMs: (user + sys) * 1000 });
    });
  });
}

function check(result, codes, what) {
  if (!codes.includes(result.code))
    throw new Error(`${what} exited ${result.code}:\n${readFileSync(errFile, 'utf8').slice(-3000)}`);
  return result;
}

/** The per-user rule lines of the desired YAML get `expires:`, one in fifty, half of them past. */
function withExpiries(text) {
  let n = 0;
  return text.replace(/^( {6}- \{ action: accept, [^}]*)\}$/gm, (line, head) => {
    n++;
    if (n % 50 !== 0) return line;
    return `${head}, expires: "${n % 100 === 0 ? '2026-01-01T00:00:00Z' : '2030-01-01T00:00:00Z'}" }`;
  });
}

const git = (cwd, ...args) =>
  execFileSync('git', args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@x',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@x',
    },
  });

const dir = mkdtempSync(join(tmpdir(), 'netform-wave4-bench-'));
const errFile = join(dir, 'last-stderr.txt');
let server;
try {
  const dbPath = join(dir, 'fleet.db');
  const token = await prepareDatabase(dbPath);
  const m = model();
  await seed(dbPath, m);
  server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const env = {
    NETFORM_URL: server.url,
    NETFORM_TOKEN: token,
    NETFORM_TOKEN_USER: 'admin@example.com',
    NETFORM_BENCH_ERR: errFile,
  };
  const desired = desiredYaml(m);
  const file = join(dir, 'netform.yaml');
  writeFileSync(file, desired.text);
  const expiring = join(dir, 'expiring.yaml');
  writeFileSync(expiring, withExpiries(desired.text));

  // The base of check --base: the server's export, committed; the head: the 1%-changed file.
  const repo = join(dir, 'repo');
  mkdirSync(repo);
  const exported = await runCli(['export'], env);
  if (exported.code !== 0) throw new Error(`export exited ${exported.code}`);
  git(repo, 'init', '-q');
  writeFileSync(join(repo, 'netform.yaml'), exported.stdout);
  git(repo, 'add', 'netform.yaml');
  git(repo, 'commit', '-qm', 'base');
  writeFileSync(join(repo, 'netform.yaml'), desired.text);
  const exportDir = join(dir, 'export');
  mkdirSync(exportDir);
  writeFileSync(join(exportDir, 'netform.yaml'), exported.stdout);

  const rows = {};
  const add = (k, r) => (rows[k] ??= []).push(r);
  const commands = [
    ['floor', ['--input-type=module', '-e', FLOOR_SCRIPT], [0]],
    ['plan', [CLI, 'plan', '-f', file, ...SLOW], [2]],
    ['check --base', [CLI, 'check', 'no-new-access', '--base', 'HEAD', '-f', 'netform.yaml'], [0, 1], repo],
    ['review (expiries)', [CLI, 'review', '-f', expiring, '-o', join(dir, 'review.md'), ...SLOW], [0]],
    ['adopt --all-drift', null, [0]],
    ['migrate firezone-1x', [CLI, 'migrate', 'firezone-1x', '-f', file, '-o', join(dir, 'migrated')], [0]],
  ];
  if (BEFORE)
    for (const [name, cli] of [
      ['before', BEFORE],
      ['after', CLI],
    ]) {
      commands.push(
        [`plan (${name})`, [cli, 'plan', '-f', file, ...SLOW], [2]],
        [`drift -f (${name})`, [cli, 'drift', '-f', exportDir, ...SLOW], [0]],
        [`validate (${name})`, [cli, 'validate', '-f', file], [0]],
      );
    }
  for (let i = 0; i < RUNS; i++) {
    for (const [name, args, codes, cwd] of commands) {
      if (SKIP.has(name.split(' ')[0])) continue;
      let nodeArgs = args;
      if (name === 'adopt --all-drift') {
        const copy = join(dir, `adopt-${i}.yaml`);
        copyFileSync(file, copy);
        nodeArgs = [CLI, 'adopt', '--all-drift', '-f', copy, ...SLOW];
      }
      add(name, check(await measure(nodeArgs, env, cwd), codes, name));
    }
  }
  const wall = (k) => median(rows[k].map((r) => r.wallMs));
  const cpu = (k) => median(rows[k].map((r) => r.cpuMs));
  const runsOf = (k) => rows[k].map((r) => r.wallMs.toFixed(0)).join(' / ');
  const against = {
    plan: ['floor', null],
    'check --base': ['plan', 2],
    'review (expiries)': [null, 10_000],
    'adopt --all-drift': ['plan', 2],
    'migrate firezone-1x': [null, 10_000],
  };
  const lines = [
    `Fleet: ${(m.users.length + m.devices.length + m.rules.length).toLocaleString('en')} objects, desired ${(desired.text.length / 1e6).toFixed(1)} MB, changes ${JSON.stringify(desired.changes)}. ${RUNS} rounds, each command in turn; medians. Load before: ${execFileSync('uptime').toString().trim()}`,
    '',
    '| command | runs, wall (ms) | median wall | median CPU | against | ratio | target | |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const k of Object.keys(rows)) {
    if (!rows[k]?.length) continue;
    const [ref, bound] = against[k] ?? [null, null];
    let ratio = '';
    let verdict = '';
    let target = '';
    if (ref) ratio = `${(wall(k) / wall(ref)).toFixed(2)}×`;
    if (ref && bound) {
      target = `≤ ${bound}× ${ref}`;
      verdict = wall(k) <= bound * wall(ref) ? 'met' : '**missed**';
    } else if (bound) {
      target = `≤ ${bound / 1000} s`;
      verdict = wall(k) <= bound ? 'met' : '**missed**';
    }
    lines.push(
      `| ${k} | ${runsOf(k)} | ${wall(k).toFixed(0)} ms | ${cpu(k).toFixed(0)} ms | ${ref ?? ''} | ${ratio} | ${target} | ${verdict} |`,
    );
  }
  if (BEFORE)
    for (const c of ['plan', 'drift -f', 'validate']) {
      const r = wall(`${c} (after)`) / wall(`${c} (before)`);
      const rc = cpu(`${c} (after)`) / cpu(`${c} (before)`);
      lines.push(
        `| ${c}: this bin against --before | | ${(r * 100).toFixed(0)}% wall | ${(rc * 100).toFixed(0)}% CPU | before | ${r.toFixed(2)}× | ≤ 1.05× | ${r <= 1.05 ? 'met' : '**missed**'} |`,
      );
    }
  lines.push('', `Load after: ${execFileSync('uptime').toString().trim()}`);
  console.log(lines.join('\n'));
} finally {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
}
