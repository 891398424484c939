#!/usr/bin/env node
/**
 * Where a test file's CPU goes, process by process: runs `vitest run --project P FILE` (one worker)
 * with a preload in NODE_OPTIONS that every node process under it inherits (the CLI's children,
 * `npm`, `npx`, scripts' `node`, servers), each writing its own CPU seconds at exit; then prints
 * them grouped by what the process ran (`netform plan`, `npm install`, `action-stream.mjs`, ...):
 * count, CPU seconds in all and each, wall seconds in all. A process ended by a signal writes
 * nothing (say, a SIGKILLed netform), and so may the vitest worker when vitest ends it;
 * `/usr/bin/time`'s total is printed for the whole run.
 *
 *   node bench/child-cpu.mjs [--project sqlite] FILE...
 *
 * For the package and Action tests (test/e2e/package): about 1 min per file on a quiet machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = process.argv.slice(2);
const at = args.indexOf('--project');
const project = at === -1 ? 'sqlite' : args.splice(at, 2)[1];
if (args.length === 0) {
  console.error('usage: node bench/child-cpu.mjs [--project sqlite|postgres] FILE...');
  process.exit(2);
}

const tmp = mkdtempSync(join(tmpdir(), 'netform-child-cpu-'));
const log = join(tmp, 'processes.jsonl');
const preload = join(tmp, 'preload.cjs');
writeFileSync(
  preload,
  `const { appendFileSync } = require('node:fs');
const started = Date.now();
process.on('exit', () => {
  const u = process.resourceUsage();
  appendFileSync(${JSON.stringify(log)}, JSON.stringify({
    argv: process.argv.slice(1).join(' '),
    cpu: (u.userCPUTime + u.systemCPUTime) / 1e6,
    wall: (Date.now() - started) / 1000,
  }) + '\\n');
});
`,
);

/** What a process ran, as a group's name. */
function kind(argv) {
  if (argv.includes('action-stream.mjs')) return 'node scripts/action-stream.mjs';
  const cli = /(?:main\.js|\.bin\/netform)\s+(\S+)/.exec(argv);
  if (cli) return `netform ${cli[1]}`;
  const npm = /npm(?:-cli\.js)?\s+(\S+)/.exec(argv);
  if (npm) return argv.includes('vitest') ? 'npx vitest (this bench)' : `npm ${npm[1]}`;
  if (/vitest\/dist\/workers\//.test(argv)) return 'vitest worker (the file, its in-process server)';
  if (argv.includes('vitest')) return 'vitest main (this bench)';
  return `node ${argv.split(' ')[0].split('/').slice(-2).join('/')}`;
}

try {
  const loads = [loadavg()[0]];
  const run = spawnSync('/usr/bin/time', ['-f', '%e %U %S', 'npx', 'vitest', 'run', '--project', project, ...args], {
    cwd: here,
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(preload)}`.trim(),
      NETFORM_TEST_WORKERS: '1',
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  loads.push(loadavg()[0]);
  const output = `${run.stdout}${run.stderr}`;
  const [wall, user, sys] = output.trim().split('\n').pop().split(' ').map(Number);
  const tests = /Tests\s+(.*)\(\d+\)/.exec(output)?.[1]?.trim() ?? '?';
  if (run.status !== 0) console.log(output.split('\n').slice(-30).join('\n'));
  const groups = new Map();
  for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
    const row = JSON.parse(line);
    const group = groups.get(kind(row.argv)) ?? { count: 0, cpu: 0, wall: 0 };
    group.count += 1;
    group.cpu += row.cpu;
    group.wall += row.wall;
    groups.set(kind(row.argv), group);
  }
  console.log(
    `${args.join(' ')}: tests ${tests}; whole run ${wall} s wall, ${(user + sys).toFixed(2)} s CPU (user ${user}, sys ${sys}); load ${loads.map((l) => l.toFixed(1)).join(' -> ')}`,
  );
  console.log('| processes | count | CPU s | CPU s each | wall s |');
  console.log('|---|---|---|---|---|');
  for (const [name, g] of [...groups].sort((a, b) => b[1].cpu - a[1].cpu))
    console.log(
      `| ${name} | ${g.count} | ${g.cpu.toFixed(2)} | ${(g.cpu / g.count).toFixed(3)} | ${g.wall.toFixed(1)} |`,
    );
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
