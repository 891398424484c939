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
import { argValue, median, model, prepareDatabase, runCli, seed } from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '3'));

/** The floor (as bench/fleet.mjs): a fresh Node process that fetches the three lists and parses them. */
const FLOOR_SCRIPT = `
const headers = { authorization: 'Bearer ' + process.env.NETFORM_TOKEN };
const lists = await Promise.all(['users', 'devices', 'rules'].map(async (c) => JSON.parse(await (await fetch(process.env.NETFORM_URL + '/v0/' + c, { headers })).text())));
if (lists.some((l) => !Array.isArray(l.data))) process.exit(1);
`;

function floor(env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', FLOOR_SCRIPT], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`floor exited ${code}`)),
    );
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
    floors.push(await floor(env));
    for (const format of formats) {
      const out = join(dir, `review.${format}`);
      const result = await runCli(['review', '--format', format, '-o', out], env);
      if (result.code !== 0) throw new Error(`review --format ${format} exited ${result.code}:\n${result.stderr}`);
      times[format].push(result.wallMs);
      sizes[format] = statSync(out).size;
    }
  }
  console.log(
    `netform review on ${m.users.length} users, ${m.devices.length} devices, ${m.rules.length} rules (${RUNS} runs, medians):`,
  );
  const floorMs = median(floors);
  console.log(
    `  floor (node + the three lists) ${(floorMs / 1000).toFixed(2)} s (runs: ${floors.map((t) => (t / 1000).toFixed(2)).join(', ')} s)`,
  );
  for (const format of formats) {
    const ms = median(times[format]);
    console.log(
      `  --format ${format.padEnd(8)} ${(ms / 1000).toFixed(2)} s (runs: ${times[format].map((t) => (t / 1000).toFixed(2)).join(', ')} s), ` +
        `${(ms / floorMs).toFixed(2)}× the floor, ${(sizes[format] / 1e6).toFixed(1)} MB ${ms <= 10_000 ? '(target ≤ 10 s: met)' : '(target ≤ 10 s: MISSED)'}`,
    );
  }
} finally {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
}
