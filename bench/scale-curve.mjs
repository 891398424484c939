#!/usr/bin/env node
/**
 * The scale curve: `plan -f`, `drift -f` and the server's three list GETs on the bench fleet of
 * bench/scale-data.mjs (10,000 users, 20,000 devices, 30,000 rules, 1% of the desired state
 * changed) at 1×, 2× and 5× its size: wall time, CPU time and peak RSS of each, and per object
 * against 1×, so that a step worse than linear shows.
 *
 *   npm run build && node bench/scale-curve.mjs [--scales 1,2,5] [--runs N]
 *     [--quick]   --scales 0.05,0.1,0.25 --runs 1: the script end to end in a minute or two
 *
 * For each scale: a new SQLite file seeded through the Store, served by `netform serve` in its own
 * process (so that the server's CPU and peak RSS are its own, read from /proc), then RUNS rounds
 * of: `plan -f FILE` (exit 2), `drift -f FILE` (exit 2: the same 1% is drift), and GET
 * /v0/users, /v0/devices and /v0/rules one after the other from this process (each answer read
 * whole and parsed). The CLI's phases come from NETFORM_TIMINGS. The networks are large enough
 * for 5× the devices at every scale (10.0.0.0/12, fd00::/104), so that only the size changes.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { expectExit, measureProcess } from './process-time.mjs';
import {
  argValue,
  CLI,
  DEVICES,
  desiredYaml,
  median,
  model,
  prepareDatabase,
  RULES,
  seed,
  timingsOf,
  USERS,
} from './scale-data.mjs';

const QUICK = process.argv.includes('--quick');
const SCALES = argValue('--scales', QUICK ? '0.05,0.1,0.25' : '1,2,5')
  .split(',')
  .map(Number);
const RUNS = Number(argValue('--runs', QUICK ? '1' : '3'));
if (SCALES.some((s) => !(s > 0)) || !(RUNS >= 1)) throw new Error('--scales takes numbers above 0, --runs at least 1');
const SLOW = ['--timeout', '600'];
const load = () =>
  execFileSync('uptime')
    .toString()
    .trim()
    .replace(/^.*load average/, 'load average');
/** Clock ticks per second of /proc/PID/stat (USER_HZ, 100 on Linux). */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** CPU milliseconds (user + system) and peak RSS (MB) of a running process, from /proc. */
function procFigures(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuMs, rssMb: Number(hwm[1]) / 1024 };
}

/** `netform serve` on the file, in its own process; resolves { url, pid, stop() }. */
function serve(dbPath) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--db', dbPath, '--port', '0', '--log-level', 'warn'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    child.stdout.setEncoding('utf8').on('data', (c) => {
      out += c;
      const m = /listening on (\S+)/.exec(out);
      if (m)
        resolve({
          url: m[1],
          pid: child.pid,
          stop: () =>
            new Promise((done) => {
              child.once('close', done);
              child.kill('SIGTERM');
            }),
        });
    });
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`netform serve exited ${code} before listening:\n${err}`)));
  });
}

