#!/usr/bin/env node
/**
 * Fleet: the client side of netform against its floor, every figure from one run (issue 13).
 *
 *   npm run build && node bench/fleet.mjs [--runs N] [--scheduled N] [--no-scale]
 *
 * The floor is what any plan must at least do: start Node and read the three lists with `fetch`
 * and `JSON.parse`. Against it, on a server of 10,000 users, 20,000 devices and 30,000 rules (the
 * dataset of bench/scale-data.mjs, seeded through the Store) and a 5 MB desired state in which 1%
 * differs, each measured as users run it (the built CLI in its own process, over HTTP):
 *   - `plan` whole command (target ≤ 2× the floor, aim 1.5×; peak RSS ≤ 300 MB);
 *   - `drift -f` once, on what `export` wrote (≤ 2× the floor), and `drift --every` for N
 *     scheduled runs in one process: each run's duration and the process's RSS after it (flat);
 *   - `export -o DIR` (≤ 2× the floor); `validate` of the 5 MB file (≤ 1 s);
 *   - `plan` on a server five times larger (50,000 users): its cost per object against the
 *     10,000-user one (≤ 1.2×);
 *   - `netform --help` and `validate` of a small file against `node -e 0` (≤ 3×).
 * Every command of a round runs in turns with the others, RUNS rounds, medians reported, so that
 * the load of the shared machine falls on all alike.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer } from '../dist/server/index.js';
import { argValue, CLI, desiredYaml, median, model, prepareDatabase, runCli, seed, timingsOf } from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '3'));
const SCHEDULED = Number(argValue('--scheduled', '20'));
const SMALL = new URL('../examples/basic/netform.yaml', import.meta.url).pathname;

/** The floor: a fresh Node process that fetches the three lists and parses them. */
const FLOOR_SCRIPT = `
const headers = { authorization: 'Bearer ' + process.env.NETFORM_TOKEN };
const lists = await Promise.all(['users', 'devices', 'rules'].map(async (c) => JSON.parse(await (await fetch(process.env.NETFORM_URL + '/v0/' + c, { headers })).text())));
if (lists.some((l) => !Array.isArray(l.data))) process.exit(1);
`;

/** A process from start to exit: its wall time and peak RSS (from /proc at its end is not possible; GNU time is not assumed). */
function timed(args, env = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, wallMs: performance.now() - started }));
  });
}

function rssOfProcess(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024);
}

/**
 * Memory is flat when the later runs reach no higher than the earlier ones: the highest RSS of the
 * last third of the runs is at most 15% over the highest of the first third. (One sample against
 * another swings by a quarter as the collector frees each run's state; a leak raises the maxima.)
 */
function flat(rss) {
  const third = Math.max(1, Math.floor(rss.length / 3));
  return Math.max(...rss.slice(-third)) <= Math.max(...rss.slice(0, third)) * 1.15;
}

/** `drift --every` until `count` reports: each run's duration and the process's RSS when its report came. */
function scheduledRuns(args, env, count) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'drift', ...args], {
      env: { ...process.env, ...env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const runs = [];
    let buffer = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf('\n')) !== -1) {
        const report = JSON.parse(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        runs.push({ ms: report.duration_ms, status: report.status, rssMb: rssOfProcess(child.pid) });
        if (runs.length === count) child.kill('SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(runs) : reject(new Error(`drift --every exited ${code}:\n${stderr}`)),
    );
  });
}

async function fleet(dir, name, size) {
  const dbPath = join(dir, `${name}.db`);
  const wide = size.users > 10_000 ? { ipv4: '10.0.0.0/14', ipv6: 'fd00::/108' } : {};
  const token = await prepareDatabase(dbPath, wide);
  const m = model(size);
  await seed(dbPath, m);
  const desired = desiredYaml(m);
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, desired.text);
  const server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const env = { NETFORM_URL: server.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' };
  return {
    server,
    env,
    file,
    bytes: desired.text.length,
    objects: m.users.length + m.devices.length + m.rules.length,
    changes: desired.changes,
  };
}

