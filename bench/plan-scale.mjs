#!/usr/bin/env node
/**
 * Plan scale: how long `netform plan` takes, and how much memory it needs, for a server holding
 * 10,000 users, 20,000 devices and 30,000 rules, with a desired state in which 1% of the objects
 * differ (600 changes: 100 role updates, 200 device updates, 100 device creates, 100 device
 * deletions, 50 rule creates, 50 rule deletions).
 *
 *   npm run build && node bench/plan-scale.mjs [--runs N]
 *
 * Seeding goes straight through the server's Store in one transaction (through the API it would
 * take 60,000 fsyncs); `plan` is measured as users run it: the real CLI in its own process,
 * reading the live state over HTTP from a real server on the seeded file. The CLI reports its
 * phases (load the files, fetch, diff, render) and its peak RSS with NETFORM_TIMINGS=1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { startServer } from '../dist/server/index.js';
import {
  argValue,
  DEVICES,
  desiredYaml,
  median,
  model,
  prepareDatabase,
  RULES,
  runCli,
  seed,
  timingsOf,
  USERS,
} from './scale-data.mjs';

async function main() {
  const RUNS = Number(argValue('--runs', '3'));
  const dir = mkdtempSync(join(tmpdir(), 'netform-plan-bench-'));
  try {
    const dbPath = join(dir, 'netform.db');
    const token = await prepareDatabase(dbPath);
    const m = model();
    let t = performance.now();
    await seed(dbPath, m);
    const seedSeconds = (performance.now() - t) / 1000;
    const desired = desiredYaml(m);
    const file = join(dir, 'netform.yaml');
    writeFileSync(file, desired.text);

    const server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
    const runs = [];
    try {
      for (let i = 0; i < RUNS; i++) {
        const r = await runCli(['plan', '-f', file, '--format', 'text'], {
          NETFORM_URL: server.url,
          NETFORM_TOKEN: token,
          NETFORM_TOKEN_USER: 'admin@example.com',
        });
        if (r.code !== 2) throw new Error(`plan exited ${r.code}:\n${r.stderr}\n${r.stdout.slice(-2000)}`);
        runs.push({ wallMs: r.wallMs, ...timingsOf(r.stderr), summary: r.stdout.trim().split('\n').at(-1) });
      }
    } finally {
      await server.close();
    }
    const row = (name, pick) =>
      `| ${name} | ${runs.map((r) => pick(r).toFixed(0)).join(' / ')} | ${median(runs.map(pick)).toFixed(0)} |`;
    const report = [
      `Server: ${USERS.toLocaleString('en')} users, ${DEVICES.toLocaleString('en')} devices, ${RULES.toLocaleString('en')} rules (seeded through the Store in ${seedSeconds.toFixed(1)} s).`,
      `Desired state: one YAML file of ${(desired.text.length / 1e6).toFixed(1)} MB, prune on; 1% differs: ${JSON.stringify(desired.changes)}.`,
      `Plan printed: \`${runs[0].summary}\``,
      '',
      `| phase (ms) | runs | median |`,
      '|---|---|---|',
      row('load the YAML files', (r) => r.load),
      row('fetch (3 list calls, parallel)', (r) => r.fetch),
      row('diff (planChanges)', (r) => r.diff),
      row('access changes (src/access, part of the plan)', (r) => r.access ?? 0),
      row('render (text)', (r) => r.render),
      row('whole command, process start to exit', (r) => r.wallMs),
      row('RSS after loading the files (MB)', (r) => r.rss_mb.load),
      row('RSS after fetching (MB)', (r) => r.rss_mb.fetch),
      row('RSS after the diff (MB)', (r) => r.rss_mb.diff),
      row('peak RSS of the CLI process (MB)', (r) => r.rss_peak_mb),
    ];
    const share = median(runs.map((r) => (r.access ?? 0) / (r.wallMs - (r.access ?? 0))));
    report.push(
      '',
      `Access changes add ${(share * 100).toFixed(1)}% to the plan's time (median of access / (whole command - access)).`,
    );
    console.log(report.join('\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run only when executed, not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
