#!/usr/bin/env node
/**
 * What the access delta costs: `plan` (text) against the commands that compute a plan's access
 * delta, on the fleet of bench/scale-data.mjs served by a real server in this process.
 *
 *   npm run build && node bench/plan-json.mjs [--users N] [--runs N] [--baseline DIST] [--candidate DIST]
 *     [--only plan,json,out,markdown,check-base,check-json,check-live] [--cpu-prof DIR]
 *
 * `--users N` scales the fleet (default 10,000 users; devices 2×, rules 3×, 1% changed as
 * desiredYaml writes it); `--users 1000` is the quick check. Each round runs, each in a fresh
 * process of the built CLI (and of the --baseline dist, build order alternating by round):
 *   - `plan -f FILE` (text: no access delta),
 *   - `plan -f FILE --format json` (its `access_delta`),
 *   - `plan -f FILE -o saved.json` (the saved plan holds the delta too),
 *   - `plan -f FILE --format markdown`,
 *   - `check no-new-access --base HEAD` (the server's export committed as the base),
 *   - `check-json` (not run by default): the same with `--format json`,
 *   - `check no-new-access --live` (the server now against after apply).
 * Printed per command: CPU (user + system, ms) and wall medians, the CPU ratio to the text plan,
 * the plan's own `access` phase (NETFORM_TIMINGS), peak RSS, and the bytes written (stdout, or
 * the saved plan of `-o`); the load average at start and end. Both
 * builds must print the same JSON plan (its stdout digested; exit 1 if not).
 * `--cpu-prof DIR`: one more `plan --format json` of dist/ under `node --cpu-prof`, written to DIR.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startServer } from '../dist/server/index.js';
import { argValue, median, model, prepareDatabase, runCli, seed, desiredYaml, timingsOf } from './scale-data.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USERS = Number(argValue('--users', '10000'));
const RUNS = Number(argValue('--runs', '1'));
const BASELINE = argValue('--baseline', undefined);
/** The build measured as the candidate: dist/ unless given (a copy, so that dist/ can be rebuilt meanwhile). */
const CANDIDATE = resolve(argValue('--candidate', join(ROOT, 'dist')));
const PROFILE = argValue('--cpu-prof', undefined);
const ONLY = argValue('--only', 'plan,json,out,markdown,check-base,check-live').split(',');
const SLOW = ['--timeout', '600'];
const CPU_AT_EXIT = `data:text/javascript,process.on('exit',()=>{const c=process.cpuUsage();process.stderr.write('\\nbench-cpu-ms '+((c.user+c.system)/1000).toFixed(0)+' bench-rss-kb '+process.resourceUsage().maxRSS+'\\n')})`;

function run(args, env, cwd = ROOT, nodeFlags = []) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...nodeFlags, '--import', CPU_AT_EXIT, ...args], {
      cwd,
      env: { ...process.env, ...env, NO_COLOR: '1', NETFORM_TIMINGS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks = [];
    let stderr = '';
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', fail);
    child.on('close', (code) =>
      done({
        code,
        stderr,
        // A JSON plan's time and seal differ from run to run: the rest must not.
        digest: createHash('sha256')
          .update(
            Buffer.concat(chunks)
              .toString('utf8')
              .replace(/"(created_at|seal)": "[^"]*"/g, ''),
          )
          .digest('hex')
          .slice(0, 16),
        wallMs: performance.now() - started,
        cpuMs: Number(/bench-cpu-ms (\d+)/.exec(stderr)?.[1] ?? NaN),
        rssMb: Number(/bench-rss-kb (\d+)/.exec(stderr)?.[1] ?? NaN) / 1024,
        bytes: chunks.reduce((n, c) => n + c.length, 0),
        access: timingsOf(stderr).access,
      }),
    );
  });
}

const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'ignore' });

const builds = [{ name: 'candidate', cli: join(CANDIDATE, 'src/cli/main.js') }];
if (BASELINE) builds.unshift({ name: 'baseline', cli: join(resolve(BASELINE), 'src/cli/main.js') });

