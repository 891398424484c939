#!/usr/bin/env node
/**
 * Where `.ci/run` spends its time outside the tests: a fresh clone of a checkout, then each part
 * of `npm ci` and `npm run lint` on its own, timed (wall, user + sys CPU, peak RSS), with the load
 * average before and after each. The tests themselves are not run (time them with `.ci/run`).
 *
 *   node bench/ci-phases.mjs [--repo DIR] [--keep] [--ci]
 *
 * --repo: the checkout to clone (default: this one, at its HEAD; commit first). --keep: leave the
 * clone in place. --ci: instead of the parts one by one, the clone's own `.ci/install-lint` as
 * `.ci/run` runs it (the compile beside the build and lint), with the phase lines it prints.
 * Takes 3-5 minutes on 2 cores: it compiles better-sqlite3 from source, as `npm ci` does.
 *
 * The phases, in `.ci/run`'s order: `npm ci --ignore-scripts` (the install: npm's cache to
 * node_modules), better-sqlite3's native addon (node-gyp, from source), the `prepare` build
 * (NETFORM_BUILD_CHECK=0, emit only), then lint's parts as `package.json`'s lint script lists them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const at = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const repo = resolve(at('--repo') ?? fileURLToPath(new URL('..', import.meta.url)));
const keep = args.includes('--keep');

const base = mkdtempSync(join(tmpdir(), 'netform-ci-phases-'));
const dir = join(base, 'p');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Runs `command` through bash in the clone under /usr/bin/time; returns its figures. */
function phase(name, command, env = {}, cwd = dir) {
  const before = load();
  const timeFile = join(base, 'time.txt');
  const started = process.hrtime.bigint();
  const run = spawnSync('/usr/bin/time', ['-o', timeFile, '-f', '%U %S %M', 'bash', '-c', command], {
    cwd,
    env: { ...process.env, CHECKPOINT_DISABLE: '1', ...env },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const [user, sys, rss] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  const row = { name, status: run.status, wall, cpu: user + sys, rssMb: rss / 1024, before, after: load() };
  if (command.includes('.ci/install-lint')) row.tail = run.stderr.trim();
  else if (run.status !== 0) row.tail = `${run.stdout}\n${run.stderr}`.trim().split('\n').slice(-8).join('\n');
  return row;
}

const lint = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).scripts.lint;
const rows = [];
try {
  rows.push(phase('git clone', `git clone -q ${JSON.stringify(repo)} ${JSON.stringify(dir)}`, {}, base));
  if (args.includes('--ci')) {
    const script = `bash .ci/install-lint > ${base}/ci.log 2>&1; st=$?; grep '^ci phase:' ${base}/ci.log >&2;
      [ $st = 0 ] || tail -30 ${base}/ci.log >&2; exit $st`;
    rows.push(phase('.ci/install-lint', script));
  } else {
    rows.push(phase('npm ci: install (--ignore-scripts)', 'npm ci --ignore-scripts --no-audit --no-fund'));
    rows.push(
      phase('npm ci: better-sqlite3 from source', 'npm rebuild better-sqlite3 --foreground-scripts', {
        JOBS: 'max',
        npm_config_build_from_source: 'true',
      }),
    );
    rows.push(phase('npm ci: prepare (build, emit only)', 'npm run -s build', { NETFORM_BUILD_CHECK: '0' }));
    rows.push(phase('(the addon loads)', `node -e "new (require('./node_modules/better-sqlite3'))(':memory:')"`));
    for (const part of lint.split(' && '))
      rows.push(phase(`lint: ${part.split(' ').slice(0, 3).join(' ')}`, `npx --no-install ${part}`));
  }
} finally {
  if (!keep) rmSync(base, { recursive: true, force: true });
}

const pad = (s, n) => String(s).padEnd(n);
console.log(`ci-phases: ${repo} cloned into ${dir}${keep ? '' : ' (removed)'}, ${new Date().toISOString()}`);
console.log(`${pad('phase', 44)} ${pad('wall s', 8)} ${pad('cpu s', 8)} ${pad('rss MB', 8)} load before -> after`);
for (const r of rows) {
  console.log(
    `${pad(r.name, 44)} ${pad(r.wall.toFixed(1), 8)} ${pad(r.cpu.toFixed(1), 8)} ${pad(r.rssMb.toFixed(0), 8)} ${r.before} -> ${r.after}${r.status === 0 ? '' : `  FAILED (${r.status})`}`,
  );
  if (r.tail) console.log(r.tail.replace(/^/gm, '    '));
}
const sum = (pick) => rows.reduce((s, r) => s + pick(r), 0);
console.log(`${pad('total', 44)} ${pad(sum((r) => r.wall).toFixed(1), 8)} ${pad(sum((r) => r.cpu).toFixed(1), 8)}`);
