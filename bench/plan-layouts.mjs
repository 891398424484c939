#!/usr/bin/env node
/**
 * Plan on two layouts against two floors, baseline and candidate in one run (W3.9).
 *
 *   npm run build && node bench/plan-layouts.mjs [--runs N] [--baseline DIST] [--teams N] [--light]
 *
 * The fleet of bench/scale-data.mjs (10,000 users, 20,000 devices, 30,000 rules, 1% changed) is
 * served by a real server in this process and written twice: as ONE 5 MB file and as TEAMS files
 * (default 100) split by team, the common GitOps layout (each team file holds 100 users with their
 * devices and rules and a hundredth of the global rules; the first also holds `settings:`).
 * Each round measures, each in its own fresh process, in turns:
 *   - the network floor: node + the three list GETs + JSON.parse (as bench/fleet.mjs);
 *   - the file floor: node + js-yaml alone on the same file(s) (one file; the folder);
 *   - for every build (dist/ and the --baseline dist, build order alternating by round): `plan -f`
 *     on both layouts (whole process, the built CLI), and `drift -f` once on the one file;
 *     their wall time and peak RSS (the CLI's NETFORM_TIMINGS line).
 * `--light`: the same counts with minimal objects (bench/scale-data.mjs, model's `light`): short
 * names, no preshared keys, rules without ports; the lists are lighter, netform's own work the same.
 * Every plan's stdout is digested: both builds must print the same plan for a layout (exit 1 if not).
 * The load average is printed at the start and at the end: the machine is shared.
 * Targets: plan ≤ 2× the network floor on both layouts (goal 1.5×), RSS ≤ 300 MB, drift once ≤ 2×.
 *
 * (A worker-thread loader was measured with this bench's `--loader-workers` at 07a09ea and removed:
 * it did not pay. bench/RESULTS.md, "W3.9".)
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startServer } from '../dist/server/index.js';
import { argValue, desiredYaml, median, model, prepareDatabase, seed, timingsOf } from './scale-data.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(argValue('--runs', '3'));
const TEAMS = Number(argValue('--teams', '100'));
const BASELINE = argValue('--baseline', undefined);
const LIGHT = process.argv.includes('--light');
/** A loaded shared machine can keep the server's first list answer past the CLI's 30 s default. */
const TIMEOUT = ['--timeout', argValue('--timeout', '300')];

const NETWORK_FLOOR = `
const headers = { authorization: 'Bearer ' + process.env.NETFORM_TOKEN };
const lists = await Promise.all(['users', 'devices', 'rules'].map(async (c) => JSON.parse(await (await fetch(process.env.NETFORM_URL + '/v0/' + c, { headers })).text())));
if (lists.some((l) => !Array.isArray(l.data))) process.exit(1);
`;

/** js-yaml alone (core schema, as src/desired/yaml.ts reads), on every file named in FILES. */
const FILE_FLOOR = `
import { readFileSync } from 'node:fs';
import jsyaml from 'js-yaml';
let n = 0;
for (const f of JSON.parse(process.env.FILES)) n += jsyaml.load(readFileSync(f, 'utf8'), { schema: jsyaml.CORE_SCHEMA }) ? 1 : 0;
if (n === 0) process.exit(1);
`;

/**
 * Preloaded into every measured process: its processor time (all threads, user + system) written
 * to stderr as it exits. On a loaded machine wall times swing by half between rounds; processor
 * time swings far less, so the table gives both.
 */
const CPU_AT_EXIT = `data:text/javascript,process.on('exit',()=>{const c=process.cpuUsage();process.stderr.write('\\nbench-cpu-ms '+((c.user+c.system)/1000).toFixed(0)+'\\n')})`;

function run(args, env = {}, cwd = ROOT) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', CPU_AT_EXIT, ...args], {
      cwd,
      env: { ...process.env, ...env, NO_COLOR: '1', NETFORM_TIMINGS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = createHash('sha256');
    let stderr = '';
    child.stdout.on('data', (c) => out.update(c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', fail);
    child.on('close', (code) =>
      done({
        code,
        stderr,
        digest: out.digest('hex').slice(0, 16),
        wallMs: performance.now() - started,
        cpuMs: Number(/bench-cpu-ms (\d+)/.exec(stderr)?.[1] ?? NaN),
      }),
    );
  });
}

