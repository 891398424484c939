#!/usr/bin/env node
/**
 * CPU of the built CLI's short-lived processes, this checkout against another (a "before"
 * checkout, built): a command's own help, flag errors (a bad --format, an unknown flag), and two
 * rows of the safety-net table that get past the flags (plan against a refused port; validate).
 * Each process runs with SHORT_LIVED_NODE's flags (test/helpers/cli.ts: --no-opt), as the
 * safety net's do; the checkouts take turns command by command (which goes first alternates from
 * round to round). Prints medians of CPU (user + system, from /usr/bin/time) per command and
 * checkout, and the load average.
 *
 *   node bench/cli-flag-errors.mjs --base DIR [--runs 5]      (about a minute on a quiet machine)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const base = option('--base', undefined);
const runs = Number(option('--runs', '5'));
if (!base || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: node bench/cli-flag-errors.mjs --base DIR [--runs N]');
  process.exit(2);
}
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const checkouts = [
  ['after', join(here, 'dist/src/cli/main.js')],
  ['before', join(resolve(base), 'dist/src/cli/main.js')],
];

const dir = mkdtempSync(join(tmpdir(), 'netform-flag-errors-'));
writeFileSync(
  join(dir, 'netform.yaml'),
  'version: 1\nsettings: { manage: { users: ["*@x.test"] } }\nusers:\n  - email: ann@x.test\n',
);
const refused = await new Promise((done) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => done(`http://127.0.0.1:${port}`));
  });
});
const COMMANDS = [
  ['plan --help', ['plan', '--help'], 0],
  ['plan --format nope', ['plan', '-f', 'netform.yaml', '--format', 'nope'], 1],
  ['apply --bogus', ['apply', '-f', 'netform.yaml', '--bogus'], 1],
  ['plan × connection refused', ['plan', '-f', 'netform.yaml'], 1],
  ['validate -f', ['validate', '-f', 'netform.yaml'], 0],
];
const env = {
  ...process.env,
  NETFORM_URL: refused,
  NETFORM_TOKEN: 'x'.repeat(40),
  NETFORM_RETRIES: '0',
  NO_COLOR: '1',
};
delete env.NODE_OPTIONS;
const timeFile = join(dir, 'time.txt');

function cpuOf(main, command) {
  const [name, argv, code] = command;
  const result = spawnSync(
    '/usr/bin/time',
    ['-o', timeFile, '-f', '%U %S', process.execPath, '--no-opt', main, ...argv],
    {
      cwd: dir,
      env,
      encoding: 'utf8',
    },
  );
  if (result.status !== code) throw new Error(`${main} ${name}: exit ${result.status}\n${result.stderr}`);
  const [user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  return user + sys;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const seen = new Map(COMMANDS.map(([name]) => [name, { after: [], before: [] }]));
const loads = [loadavg()[0]];
for (let round = 0; round < runs; round++) {
  for (const command of COMMANDS) {
    const order = round % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const [which, main] of order) seen.get(command[0])[which].push(cpuOf(main, command));
  }
  loads.push(loadavg()[0]);
}
console.log(
  `CPU seconds (user + sys) per process, medians of ${runs}, --no-opt; load average ${loads.map((l) => l.toFixed(1)).join(' → ')}`,
);
console.log('| command | before | after | after / before |');
console.log('|---|---|---|---|');
for (const [name, { after, before }] of seen) {
  console.log(
    `| ${name} | ${median(before).toFixed(2)} | ${median(after).toFixed(2)} | ${(median(after) / median(before)).toFixed(2)} |`,
  );
}
rmSync(dir, { recursive: true, force: true });
