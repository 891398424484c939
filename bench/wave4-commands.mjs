#!/usr/bin/env node
/**
 * The whole-fleet commands of wave 4 against their floors, every figure from one run, on the
 * 10,000-user fleet of bench/scale-data.mjs (10,000 users, 20,000 devices, 30,000 rules, seeded
 * through the Store, served by a real server in this process) and its desired state in which 1%
 * differs:
 *   - `check no-new-access --base REF -f FILE`, the files at the base (the server's export,
 *     committed in a throwaway git repository) against the 1%-changed file: ≤ 2× a `plan`;
 *   - `review -f FILE` with `expires:` on 2% of the per-user grants: ≤ 10 s;
 *   - `adopt --all-drift -f FILE` (the 1% difference is the drift it adopts, on a fresh copy of
 *     the file each round): ≤ 2× a `plan`;
 *   - `migrate firezone-1x -f FILE -o DIR`: ≤ 10 s, with the object counts of its report;
 *   - with `--before PATH` (the `main.js` of an older build, e.g. main before the command line
 *     became `run(argv, io)`), `plan`, `drift -f` and `validate` by that bin and by this one in
 *     turns: within 5% of each other. Both read `version: 1` files (every key of this wave is
 *     valid in version 1, and a build from before version 2 refuses `version: 2`): `plan` and
 *     `validate` the 1%-changed file, `drift -f` the server's export written as version 1 (no
 *     drift: exit 0). Both bins validate the files once before the timed rounds.
 * Every command must exit as expected (plan 2, check 1: the 1% adds grants, the others 0), or the
 * run stops with its stderr. Each command runs in turn with the others, RUNS rounds, medians
 * reported, so that the load of the shared machine falls on all alike. Wall time, CPU time
 * (user + system) and peak RSS of each process, from /usr/bin/time.
 *
 *   npm run build && node bench/wave4-commands.mjs [--runs N] [--before OLD/dist/src/cli/main.js]
 *     [--scale S]                 the fleet times S (0.1: 1,000 users, 2,000 devices, 3,000 rules)
 *     [--quick]                   --scale 0.1 --runs 1: the whole script end to end (2-3 min on a busy machine)
 *     [--after NEW/dist/src/cli/main.js]  the bin compared with --before (default: this build's)
 *     [--skip migrate,adopt,...]  commands left out, by their first word
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  runCli,
  seed,
  USERS,
} from './scale-data.mjs';

const QUICK = process.argv.includes('--quick');
const RUNS = Number(argValue('--runs', QUICK ? '1' : '3'));
const SCALE = Number(argValue('--scale', QUICK ? '0.1' : '1'));
const BEFORE = argValue('--before', '') && resolve(argValue('--before', ''));
/** The bin compared with --before: this build's, or another build's `main.js`. */
const AFTER = argValue('--after', '') ? resolve(argValue('--after', '')) : CLI;
/** A loaded machine answers 10,000-user lists slowly: wait, rather than fail the run. */
const SLOW = ['--timeout', '600'];
const SKIP = new Set(argValue('--skip', '').split(',').filter(Boolean));
if (!(SCALE > 0) || !(RUNS >= 1)) throw new Error('--scale must be above 0 and --runs at least 1');
for (const [flag, bin] of [
  ['--before', BEFORE],
  ['--after', AFTER],
])
  if (bin && !existsSync(bin)) throw new Error(`${flag} ${bin}: no such file (build that checkout first)`);

/** The floor (as bench/fleet.mjs): a fresh Node process that fetches the three lists and parses them. */
const FLOOR_SCRIPT = `
const headers = { authorization: 'Bearer ' + process.env.NETFORM_TOKEN };
const lists = await Promise.all(['users', 'devices', 'rules'].map(async (c) => JSON.parse(await (await fetch(process.env.NETFORM_URL + '/v0/' + c, { headers })).text())));
if (lists.some((l) => !Array.isArray(l.data))) process.exit(1);
`;

/** The per-user rule lines of the desired YAML get `expires:`, one in fifty, half of them past. */
function withExpiries(text) {
  let n = 0;
  return text.replace(/^( {6}- \{ action: accept, [^}]*)\}$/gm, (line, head) => {
    n++;
    if (n % 50 !== 0) return line;
    return `${head}, expires: "${n % 100 === 0 ? '2026-01-01T00:00:00Z' : '2030-01-01T00:00:00Z'}" }`;
  });
}