function check(result, codes, what) {
  if (!codes.includes(result.code)) throw new Error(`${what} exited ${result.code}:\n${result.stderr.slice(-3000)}`);
  return result;
}

/** The one-file text cut into `teams` files: users (with their devices and rules) and global rules by team. */
function splitByTeam(text, teams) {
  const lines = text.split('\n');
  const usersAt = lines.indexOf('users:');
  const rulesAt = lines.lastIndexOf('rules:');
  const header = lines.slice(0, usersAt); // version, settings
  const users = [];
  for (let i = usersAt + 1; i < rulesAt; i++) {
    if (lines[i].startsWith('  - ')) users.push([]);
    users.at(-1).push(lines[i]);
  }
  const rules = lines.slice(rulesAt + 1).filter((l) => l !== '');
  const files = [];
  for (let t = 0; t < teams; t++) {
    const us = users.slice(Math.floor((t * users.length) / teams), Math.floor(((t + 1) * users.length) / teams));
    const rs = rules.slice(Math.floor((t * rules.length) / teams), Math.floor(((t + 1) * rules.length) / teams));
    const out = t === 0 ? [...header] : ['version: 1'];
    if (us.length) out.push('users:', ...us.flat());
    if (rs.length) out.push('rules:', ...rs);
    files.push(`${out.join('\n')}\n`);
  }
  return files;
}

const builds = [{ name: 'candidate (dist/)', cli: join(ROOT, 'dist/src/cli/main.js') }];
if (BASELINE) builds.unshift({ name: `baseline (${BASELINE})`, cli: join(resolve(BASELINE), 'src/cli/main.js') });

