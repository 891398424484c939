#!/usr/bin/env node
/**
 * `netform review` on the 10,000-user fleet (bench/scale-data.mjs: 10,000 users, 20,000 devices,
 * 30,000 rules, seeded through the Store), as users run it: the built CLI in its own process, over
 * HTTP, in each format, writing the review to a file. Target (issue 25, W3.6): ≤ 10 s.
 *
 *   npm run build && node bench/review.mjs [--runs N]
 *
 * Also reported: the review's size, and the floor of bench/fleet.mjs (a fresh Node process reading
 * the three lists), so that the review's own work can be told from the reads and from the load of
 * the shared machine.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../dist/server/index.js';
import { argValue, CLI, median, model, prepareDatabase, seed } from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '3'));

/** The floor (as bench/fleet.mjs): a fresh Node process that fetches the three lists and parses them. */
const FLOOR_SCRIPT = `
const headers = { authorization: 'Bearer ' + process.env.NETFORM_TOKEN };
const lists = await Promise.all(['users', 'devices', 'rules'].map(async (c) => JSON.parse(await (await fetch(process.env.NETFORM_URL + '/v0/' + c, { headers })).text())));
if (lists.some((l) => !Array.isArray(l.data))) process.exit(1);
`;

/**
 * A Node process from start to exit under bash's `time`: its wall time and its CPU time (user +
 * system, its own and its children's), in ms. CPU time is what the shared machine's load changes
 * least: the other helpers' jobs stretch the wall time, not the work done.
 */
function measure(nodeArgs, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'bash',
      ['-c', 'TIMEFORMAT="%R %U %S"; time "$0" "$@" > /dev/null 2> /dev/null', process.execPath, ...nodeArgs],
      { env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const [wall, user, sys] = stderr.trim().split('\n').at(-1).split(' ').map(Number);
      if (code !== 0) reject(new Error(`${nodeArgs.join(' ')} exited ${code}`));
      else resolve({ wallMs: wall * 1000, cpuMs: (user + sys) * 1000 });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'netform-review-bench-'));
let server;
try {
  const dbPath = join(dir, 'fleet.db');
  const token = await prepareDatabase(dbPath);
  const m = model();
  await seed(dbPath, m);
  server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const env = { NETFORM_URL: server.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' };
  const formats = ['markdown', 'json', 'csv'];
  const times = Object.fromEntries(formats.map((f) => [f, []]));
  const floors = [];
  const sizes = {};
  for (let run = 0; run < RUNS; run++) {
    // In turns with the reviews, so that the load of the shared machine falls on all alike.
    floors.push(await measure(['--input-type=module', '-e', FLOOR_SCRIPT], env));
    for (const format of formats) {
      const out = join(dir, `review.${format}`);
      times[format].push(await measure([CLI, 'review', '--format', format, '-o', out], env));
      sizes[format] = statSync(out).size;
    }
  }
  console.log(
    `netform review on ${m.users.length} users, ${m.devices.length} devices, ${m.rules.length} rules (${RUNS} runs, medians):`,
  );
  const show = (list, key) =>
    `${(median(list.map((t) => t[key])) / 1000).toFixed(2)} s (runs: ${list.map((t) => (t[key] / 1000).toFixed(2)).join(', ')})`;
  const floorWall = median(floors.map((t) => t.wallMs));
  const floorCpu = median(floors.map((t) => t.cpuMs));
  console.log(`  floor (node + the three lists): wall ${show(floors, 'wallMs')}, CPU ${show(floors, 'cpuMs')}`);
  for (const format of formats) {
    const wall = median(times[format].map((t) => t.wallMs));
    const cpu = median(times[format].map((t) => t.cpuMs));
    console.log(
      `  --format ${format.padEnd(8)} wall ${show(times[format], 'wallMs')} = ${(wall / floorWall).toFixed(2)}× the floor; ` +
        `CPU ${show(times[format], 'cpuMs')} = ${(cpu / floorCpu).toFixed(2)}× the floor; ${(sizes[format] / 1e6).toFixed(1)} MB; ` +
        `target ≤ 10 s wall: ${wall <= 10_000 ? 'met' : 'MISSED'}`,
    );
  }
} finally {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
}