/** The same document as `version: 1`, which a build from before version 2 reads too. */
function asVersion1(text) {
  const out = text.replace(/^version: 2$/m, 'version: 1');
  if (!/^version: 1$/m.test(out)) throw new Error('the export has no `version:` line to write as 1');
  return out;
}

const git = (cwd, ...args) =>
  execFileSync('git', args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@x',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@x',
    },
  });

const load = () =>
  execFileSync('uptime')
    .toString()
    .trim()
    .replace(/^.*load average/, 'load average');
const startedAt = performance.now();
const loadBefore = load();
const dir = mkdtempSync(join(tmpdir(), 'netform-wave4-bench-'));
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
  const run = (nodeArgs, cwd) => measureProcess(nodeArgs, { env, cwd, dir });
  const desired = desiredYaml(m);
  if (!desired.text.startsWith('version: 1\n')) throw new Error('the bench fleet file must be version 1');
  const file = join(dir, 'netform.yaml');
  writeFileSync(file, desired.text);
  const expiring = join(dir, 'expiring.yaml');
  writeFileSync(expiring, withExpiries(desired.text));

  // The base of check --base: the server's export, committed; the head: the 1%-changed file.
  const repo = join(dir, 'repo');
  mkdirSync(repo);
  const exported = await runCli(['export'], env);
  if (exported.code !== 0) throw new Error(`export exited ${exported.code}:\n${exported.stderr}`);
  git(repo, 'init', '-q');
  writeFileSync(join(repo, 'netform.yaml'), exported.stdout);
  git(repo, 'add', 'netform.yaml');
  git(repo, 'commit', '-qm', 'base');
  writeFileSync(join(repo, 'netform.yaml'), desired.text);
  // drift -f reads the export as version 1, so that a bin from before version 2 reads it too.
  const exportDir = join(dir, 'export');
  mkdirSync(exportDir);
  writeFileSync(join(exportDir, 'netform.yaml'), asVersion1(exported.stdout));

  const bins = BEFORE
    ? [
        ['before', BEFORE],
        ['after', AFTER],
      ]
    : [];
  // Both bins read both files before anything is timed: a bin that cannot stops the run here.
  for (const [name, cli] of bins)
    for (const f of [file, exportDir])
      expectExit(await run([cli, 'validate', '-f', f]), [0], `validate -f ${f} by the ${name} bin (${cli})`);

  const rows = {};
  const add = (k, r) => (rows[k] ??= []).push(r);
  const commands = [
    ['floor', () => ['--input-type=module', '-e', FLOOR_SCRIPT], [0]],
    ['plan', () => [CLI, 'plan', '-f', file, ...SLOW], [2]],
    ['check --base', () => [CLI, 'check', 'no-new-access', '--base', 'HEAD', '-f', 'netform.yaml'], [1], repo],
    ['review (expiries)', () => [CLI, 'review', '-f', expiring, '-o', join(dir, 'review.md'), ...SLOW], [0]],
    [
      'adopt --all-drift',
      (i) => {
        const copy = join(dir, `adopt-${i}.yaml`);
        copyFileSync(file, copy);
        return [CLI, 'adopt', '--all-drift', '-f', copy, ...SLOW];
      },
      [0],
    ],
    ['migrate firezone-1x', (i) => [CLI, 'migrate', 'firezone-1x', '-f', file, '-o', join(dir, `migrated-${i}`)], [0]],
  ];
  for (const [name, cli] of bins)
    commands.push(
      [`plan (${name})`, () => [cli, 'plan', '-f', file, ...SLOW], [2]],
      [`drift -f (${name})`, () => [cli, 'drift', '-f', exportDir, ...SLOW], [0]],
      [`validate (${name})`, () => [cli, 'validate', '-f', file], [0]],
    );
  const outputs = {};
  /** The table of the rounds done so far: printed after every round, so that a stopped run still tells. */
  const report = (done) => {
    // What the commands said, so that a reader sees they did the work (first round).
    const lastLine = (k) => (k.startsWith('adopt') ? outputs[k]?.split('\n')[0] : outputs[k]?.split('\n').at(-1)) ?? '';
    if (outputs['review (expiries)'] === '') {
      const review = readFileSync(join(dir, 'review.md'), 'utf8');
      outputs['review (expiries)'] =
        `review.md: ${review.length} bytes, ${review.split('\n').length} lines; ${review.split('\n').find((l) => /expir/i.test(l)) ?? ''}`;
    }
    let migrateCounts = '';
    if (rows['migrate firezone-1x']) {
      const report = JSON.parse(readFileSync(join(dir, 'migrated-0', 'report.json'), 'utf8'));
      migrateCounts = JSON.stringify(report.objects).slice(0, 400);
    }

    const wall = (k) => median(rows[k].map((r) => r.wallMs));
    const cpu = (k) => median(rows[k].map((r) => r.cpuMs));
    const rss = (k) => median(rows[k].map((r) => r.rssMb));
    const runsOf = (k) => rows[k].map((r) => r.wallMs.toFixed(0)).join(' / ');
    const against = {
      plan: ['floor', null],
      'check --base': ['plan', 2],
      'review (expiries)': [null, 10_000],
      'adopt --all-drift': ['plan', 2],
      'migrate firezone-1x': [null, 10_000],
    };
    const lines = [
      `Fleet: ${counts.users.toLocaleString('en')} users, ${counts.devices.toLocaleString('en')} devices, ${counts.rules.toLocaleString('en')} rules (scale ${SCALE}); desired ${(desired.text.length / 1e6).toFixed(1)} MB, changes ${JSON.stringify(desired.changes)}. ${done} of ${RUNS} round(s), each command in turn; medians.`,
      `Load before the rounds: ${loadBefore}`,
      '',
      '| command | runs, wall (ms) | median wall | median CPU | peak RSS | against | ratio (wall) | target | |',
      '|---|---|---|---|---|---|---|---|---|',
    ];
    for (const k of Object.keys(rows)) {
      const [ref, bound] = against[k] ?? [null, null];
      let ratio = '';
      let verdict = '';
      let target = '';
      if (ref && rows[ref]) ratio = `${(wall(k) / wall(ref)).toFixed(2)}×`;
      if (ref && bound && rows[ref]) {
        target = `≤ ${bound}× ${ref}`;
        verdict = wall(k) <= bound * wall(ref) ? 'met' : '**missed**';
      } else if (bound) {
        target = `≤ ${bound / 1000} s`;
        verdict = wall(k) <= bound ? 'met' : '**missed**';
      }
      lines.push(
        `| ${k} | ${runsOf(k)} | ${wall(k).toFixed(0)} ms | ${cpu(k).toFixed(0)} ms | ${rss(k).toFixed(0)} MB | ${ref ?? ''} | ${ratio} | ${target} | ${verdict} |`,
      );
    }
    if (BEFORE)
      for (const c of ['plan', 'drift -f', 'validate']) {
        if (!rows[`${c} (after)`]) continue;
        const r = wall(`${c} (after)`) / wall(`${c} (before)`);
        const rc = cpu(`${c} (after)`) / cpu(`${c} (before)`);
        lines.push(
          `| ${c}: this bin against --before | | ${(r * 100).toFixed(0)}% wall | ${(rc * 100).toFixed(0)}% CPU | | before | ${r.toFixed(2)}× | ≤ 1.05× | ${r <= 1.05 ? 'met' : '**missed**'} |`,
        );
      }
    lines.push('', 'What each command printed last (first round; adopt: its first line):');
    for (const k of Object.keys(outputs)) if (k !== 'floor') lines.push(`- ${k}: \`${lastLine(k).slice(0, 200)}\``);
    if (migrateCounts) lines.push(`- migrate report.json counts: ${migrateCounts}`);
    lines.push(
      '',
      `Load after: ${load()}; the whole script took ${((performance.now() - startedAt) / 1000).toFixed(0)} s.`,
    );
    console.log(
      `${done < RUNS ? `\nAfter round ${done} of ${RUNS} (so far):` : `\nAll ${RUNS} round(s):`}\n${lines.join('\n')}`,
    );
  };
  for (let i = 0; i < RUNS; i++) {
    for (const [name, argsOf, codes, cwd] of commands) {
      if (SKIP.has(name.split(' ')[0])) continue;
      const r = expectExit(await run(argsOf(i), cwd), codes, `${name} (round ${i + 1})`);
      if (i === 0) outputs[name] = r.stdout().trim();
      add(name, r);
      process.stderr.write(`round ${i + 1}: ${name} ${r.wallMs.toFixed(0)} ms (exit ${r.code})\n`);
    }
    report(i + 1);
  }
} finally {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
}