function check(result, codes, what) {
  if (!codes.includes(result.code)) throw new Error(`${what} exited ${result.code}:\n${result.stderr.slice(-3000)}`);
  return result;
}

const dir = mkdtempSync(join(tmpdir(), 'netform-fleet-bench-'));
const fleets = [];
try {
  let t = performance.now();
  const small = await fleet(dir, 'fleet10k', { users: 10_000, devices: 20_000, rules: 30_000 });
  fleets.push(small);
  const large = process.argv.includes('--no-scale')
    ? null
    : await fleet(dir, 'fleet50k', { users: 50_000, devices: 100_000, rules: 150_000 });
  if (large) fleets.push(large);
  const setupSeconds = (performance.now() - t) / 1000;

  const exportDir = join(dir, 'export');
  check(await runCli(['export', '-o', exportDir], small.env), [0], 'export');

  const rows = {
    floor: [],
    plan: [],
    planRss: [],
    drift: [],
    driftRss: [],
    exportMs: [],
    validateBig: [],
    node: [],
    help: [],
    validateSmall: [],
    floorLarge: [],
    planLarge: [],
    planLargeRss: [],
  };
  for (let i = 0; i < RUNS; i++) {
    rows.floor.push(check(await timed(['--input-type=module', '-e', FLOOR_SCRIPT], small.env), [0], 'floor').wallMs);
    const plan = check(await runCli(['plan', '-f', small.file], small.env), [2], 'plan');
    rows.plan.push(plan.wallMs);
    rows.planRss.push(timingsOf(plan.stderr).rss_peak_mb);
    const drift = check(await runCli(['drift', '-f', exportDir], small.env), [0], 'drift');
    rows.drift.push(drift.wallMs);
    rows.driftRss.push(timingsOf(drift.stderr).rss_peak_mb);
    rows.exportMs.push(
      check(await runCli(['export', '-o', join(dir, `export-${i}`)], small.env), [0], 'export').wallMs,
    );
    rows.validateBig.push(check(await runCli(['validate', '-f', small.file], {}), [0], 'validate').wallMs);
    rows.node.push((await timed(['-e', '0'])).wallMs);
    rows.help.push(check(await timed([CLI, '--help']), [0], 'help').wallMs);
    rows.validateSmall.push(
      check(await timed([CLI, 'validate', '-f', SMALL], { ...process.env }), [0], 'validate small').wallMs,
    );
    if (large) {
      rows.floorLarge.push(
        check(await timed(['--input-type=module', '-e', FLOOR_SCRIPT], large.env), [0], 'floor 50k').wallMs,
      );
      const planLarge = check(await runCli(['plan', '-f', large.file], large.env), [2], 'plan 50k');
      rows.planLarge.push(planLarge.wallMs);
      rows.planLargeRss.push(timingsOf(planLarge.stderr).rss_peak_mb);
    }
  }
  const scheduled = await scheduledRuns(
    ['-f', exportDir, '--every', '* * * * * *', '--run-at-start'],
    small.env,
    SCHEDULED,
  );

  const m = Object.fromEntries(
    Object.entries(rows)
      .filter(([, v]) => v.length > 0)
      .map(([k, v]) => [k, median(v)]),
  );
  const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
  const verdict = (ok) => (ok ? 'met' : '**missed**');
  const ms = (x) => `${x.toFixed(0)} ms`;
  const runsOf = (k) => rows[k].map((x) => x.toFixed(0)).join(' / ');
  const lines = [
    `Fleets (seeded through the Store, served by real servers in this process; setup ${setupSeconds.toFixed(0)} s): ` +
      `${small.objects.toLocaleString('en')} objects, desired ${(small.bytes / 1e6).toFixed(1)} MB, changes ${JSON.stringify(small.changes)}` +
      (large
        ? `; ${large.objects.toLocaleString('en')} objects, desired ${(large.bytes / 1e6).toFixed(1)} MB, changes ${JSON.stringify(large.changes)}`
        : '') +
      `. ${RUNS} rounds, each command in turn; medians.`,
    '',
    '| measurement | runs (ms) | median | against | ratio | target | |',
    '|---|---|---|---|---|---|---|',
    `| floor: node + fetch 3 lists + JSON.parse (10k) | ${runsOf('floor')} | ${ms(m.floor)} | | | | |`,
    `| \`plan -f\` whole command (10k) | ${runsOf('plan')} | ${ms(m.plan)} | floor | ${ratio(m.plan, m.floor)} | ≤ 2× (aim 1.5×) | ${verdict(m.plan <= 2 * m.floor)} |`,
    `| \`plan\` peak RSS (MB) | ${runsOf('planRss')} | ${m.planRss} MB | | | ≤ 300 MB | ${verdict(m.planRss <= 300)} |`,
    `| \`drift -f\` once, clean, on the export (10k) | ${runsOf('drift')} | ${ms(m.drift)} | floor | ${ratio(m.drift, m.floor)} | ≤ 2× | ${verdict(m.drift <= 2 * m.floor)} |`,
    `| \`drift\` peak RSS (MB) | ${runsOf('driftRss')} | ${m.driftRss} MB | | | | |`,
    `| \`export -o DIR\` (10k) | ${runsOf('exportMs')} | ${ms(m.exportMs)} | floor | ${ratio(m.exportMs, m.floor)} | ≤ 2× | ${verdict(m.exportMs <= 2 * m.floor)} |`,
    `| \`validate -f\` the ${(small.bytes / 1e6).toFixed(1)} MB file | ${runsOf('validateBig')} | ${ms(m.validateBig)} | | | ≤ 1 s | ${verdict(m.validateBig <= 1000)} |`,
    `| \`node -e 0\` | ${runsOf('node')} | ${ms(m.node)} | | | | |`,
    `| \`netform --help\` | ${runsOf('help')} | ${ms(m.help)} | node -e 0 | ${ratio(m.help, m.node)} | ≤ 3× | ${verdict(m.help <= 3 * m.node)} |`,
    `| \`validate\` of examples/basic | ${runsOf('validateSmall')} | ${ms(m.validateSmall)} | node -e 0 | ${ratio(m.validateSmall, m.node)} | ≤ 3× | ${verdict(m.validateSmall <= 3 * m.node)} |`,
  ];
  if (large) {
    const perSmall = m.plan / small.objects;
    const perLarge = m.planLarge / large.objects;
    lines.push(
      `| floor (50k) | ${runsOf('floorLarge')} | ${ms(m.floorLarge)} | | | | |`,
      `| \`plan -f\` whole command (50k) | ${runsOf('planLarge')} | ${ms(m.planLarge)} | floor (50k) | ${ratio(m.planLarge, m.floorLarge)} | | |`,
      `| \`plan\` peak RSS at 50k (MB) | ${runsOf('planLargeRss')} | ${m.planLargeRss} MB | | | | |`,
      `| plan cost per object, 50k against 10k | | ${(perLarge * 1000).toFixed(1)} µs / ${(perSmall * 1000).toFixed(1)} µs | 10k | ${ratio(perLarge, perSmall)} | ≤ 1.2× | ${verdict(perLarge <= 1.2 * perSmall)} |`,
    );
  }
  const rss = scheduled.map((r) => r.rssMb);
  const durations = scheduled.slice(1).map((r) => r.ms);
  lines.push(
    `| \`drift --every\`: duration of a scheduled run (runs 2..${SCHEDULED}) | ${durations.join(' / ')} | ${ms(median(durations))} | floor | ${ratio(median(durations), m.floor)} | ≤ 2× | ${verdict(median(durations) <= 2 * m.floor)} |`,
    `| \`drift --every\`: RSS of its process after each run (MB) | ${rss.join(' / ')} | first ${rss[0]}, last ${rss.at(-1)}, max ${Math.max(...rss)} | | | flat | ${verdict(flat(rss))} |`,
  );
  console.log(lines.join('\n'));
} finally {
  for (const f of fleets) await f.server.close();
  rmSync(dir, { recursive: true, force: true });
}