const dir = mkdtempSync(join(tmpdir(), 'netform-layouts-bench-'));
let server;
try {
  const loadStart = loadavg();
  let t = performance.now();
  const dbPath = join(dir, 'fleet.db');
  const token = await prepareDatabase(dbPath);
  const m = model({ light: LIGHT });
  await seed(dbPath, m);
  const desired = desiredYaml(m);
  const oneFile = join(dir, 'netform.yaml');
  writeFileSync(oneFile, desired.text);
  const teamDir = join(dir, 'teams');
  mkdirSync(teamDir);
  const teamFiles = splitByTeam(desired.text, TEAMS).map((text, i) => {
    const f = join(teamDir, `team-${String(i).padStart(3, '0')}.yaml`);
    writeFileSync(f, text);
    return f;
  });
  server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const env = { NETFORM_URL: server.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' };
  const setupSeconds = (performance.now() - t) / 1000;

  const rows = new Map();
  const push = (key, value) => (rows.get(key) ?? rows.set(key, []).get(key)).push(value);
  /** A measured process: its wall time under `key`, its processor time under `key-cpu`. */
  const both = (key, r) => {
    push(key, r.wallMs);
    push(`${key}-cpu`, r.cpuMs);
    return r;
  };
  const digests = new Map();
  const note = (key, digest) => (digests.get(key) ?? digests.set(key, new Set()).get(key)).add(digest);
  for (let i = 0; i < RUNS; i++) {
    both('net', check(await run(['--input-type=module', '-e', NETWORK_FLOOR], env), [0], 'network floor'));
    const fileEnv = (files) => ({ FILES: JSON.stringify(files) });
    both('file1', check(await run(['--input-type=module', '-e', FILE_FLOOR], fileEnv([oneFile])), [0], 'file floor'));
    both('fileN', check(await run(['--input-type=module', '-e', FILE_FLOOR], fileEnv(teamFiles)), [0], 'file floor'));
    const order = i % 2 === 0 ? builds : [...builds].reverse();
    for (const b of order) {
      for (const [layout, path] of [
        ['one', oneFile],
        ['teams', teamDir],
      ]) {
        const plan = check(await run([b.cli, 'plan', '-f', path, ...TIMEOUT], env), [2], `${b.name} plan ${layout}`);
        both(`${b.name}|plan-${layout}`, plan);
        push(`${b.name}|plan-${layout}-rss`, timingsOf(plan.stderr).rss_peak_mb);
        note(layout, plan.digest);
      }
      const drift = check(await run([b.cli, 'drift', '-f', oneFile, ...TIMEOUT], env), [0, 2], `${b.name} drift`);
      both(`${b.name}|drift`, drift);
      push(`${b.name}|drift-rss`, timingsOf(drift.stderr).rss_peak_mb);
      note('drift', drift.digest);
    }
  }
  const loadEnd = loadavg();

  const raw = argValue('--raw', undefined); // every sample as JSON, for a second look
  if (raw) writeFileSync(raw, JSON.stringify({ rows: Object.fromEntries(rows), loadStart, loadEnd }));
  const med = (k) => median(rows.get(k));
  const runsOf = (k) =>
    rows
      .get(k)
      .map((x) => x.toFixed(0))
      .join(' / ');
  const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
  const la = (l) => l.map((x) => x.toFixed(2)).join(', ');
  const lines = [
    `Fleet${LIGHT ? ' (light lists)' : ''}: ${(m.users.length + m.devices.length + m.rules.length).toLocaleString('en')} objects, one file ` +
      `${(desired.text.length / 1e6).toFixed(1)} MB or ${TEAMS} team files; changes ${JSON.stringify(desired.changes)}; ` +
      `setup ${setupSeconds.toFixed(0)} s; ${RUNS} rounds, medians. Load average at start ${la(loadStart)}, at end ${la(loadEnd)}.`,
    '',
    '| measurement | wall, runs (ms) | median | / network floor | / file floor | CPU, runs (ms) | CPU / network floor |',
    '|---|---|---|---|---|---|---|',
    `| network floor: node + 3 list GETs + JSON.parse | ${runsOf('net')} | ${med('net').toFixed(0)} ms | | | ${runsOf('net-cpu')} | |`,
    `| file floor: node + js-yaml, one file | ${runsOf('file1')} | ${med('file1').toFixed(0)} ms | ${ratio(med('file1'), med('net'))} | | ${runsOf('file1-cpu')} | ${ratio(med('file1-cpu'), med('net-cpu'))} |`,
    `| file floor: node + js-yaml, ${TEAMS} files | ${runsOf('fileN')} | ${med('fileN').toFixed(0)} ms | ${ratio(med('fileN'), med('net'))} | | ${runsOf('fileN-cpu')} | ${ratio(med('fileN-cpu'), med('net-cpu'))} |`,
  ];
  for (const b of builds) {
    for (const [layout, floor] of [
      ['one', 'file1'],
      ['teams', 'fileN'],
    ]) {
      const k = `${b.name}|plan-${layout}`;
      lines.push(
        `| ${b.name}: \`plan\`, ${layout === 'one' ? 'one file' : `${TEAMS} files`} | ${runsOf(k)} | ${med(k).toFixed(0)} ms | ${ratio(med(k), med('net'))} | ${ratio(med(k), med(floor))} | ${runsOf(`${k}-cpu`)} | ${ratio(med(`${k}-cpu`), med('net-cpu'))} |`,
        `| ${b.name}: \`plan\` peak RSS, ${layout === 'one' ? 'one file' : `${TEAMS} files`} (MB) | ${runsOf(`${k}-rss`)} | ${med(`${k}-rss`)} MB | | | | |`,
      );
    }
    const k = `${b.name}|drift`;
    lines.push(
      `| ${b.name}: \`drift -f\` once, one file | ${runsOf(k)} | ${med(k).toFixed(0)} ms | ${ratio(med(k), med('net'))} | ${ratio(med(k), med('file1'))} | ${runsOf(`${k}-cpu`)} | ${ratio(med(`${k}-cpu`), med('net-cpu'))} |`,
      `| ${b.name}: \`drift\` peak RSS (MB) | ${runsOf(`${k}-rss`)} | ${med(`${k}-rss`)} MB | | | | |`,
    );
  }
  if (builds.length === 2) {
    const [base, cand] = builds.map((b) => b.name);
    for (const k of ['plan-one', 'plan-teams', 'drift'])
      lines.push(
        `| candidate / baseline: ${k} | | | ${ratio(med(`${cand}|${k}`), med(`${base}|${k}`))} (wall) | | | ${ratio(med(`${cand}|${k}-cpu`), med(`${base}|${k}-cpu`))} (CPU) |`,
      );
  }
  lines.push('');
  for (const [k, set] of digests) {
    lines.push(
      set.size === 1
        ? `${k}: the same output from every build and run (digest ${[...set][0]}).`
        : `${k}: OUTPUTS DIFFER: ${[...set].join(', ')}`,
    );
    if (set.size !== 1) process.exitCode = 1;
  }
  console.log(lines.join('\n'));
} finally {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
}