const dir = mkdtempSync(join(tmpdir(), 'netform-plan-json-bench-'));
let server;
try {
  const loadStart = loadavg();
  const dbPath = join(dir, 'fleet.db');
  const token = await prepareDatabase(dbPath);
  const m = model({ users: USERS, devices: 2 * USERS, rules: 3 * USERS });
  await seed(dbPath, m);
  server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const env = { NETFORM_URL: server.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' };
  const desired = desiredYaml(m);
  const repo = join(dir, 'repo');
  mkdirSync(repo);
  const file = join(repo, 'netform.yaml');
  const exported = await runCli(['export', ...SLOW], env);
  if (exported.code !== 0) throw new Error(`export exited ${exported.code}: ${exported.stderr}`);
  git(repo, 'init', '-q');
  writeFileSync(file, exported.stdout);
  git(repo, 'add', 'netform.yaml');
  git(repo, '-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-qm', 'base');
  writeFileSync(file, desired.text);

  const commands = {
    plan: (cli) => [[cli, 'plan', '-f', file, ...SLOW], [2]],
    json: (cli) => [[cli, 'plan', '-f', file, '--format', 'json', ...SLOW], [2]],
    out: (cli) => [[cli, 'plan', '-f', file, '-o', join(dir, 'saved.json'), ...SLOW], [2]],
    markdown: (cli) => [[cli, 'plan', '-f', file, '--format', 'markdown', ...SLOW], [2]],
    'check-base': (cli) => [
      [cli, 'check', 'no-new-access', '--base', 'HEAD', '-f', 'netform.yaml'],
      [0, 1],
    ],
    'check-json': (cli) => [
      [cli, 'check', 'no-new-access', '--base', 'HEAD', '-f', 'netform.yaml', '--format', 'json'],
      [0, 1],
    ],
    'check-live': (cli) => [
      [cli, 'check', 'no-new-access', '--live', '-f', 'netform.yaml', ...SLOW],
      [0, 1],
    ],
  };
  const rows = new Map();
  const push = (k, v) => (rows.get(k) ?? rows.set(k, []).get(k)).push(v);
  const digests = new Set();
  for (let i = 0; i < RUNS; i++) {
    for (const b of i % 2 === 0 ? builds : [...builds].reverse()) {
      for (const name of ONLY) {
        const [args, codes] = commands[name](b.cli);
        const r = await run(args, env, repo);
        if (!codes.includes(r.code)) {
          // Recorded, not thrown: at 10,000 users a JSON plan is longer than a JavaScript string can be.
          const why = r.stderr.split('\n').find((l) => /Error|error:/.test(l)) ?? `exit ${r.code}`;
          push(`${b.name}|${name}|failed`, `exit ${r.code}: ${why.trim().slice(0, 120)}`);
        }
        push(`${b.name}|${name}|cpu`, r.cpuMs);
        push(`${b.name}|${name}|wall`, r.wallMs);
        push(`${b.name}|${name}|rss`, r.rssMb);
        // What it wrote: stdout, or the saved plan of `-o`.
        const out = join(dir, 'saved.json');
        push(`${b.name}|${name}|bytes`, name === 'out' ? (existsSync(out) ? statSync(out).size : 0) : r.bytes);
        if (name === 'out') rmSync(out, { force: true });
        if (r.access !== undefined) push(`${b.name}|${name}|access`, r.access);
        if (name === 'json') digests.add(r.digest);
        process.stderr.write(
          `${b.name} ${name}: exit ${r.code}, ${r.cpuMs} ms CPU, ${r.wallMs.toFixed(0)} ms wall, ${r.rssMb.toFixed(0)} MB peak RSS\n`,
        );
      }
    }
  }
  const loadEnd = loadavg();
  const la = (l) => l.map((x) => x.toFixed(2)).join(', ');
  console.log(
    `Fleet: ${m.users.length} users, ${m.devices.length} devices, ${m.rules.length} rules; changes ${JSON.stringify(desired.changes)}; ` +
      `${RUNS} round(s), medians. Load average at start ${la(loadStart)}, at end ${la(loadEnd)}.\n`,
  );
  console.log(
    '| build | command | CPU, runs (ms) | CPU median | CPU / text plan | wall median (ms) | access phase (ms) | peak RSS (MB) | bytes written |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const b of builds) {
    const base = rows.has(`${b.name}|plan|cpu`) ? median(rows.get(`${b.name}|plan|cpu`)) : NaN;
    for (const name of ONLY) {
      const cpu = rows.get(`${b.name}|${name}|cpu`);
      const access = rows.get(`${b.name}|${name}|access`);
      const failed = rows.get(`${b.name}|${name}|failed`);
      console.log(
        `| ${b.name}${failed ? ` (failed: ${failed.join('; ')})` : ''} | ${name} | ${cpu.join(' / ')} | ${median(cpu)} | ${(median(cpu) / base).toFixed(2)}× | ` +
          `${median(rows.get(`${b.name}|${name}|wall`)).toFixed(0)} | ${access ? median(access).toFixed(0) : ''} | ` +
          `${median(rows.get(`${b.name}|${name}|rss`)).toFixed(0)} | ${median(rows.get(`${b.name}|${name}|bytes`)).toLocaleString('en')} |`,
      );
    }
  }
  if (PROFILE) {
    mkdirSync(PROFILE, { recursive: true });
    const [args] = commands.json(builds.at(-1).cli);
    await run(args, env, repo, ['--cpu-prof', '--cpu-prof-dir', resolve(PROFILE)]);
    console.log(`\nprofile of plan --format json written to ${PROFILE}`);
  }
  if (ONLY.includes('json') && digests.size > 1) {
    console.error(`the builds printed different JSON plans: ${[...digests].join(', ')}`);
    process.exitCode = 1;
  }
} finally {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
}
