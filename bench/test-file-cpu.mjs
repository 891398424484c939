#!/usr/bin/env node
/**
 * CPU seconds and wall time of single test files, on this checkout and on another (a "before"
 * checkout), run alternately, with medians: for comparing a test file's cost before and after a
 * change on a busy machine, where CPU time is the figure to trust.
 *
 *   node bench/test-file-cpu.mjs [--base DIR] [--runs 3] [--project sqlite] FILE...
 *
 * Each run is `vitest run --project P FILE` alone (one worker) with NETFORM_TEST_CPU_LOG
 * (test/helpers/cpu-log.ts): `cpu` is the worker's CPU seconds, the child processes it waited for
 * included (the vitest main process not counted); `wall` is the file's own time from its first
 * hook to its last. Both checkouts need their build when a file runs the built CLI. Prints one
 * line per file and checkout: median cpu, median wall, tests passed/skipped, the load average at
 * the runs. A file whose run fails is reported as failed, with its output's tail.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at === -1) return fallback;
  const [value] = args.splice(at, 2).slice(1);
  return value;
};
const base = option('--base', undefined);
const runs = Number(option('--runs', '3'));
const project = option('--project', 'sqlite');
const files = args;
if (files.length === 0 || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: node bench/test-file-cpu.mjs [--base DIR] [--runs N] [--project sqlite|postgres] FILE...');
  process.exit(2);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function runOnce(dir, file) {
  const tmp = mkdtempSync(join(tmpdir(), 'netform-bench-cpu-'));
  const log = join(tmp, 'cpu.jsonl');
  const load = loadavg()[0];
  const result = spawnSync('npx', ['vitest', 'run', '--project', project, file], {
    cwd: dir,
    env: { ...process.env, NETFORM_TEST_CPU_LOG: log, NETFORM_TEST_WORKERS: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout}${result.stderr}`;
  let line;
  try {
    line = JSON.parse(readFileSync(log, 'utf8').trim().split('\n').pop());
  } catch {
    line = undefined;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const tests = /Tests\s+(.*)\(\d+\)/.exec(output)?.[1]?.trim() ?? '?';
  if (result.status !== 0 || !line) return { failed: output.split('\n').slice(-30).join('\n'), load, tests };
  return { cpu: line.cpu, wall: line.tests, load, tests };
}

const checkouts = base
  ? [
      ['after', here],
      ['before', resolve(base)],
    ]
  : [['this', here]];
console.log(`test-file-cpu: ${runs} run(s) per file and checkout, project ${project}, alternating`);
for (const file of files) {
  const seen = Object.fromEntries(checkouts.map(([name]) => [name, []]));
  for (let i = 0; i < runs; i++) {
    // Alternate which checkout goes first, so that a change of load weighs on both alike.
    const order = i % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const [name, dir] of order) seen[name].push(runOnce(dir, file));
  }
  for (const [name] of checkouts) {
    const done = seen[name].filter((r) => !r.failed);
    const loads = seen[name].map((r) => r.load.toFixed(1)).join('/');
    if (done.length < seen[name].length) {
      console.log(`${file} ${name}: FAILED ${seen[name].length - done.length} of ${seen[name].length} run(s)`);
      console.log(seen[name].find((r) => r.failed).failed);
    }
    if (done.length === 0) continue;
    const cpu = median(done.map((r) => r.cpu)).toFixed(2);
    const wall = median(done.map((r) => r.wall)).toFixed(1);
    const all = done.map((r) => r.cpu.toFixed(1)).join(' ');
    console.log(`${file} ${name}: cpu ${cpu} s (runs: ${all}), wall ${wall} s, tests ${done[0].tests}, load ${loads}`);
  }
}