/** One list GET, read whole and parsed: wall ms, the server's CPU ms, bytes, items. */
async function listGet(server, token, collection) {
  const before = procFigures(server.pid).cpuMs;
  const started = performance.now();
  const res = await fetch(`${server.url}/v0/${collection}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  const wallMs = performance.now() - started;
  if (res.status !== 200) throw new Error(`GET /v0/${collection} answered ${res.status}: ${text.slice(0, 500)}`);
  const items = JSON.parse(text).data.length;
  return { wallMs, serverCpuMs: procFigures(server.pid).cpuMs - before, bytes: text.length, items };
}

const startedAt = performance.now();
const loadBefore = load();
const results = [];
/** The tables of the scales measured so far (printed after each scale, so that a stopped run still tells). */
function printTables() {
  const first = results[0];
  // The table: per scale and measure, the medians, and per object against the first scale.
  const med = (rs, pick) => median(rs.map(pick));

  const objects = (r) => r.counts.users + r.counts.devices + r.counts.rules;
  const lines = [
    `${results.length < SCALES.length ? `\nScales done so far: ${results.length} of ${SCALES.length}.\n` : ''}Scale curve, ${RUNS} round(s) per scale, medians. Load before: ${loadBefore}.`,
    '',
    '| scale | objects | desired file | seed | what | wall | CPU | peak RSS | CPU per object vs first scale | wall per object vs first scale |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const measures = [
    ['plan -f', (r) => r.rows.plan, (x) => x.cpuMs, (x) => x.rssMb],
    ['drift -f', (r) => r.rows.drift, (x) => x.cpuMs, (x) => x.rssMb],
    ['GET /v0/users', (r) => r.rows.users, (x) => x.serverCpuMs, null],
    ['GET /v0/devices', (r) => r.rows.devices, (x) => x.serverCpuMs, null],
    ['GET /v0/rules', (r) => r.rows.rules, (x) => x.serverCpuMs, null],
  ];
  for (const r of results) {
    const k = objects(r) / objects(first);
    for (const [name, rowsOf, cpuOf, rssOf] of measures) {
      const wall = med(rowsOf(r), (x) => x.wallMs);
      const cpu = med(rowsOf(r), cpuOf);
      const wall1 = med(rowsOf(first), (x) => x.wallMs);
      const cpu1 = med(rowsOf(first), cpuOf);
      const rss = rssOf
        ? `${med(rowsOf(r), rssOf).toFixed(0)} MB`
        : name === 'GET /v0/users'
          ? `server ${r.serverRssMb.toFixed(0)} MB`
          : '';
      lines.push(
        `| ${r.scale}× | ${objects(r).toLocaleString('en')} | ${r.mb.toFixed(1)} MB | ${r.seedS.toFixed(0)} s | ${name} | ${wall.toFixed(0)} ms | ${cpu.toFixed(0)} ms${rssOf ? '' : ' (server)'} | ${rss} | ${cpu1 > 0 ? (cpu / cpu1 / k).toFixed(2) : '-'} | ${(wall / wall1 / k).toFixed(2)} |`,
      );
    }
  }
  lines.push('', 'Phases of plan -f (ms, medians; NETFORM_TIMINGS), per object against the first scale in brackets:');
  lines.push('', '| scale | load | fetch | diff | access | render | peak RSS (CLI) |', '|---|---|---|---|---|---|---|');
  for (const r of results) {
    const k = objects(r) / objects(first);
    const phase = (p) => {
      const v = med(r.rows.plan, (x) => x.phases[p] ?? 0);
      const v1 = med(first.rows.plan, (x) => x.phases[p] ?? 0);
      return `${v.toFixed(0)} (${v1 ? (v / v1 / k).toFixed(2) : '-'})`;
    };
    lines.push(
      `| ${r.scale}× | ${phase('load')} | ${phase('fetch')} | ${phase('diff')} | ${phase('access')} | ${phase('render')} | ${med(r.rows.plan, (x) => x.phases.rss_peak_mb ?? 0).toFixed(0)} MB |`,
    );
  }
  lines.push('', 'Plans printed:', ...results.map((r) => `- ${r.scale}×: \`${r.summary}\` (load after: ${r.load})`));
  lines.push('', `The whole script took ${((performance.now() - startedAt) / 1000).toFixed(0)} s.`);
  console.log(lines.join('\n'));
}

for (const scale of SCALES) {
  const dir = mkdtempSync(join(tmpdir(), 'netform-scale-curve-'));
  let server;
  try {
    const counts = {
      users: Math.round(USERS * scale),
      devices: Math.round(DEVICES * scale),
      rules: Math.round(RULES * scale),
    };
    const dbPath = join(dir, 'fleet.db');
    const token = await prepareDatabase(dbPath, { ipv4: '10.0.0.0/12', ipv6: 'fd00::/104' });
    const m = model(counts);
    let t = performance.now();
    await seed(dbPath, m);
    const seedS = (performance.now() - t) / 1000;
    const desired = desiredYaml(m);
    const file = join(dir, 'netform.yaml');
    writeFileSync(file, desired.text);
    server = await serve(dbPath);
    const env = {
      NETFORM_URL: server.url,
      NETFORM_TOKEN: token,
      NETFORM_TOKEN_USER: 'admin@example.com',
      NETFORM_TIMINGS: '1',
    };
    const rows = { plan: [], drift: [], users: [], devices: [], rules: [] };
    let summary = '';
    for (let i = 0; i < RUNS; i++) {
      const plan = expectExit(
        await measureProcess([CLI, 'plan', '-f', file, ...SLOW], { env, dir }),
        [2],
        `plan at ${scale}×`,
      );
      summary ||= plan.stdout().trim().split('\n').at(-1);
      rows.plan.push({ ...plan, phases: timingsOf(plan.stderr()) });
      const drift = expectExit(
        await measureProcess([CLI, 'drift', '-f', file, ...SLOW], { env, dir }),
        [2],
        `drift -f at ${scale}×`,
      );
      rows.drift.push({ ...drift, phases: timingsOf(drift.stderr()) });
      for (const c of ['users', 'devices', 'rules']) rows[c].push(await listGet(server, token, c));
      process.stderr.write(
        `${scale}× round ${i + 1}: plan ${plan.wallMs.toFixed(0)} ms, drift ${drift.wallMs.toFixed(0)} ms, GETs ${['users', 'devices', 'rules'].map((c) => rows[c].at(-1).wallMs.toFixed(0)).join('/')} ms\n`,
      );
    }
    const serverRssMb = procFigures(server.pid).rssMb;
    results.push({ scale, counts, seedS, mb: desired.text.length / 1e6, rows, summary, serverRssMb, load: load() });
    printTables();
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
