#!/usr/bin/env node
/**
 * `netform migrate firezone-1x` at fleet scale, on the 10,000-user dataset of bench/scale-data.mjs
 * (10,000 users, 20,000 devices, 30,000 rules): the compiler alone on the access model (this
 * build), and the whole command on the desired state (-f, one YAML file), each run in its own
 * process under /usr/bin/time: wall time, CPU time (user + system), peak RSS, the command's phases,
 * the object counts, the output's sizes and a digest of main.tf.json.
 *
 *   npm run build && node bench/migrate.mjs [--users N] [--rounds R] [--baseline DIST] [--skip-library] [--skip-cli]
 *
 * `--users N` scales the fleet's shape: N users, 2N devices, 3N rules. `--baseline DIST` (another
 * build's `dist` folder, e.g. main's) runs that build's command too, in the same rounds, the order
 * of the two builds alternating from round to round; it prints the medians, the ratios and whether
 * main.tf.json and the counts are byte-identical (exit 1 if not), and whether report.md is. The target (W4.14): ≤ 10 s on
 * the bench fleet. About 20 s of CPU a round for both builds at 10,000 users.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { compileMigration, documentText, terraformDocument } from '../dist/src/migrate/index.js';
import { argValue, model, desiredYaml, median } from './scale-data.mjs';

const userCount = Number(argValue('--users', '10000'));
const rounds = Number(argValue('--rounds', '3'));
const baselineDist = argValue('--baseline', null);
const skip = (name) => process.argv.includes(name);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const sha = (text) => createHash('sha256').update(text).digest('hex').slice(0, 16);
const m = model({ users: userCount, devices: 2 * userCount, rules: 3 * userCount });
console.log(`fleet: ${m.users.length} users, ${2 * userCount} devices, ${3 * userCount} rules; load average ${load()}`);

if (!skip('--skip-library')) {
  const users = new Map();
  for (const u of m.users)
    users.set(u.email, {
      key: u.email,
      email: u.email,
      devices: u.devices.map((d) => ({ name: d.name, ipv4: d.ipv4, ipv6: d.ipv6 })),
    });
  const accessModel = {
    users,
    rules: m.rules.map((r) => ({
      owner: r.user ? r.user.email : null,
      action: r.action,
      destination: r.destination,
      port_type: r.port_type,
      port_range: r.port_range,
    })),
    settings: { portRules: true, serverAddresses: ['10.3.2.1', 'fd00::3:2:1'] },
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  const migration = compileMigration({
    model: accessModel,
    options: { prefer: 'narrower', assumeFilterRouting: false },
  });
  const ms = performance.now() - started;
  const cpuUsed = process.cpuUsage(cpu);
  const verdicts = { equal: 0, narrower: 0, wider: 0 };
  for (const u of migration.users) verdicts[u.verdict]++;
  console.log(
    `library (this build): ${Math.round(ms)} ms wall, ${Math.round((cpuUsed.user + cpuUsed.system) / 1000)} ms CPU; ${migration.actors.length} actors, ${migration.groups.length} groups, ${migration.memberships.length} memberships, ${migration.resources.length} resources, ${migration.policies.length} policies; users ${JSON.stringify(verdicts)}`,
  );
  // The output's fingerprint: the same for the same fleet whatever the build (compare before and after a change).
  const digest = createHash('sha256')
    .update(documentText(terraformDocument(migration, 'netform')))
    .update(JSON.stringify(migration.users))
    .digest('hex')
    .slice(0, 16);
  console.log(`digest of main.tf.json and the per-user results: ${digest}`);
}

/** One run of a build's CLI under /usr/bin/time: wall, CPU and peak RSS of the process, its phases, counts and output. */
function runMigrate(cli, file, out) {
  const timeFile = `${out}.time`;
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(
      '/usr/bin/time',
      ['-o', timeFile, '-f', '%U %S %M', process.execPath, cli, 'migrate', 'firezone-1x', '-f', file, '-o', out],
      { env: { ...process.env, NO_COLOR: '1', NETFORM_TIMINGS: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', fail);
    child.on('close', (code) => {
      const wall = (performance.now() - started) / 1000;
      if (code !== 0) return fail(new Error(`${cli}: exit ${code}\n${stderr}`));
      const [user, sys, rssKb] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
      const timings = stderr.split('\n').find((l) => l.startsWith('netform-timings '));
      const size = (name) => statSync(join(out, name)).size;
      done({
        wall,
        cpu: user + sys,
        rssMb: Math.round(rssKb / 1024),
        phases: timings ? JSON.parse(timings.slice('netform-timings '.length)) : {},
        objects: (stdout.match(/^objects: .*$/m) ?? ['objects: ?'])[0],
        users: (stdout.match(/^users: .*$/m) ?? ['users: ?'])[0],
        digest: sha(readFileSync(join(out, 'main.tf.json'))),
        mdDigest: sha(readFileSync(join(out, 'report.md'))),
        sizes: {
          'main.tf.json': size('main.tf.json'),
          'report.md': size('report.md'),
          'report.json': size('report.json'),
        },
      });
    });
  });
}

if (!skip('--skip-cli')) {
  const here = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
  const builds = [{ name: 'this build', cli: here }];
  if (baselineDist) builds.push({ name: 'baseline', cli: join(resolve(baselineDist), 'src/cli/main.js') });
  const dir = mkdtempSync(join(tmpdir(), 'netform-bench-migrate-'));
  const runs = new Map(builds.map((b) => [b.name, []]));
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  try {
    const file = join(dir, 'fleet.yaml');
    writeFileSync(file, desiredYaml(m).text);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const b of order) {
        const before = load();
        const r = await runMigrate(b.cli, file, join(dir, `out-${round}-${b.name.replace(' ', '-')}`));
        runs.get(b.name).push(r);
        console.log(
          `round ${round + 1} ${b.name}: ${r.wall.toFixed(1)} s wall, ${r.cpu.toFixed(2)} s CPU, peak RSS ${r.rssMb} MB; phases ${JSON.stringify(r.phases)}; load ${before}`,
        );
        console.log(
          `  ${r.objects}; ${r.users}; main.tf.json ${r.digest}, report.md ${r.mdDigest}; ${Object.entries(r.sizes)
            .map(([k, v]) => `${k} ${mb(v)}`)
            .join(', ')}`,
        );
      }
    }
    const summary = {};
    for (const b of builds) {
      const list = runs.get(b.name);
      summary[b.name] = {
        wall: median(list.map((r) => r.wall)),
        cpu: median(list.map((r) => r.cpu)),
        rss: median(list.map((r) => r.rssMb)),
      };
      const s = summary[b.name];
      console.log(
        `${b.name}: median of ${list.length}: ${s.wall.toFixed(1)} s wall, ${s.cpu.toFixed(2)} s CPU, peak RSS ${s.rss} MB; ${list[0].objects}; target ≤ 10 s: ${s.cpu <= 10 ? 'met' : 'missed'} (CPU)`,
      );
    }
    if (baselineDist) {
      const a = summary['this build'];
      const b = summary.baseline;
      console.log(
        `this build / baseline: ${(a.wall / b.wall).toFixed(2)}× wall, ${(a.cpu / b.cpu).toFixed(2)}× CPU, ${(a.rss / b.rss).toFixed(2)}× peak RSS`,
      );
      const all = [...runs.values()].flat();
      const same = all.every(
        (r) => r.digest === all[0].digest && r.objects === all[0].objects && r.users === all[0].users,
      );
      console.log(`main.tf.json, counts and verdicts the same for both builds: ${same ? 'yes' : 'NO'}`);
      if (!same) process.exitCode = 1;
      const sameMd = all.every((r) => r.mdDigest === all[0].mdDigest);
      console.log(`report.md the same for both builds: ${sameMd ? 'yes' : 'no'}`);
    }
    console.log(`load average at the end: ${load()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
