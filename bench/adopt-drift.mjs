#!/usr/bin/env node
/**
 * `adopt --all-drift` with 1% drift against `plan` of the same file, on the bench fleet of
 * bench/scale-data.mjs (10,000 users, 20,000 devices, 30,000 rules, served by a real server in
 * this process; the desired file differs from the server in 1% of the objects, the drift adopt
 * writes back). Target: adopt ≤ 2× a plan. With `--baseline DIST` (another build's `dist/`), both
 * builds' plan and adopt run in turns, round after round, and the files each adopt wrote and what
 * it printed must be the same bytes (the run stops otherwise). Each adopt edits a fresh copy of the
 * file. Wall time, CPU time (user + system) and peak RSS of each process (/usr/bin/time); medians.
 *
 *   npm run build && node bench/adopt-drift.mjs [--runs N] [--scale S] [--baseline OTHER/dist]
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer } from '../dist/server/index.js';
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
  USERS,
} from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '3'));
const SCALE = Number(argValue('--scale', '1'));
const BASELINE = argValue('--baseline', '') && resolve(argValue('--baseline', ''), 'src/cli/main.js');
if (!(SCALE > 0) || !(RUNS >= 1)) throw new Error('--scale must be above 0 and --runs at least 1');
if (BASELINE && !existsSync(BASELINE)) throw new Error(`--baseline: no ${BASELINE} (build that checkout first)`);

const load = () =>
  execFileSync('uptime')
    .toString()
    .trim()
    .replace(/^.*load average: /, '');
const startedAt = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'netform-adopt-bench-'));
let server;
try {
  const dbPath = join(dir, 'fleet.db');
  const token = await prepareDatabase(dbPath);
  const counts = {
    users: Math.round(USERS * SCALE),
    devices: Math.round(DEVICES * SCALE),
    rules: Math.round(RULES * SCALE),
  };
  const m = model(counts);
  await seed(dbPath, m);
  server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const env = { NETFORM_URL: server.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' };
  const desired = desiredYaml(m);
  const file = join(dir, 'netform.yaml');
  writeFileSync(file, desired.text);
  const builds = [['now', CLI], ...(BASELINE ? [['baseline', BASELINE]] : [])];
  const rows = {};
  const loads = [load()];
  /** What the first adopt of each build wrote and printed (its file name made the same). */
  const results = {};
  for (let i = 0; i < RUNS; i++) {
    for (const [name, cli] of i % 2 === 0 ? builds : [...builds].reverse()) {
      const plan = expectExit(
        await measureProcess([cli, 'plan', '-f', file, '--timeout', '600'], { env, dir }),
        [2],
        `plan (${name})`,
      );
      const copy = join(dir, `adopted-${name}.yaml`);
      copyFileSync(file, copy);
      const adopt = expectExit(
        await measureProcess([cli, 'adopt', '--all-drift', '-f', copy, '--timeout', '600'], { env, dir }),
        [0],
        `adopt (${name})`,
      );
      const named = (text) => text.replaceAll(`adopted-${name}.yaml`, 'adopted.yaml');
      results[name] ??= { file: readFileSync(copy, 'utf8'), out: named(adopt.stdout()), err: named(adopt.stderr()) };
      (rows[`plan (${name})`] ??= []).push(plan);
      (rows[`adopt (${name})`] ??= []).push(adopt);
      process.stderr.write(
        `round ${i + 1} ${name}: plan ${(plan.cpuMs / 1000).toFixed(1)} CPU s, adopt ${(adopt.cpuMs / 1000).toFixed(1)} CPU s, ${adopt.rssMb.toFixed(0)} MB\n`,
      );
    }
    loads.push(load());
  }
  if (BASELINE)
    for (const part of ['file', 'out', 'err'])
      if (results.now[part] !== results.baseline[part])
        throw new Error(`adopt's ${part} differs between this build and the baseline`);
  const med = (k, f) => median(rows[k].map(f));
  const lines = [
    `Fleet: ${counts.users} users, ${counts.devices} devices, ${counts.rules} rules (scale ${SCALE}); desired ${(desired.text.length / 1e6).toFixed(1)} MB, drift ${JSON.stringify(desired.changes)}. ${RUNS} round(s), the builds in turns; medians.`,
    `Load average (1, 5, 15 min) before and after each round: ${loads.join(' | ')}`,
    '',
    '| build | plan wall | plan CPU | plan peak RSS | adopt wall | adopt CPU | adopt peak RSS | adopt / plan (wall) | adopt / plan (CPU) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name] of builds) {
    const p = `plan (${name})`;
    const a = `adopt (${name})`;
    const wall = (k) => med(k, (r) => r.wallMs);
    const cpu = (k) => med(k, (r) => r.cpuMs);
    const rss = (k) => med(k, (r) => r.rssMb);
    lines.push(
      `| ${name} | ${(wall(p) / 1000).toFixed(2)} s | ${(cpu(p) / 1000).toFixed(2)} s | ${rss(p).toFixed(0)} MB | ${(wall(a) / 1000).toFixed(2)} s | ${(cpu(a) / 1000).toFixed(2)} s | ${rss(a).toFixed(0)} MB | ${(wall(a) / wall(p)).toFixed(2)}× | ${(cpu(a) / cpu(p)).toFixed(2)}× |`,
    );
  }
  if (BASELINE)
    lines.push(
      '',
      'The files adopt wrote, its standard output and its standard error: the same bytes from both builds.',
    );
  lines.push(`The whole script took ${((performance.now() - startedAt) / 1000).toFixed(0)} s.`);
  console.log(lines.join('\n'));
} finally {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
}
