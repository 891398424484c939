#!/usr/bin/env node
/**
 * Drift run: how long one drift check takes against the 10,000-user benchmark server (10,000
 * users, 20,000 devices, 30,000 rules: the dataset of bench/plan-scale.mjs), measured as users
 * run it:
 *   - `netform export -o DIR` of that server (the adoption step), once;
 *   - `netform drift -f DIR` once, on the exported files (clean, exit 0), as a process: wall time
 *     and its phases (NETFORM_TIMINGS);
 *   - `netform drift --every` scheduled: the `duration_ms` of its runs (no process start);
 *   - `netform drift -f DIR` once more after 1% of the objects were changed by hand through the
 *     API (exit 2).
 *
 *   npm run build && node bench/drift-run.mjs [--runs N]
 *
 * The dataset and its seeding (straight through the server's Store in one transaction) are
 * bench/scale-data.mjs's, as for bench/plan-scale.mjs.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer } from '../dist/server/index.js';
import {
  argValue,
  CLI,
  DEVICES,
  median,
  model,
  prepareDatabase,
  RULES,
  runCli,
  seed,
  timingsOf,
  USERS,
} from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '3'));

/** `drift --every` until `count` reports have come, then SIGTERM; returns the reports. */
function scheduledRuns(args, env, count) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'drift', ...args], {
      env: { ...process.env, ...env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const reports = [];
    let buffer = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf('\n')) !== -1) {
        reports.push(JSON.parse(buffer.slice(0, newline)));
        buffer = buffer.slice(newline + 1);
        if (reports.length === count) child.kill('SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(reports) : reject(new Error(`drift --every exited ${code}:\n${stderr}`)),
    );
  });
}

async function api(url, token, method, path, body) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
}

const ms = (x) => (x === undefined ? '–' : x.toFixed(0));

const dir = mkdtempSync(join(tmpdir(), 'netform-drift-bench-'));
try {
  const dbPath = join(dir, 'netform.db');
  const token = await prepareDatabase(dbPath);
  // Generating the objects is counted in the seeding time, as it always was here.
  let t = performance.now();
  const seeded = model();
  await seed(dbPath, seeded);
  const seedSeconds = (performance.now() - t) / 1000;

  const server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const env = { NETFORM_URL: server.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' };
  const lines = [];
  try {
    const desired = join(dir, 'desired');
    const exported = await runCli(['export', '-o', desired], env);
    if (exported.code !== 0) throw new Error(`export exited ${exported.code}:\n${exported.stderr}`);
    const exportedSplit = await runCli(['export', '-o', join(dir, 'desired-split'), '--split'], env);
    if (exportedSplit.code !== 0)
      throw new Error(`export --split exited ${exportedSplit.code}:\n${exportedSplit.stderr}`);
    const explicit = join(dir, 'desired-explicit');
    const exportedExplicit = await runCli(['export', '-o', explicit, '--explicit-defaults'], env);
    if (exportedExplicit.code !== 0)
      throw new Error(`export --explicit-defaults exited ${exportedExplicit.code}:\n${exportedExplicit.stderr}`);

    const clean = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await runCli(['drift', '-f', desired], env);
      if (r.code !== 0)
        throw new Error(`drift on the export exited ${r.code} (expected 0):\n${r.stderr}\n${r.stdout.slice(-2000)}`);
      clean.push({ wallMs: r.wallMs, ...timingsOf(r.stderr) });
    }
    const splitRun = await runCli(['drift', '-f', join(dir, 'desired-split')], env);
    if (splitRun.code !== 0) throw new Error(`drift on the split export exited ${splitRun.code}:\n${splitRun.stderr}`);

    const scheduled = await scheduledRuns(['-f', desired, '--every', '*/2 * * * * *', '--run-at-start'], env, RUNS + 1);

    // 1% of the objects changed by hand: 100 promotions, 200 device MTUs, 100 rules deleted, 200 new users.
    t = performance.now();
    for (let i = 0; i < 100; i++)
      await api(server.url, token, 'PATCH', `/v0/users/${seeded.users[i * 100].id}`, { user: { role: 'admin' } });
    for (let i = 0; i < 200; i++)
      await api(server.url, token, 'PATCH', `/v0/devices/${seeded.devices[i * 100].id}`, {
        device: { use_default_mtu: false, mtu: 1380 },
      });
    for (let i = 0; i < 100; i++) await api(server.url, token, 'DELETE', `/v0/rules/${seeded.rules[i * 300].id}`);
    for (let i = 0; i < 200; i++)
      await api(server.url, token, 'POST', '/v0/users', { user: { email: `hand-made-${i}@bench.test` } });
    const handSeconds = (performance.now() - t) / 1000;
    const driftedRuns = async (files) => {
      const runs = [];
      let summary = '';
      for (let i = 0; i < RUNS; i++) {
        const r = await runCli(['drift', '-f', files], env);
        if (r.code !== 2) throw new Error(`drift after hand changes exited ${r.code} (expected 2):\n${r.stderr}`);
        runs.push({ wallMs: r.wallMs, ...timingsOf(r.stderr) });
        summary = r.stdout.trim().split('\n').at(-1);
      }
      return { runs, summary };
    };
    const drifted = await driftedRuns(desired);
    const driftedExplicit = await driftedRuns(explicit);

    const row = (name, runs, pick) =>
      `| ${name} | ${runs.map((r) => ms(pick(r))).join(' / ')} | ${ms(median(runs.map(pick)))} |`;
    lines.push(
      `Server: ${USERS.toLocaleString('en')} users, ${DEVICES.toLocaleString('en')} devices, ${RULES.toLocaleString('en')} rules (seeded through the Store in ${seedSeconds.toFixed(1)} s), real HTTP on loopback; the CLI in its own process.`,
      `Export: \`netform export -o DIR\` ${(exported.wallMs / 1000).toFixed(1)} s (one file), \`--split\` ${(exportedSplit.wallMs / 1000).toFixed(1)} s (${USERS + 2} files), \`--explicit-defaults\` ${(exportedExplicit.wallMs / 1000).toFixed(1)} s; \`drift\` on the split export: exit ${splitRun.code} in ${(splitRun.wallMs / 1000).toFixed(1)} s.`,
      '',
      '| one drift run (ms) | runs | median |',
      '|---|---|---|',
      row('`drift -f` once, clean (exit 0): whole process', clean, (r) => r.wallMs),
      row('… load the exported YAML', clean, (r) => r.load),
      row('… fetch (3 list calls)', clean, (r) => r.fetch),
      row('… diff (planChanges)', clean, (r) => r.diff),
      row('`drift --every`, clean: `duration_ms` of a scheduled run', scheduled.slice(1), (r) => r.duration_ms),
      row('`drift -f` once after 1% hand changes (exit 2): whole process', drifted.runs, (r) => r.wallMs),
      row('… same, on the `--explicit-defaults` export', driftedExplicit.runs, (r) => r.wallMs),
      row('peak RSS of the drift process (MB), clean', clean, (r) => r.rss_peak_mb),
      '',
      `Hand changes (${handSeconds.toFixed(1)} s through the API): 100 promotions to admin, 200 device MTUs, 100 rules deleted, 200 users created.`,
      `Drift on the default export: \`${drifted.summary}\` (only the deleted rules: the roles and MTUs were at their defaults, so left out and unmanaged; the new users are not declared and prune is off).`,
      `Drift on the \`--explicit-defaults\` export: \`${driftedExplicit.summary}\`.`,
    );
  } finally {
    await server.close();
  }
  console.log(lines.join('\n'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
