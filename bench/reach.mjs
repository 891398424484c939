#!/usr/bin/env node
/**
 * The reverse questions at fleet scale, on the 10,000-user dataset of bench/scale-data.mjs
 * (10,000 users, 20,000 devices, 30,000 rules):
 *   library: whoCanReach and reachOf (src/access) alone on the access model, for several targets
 *            and users;
 *   cli:     `netform who-can-reach` and `netform reach`, whole processes, offline on the desired
 *            state (-f, one YAML file) and --live against a real server on a seeded SQLite file.
 *
 *   npm run build && node bench/reach.mjs [--runs N] [--skip-cli]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseReachSource, parseReachTarget, reachOf, whoCanReach } from '../dist/src/access/index.js';
import {
  argValue,
  median,
  model,
  desiredYaml,
  prepareDatabase,
  seed,
  runCli,
  ruleHost,
  timingsOf,
} from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '3'));
const m = model();

// The access model as the CLI builds it from a live server (each rule with its owner's email).
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
    id: r.id,
  })),
  settings: { portRules: true, serverAddresses: ['10.3.2.1', 'fd00::3:2:1'] },
};

const TARGETS = [
  [`${ruleHost(1)}:${1 + (1 % 9000)}/tcp`, 'a packet to a rule host'],
  [ruleHost(3), 'a rule host, any protocol and port'],
  ['100.64.0.0/16', 'a /16 holding 9,363 rule hosts'],
  ['0.0.0.0/0', 'all of IPv4'],
];
const SOURCES = [
  ['user-2@bench.test', 'a user with 2 devices and own rules'],
  ['user-0@bench.test/*', 'any future device of a user'],
];

const rows = [];
/** Wall time and CPU time (user + system, all threads: GC included) of each run. */
const time = (fn) => {
  const times = [];
  const cpu = [];
  let out;
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    out = fn();
    const used = process.cpuUsage(cpuStarted);
    times.push(performance.now() - started);
    cpu.push((used.user + used.system) / 1000);
  }
  return { times, cpu, out };
};
const row = (name, { times, cpu }, shown) =>
  `| ${name} | ${times.map((t) => t.toFixed(0)).join(' / ')} | ${median(times).toFixed(0)} | ${median(cpu).toFixed(0)} | ${shown} |`;
for (const [text, what] of TARGETS) {
  const target = parseReachTarget(text).value;
  const timed = time(() => whoCanReach(accessModel, target));
  const { out } = timed;
  rows.push(
    row(
      `whoCanReach ${text} (${what})`,
      timed,
      `accepted ${out.accepted.users}, by default ${out.byDefault.users}, stopped ${out.stopped.users}`,
    ),
  );
}
for (const [text, what] of SOURCES) {
  const source = parseReachSource(text).value;
  const timed = time(() => reachOf(accessModel, source, 'live'));
  const f = timed.out.value.families[0];
  rows.push(
    row(`reachOf ${text} (${what})`, timed, `IPv4: ${f.reached.length} reached and ${f.blocked.length} blocked parts`),
  );
}
console.log(
  ['| library call | runs, wall (ms) | median | median CPU (ms) | result |', '|---|---|---|---|---|', ...rows].join(
    '\n',
  ),
);

if (!process.argv.includes('--skip-cli')) {
  const dir = mkdtempSync(join(tmpdir(), 'netform-bench-reach-'));
  try {
    const file = join(dir, 'netform.yaml');
    writeFileSync(file, desiredYaml(m).text);
    const dbPath = join(dir, 'vpn.db');
    const token = await prepareDatabase(dbPath);
    await seed(dbPath, m);
    const { startServer } = await import('../dist/server/index.js');
    const server = await startServer({ dbPath, host: '127.0.0.1', port: 0, logLevel: 'silent' });
    const env = { NETFORM_URL: server.url, NETFORM_TOKEN: token };
    const cli = [];
    for (const args of [
      ['who-can-reach', `${ruleHost(1)}:1/tcp`, '-f', file],
      ['who-can-reach', '100.64.0.0/16', '-f', file],
      ['reach', 'user-2@bench.test', '-f', file],
      ['who-can-reach', `${ruleHost(1)}:1/tcp`, '--live'],
      ['who-can-reach', '100.64.0.0/16', '--live'],
      ['reach', 'user-2@bench.test', '--live'],
    ]) {
      const times = [];
      const phases = [];
      let last;
      for (let run = 0; run < RUNS; run++) {
        last = await runCli(args, env);
        if (last.code !== 0) throw new Error(`netform ${args.join(' ')}: exit ${last.code}\n${last.stderr}`);
        times.push(last.wallMs);
        phases.push(timingsOf(last.stderr));
      }
      const phase = (name) => (phases[0][name] === undefined ? '-' : median(phases.map((p) => p[name])).toFixed(0));
      const shown = args.includes('-f') ? args.join(' ').replace(file, 'netform.yaml') : args.join(' ');
      cli.push(
        `| netform ${shown} | ${times.map((t) => t.toFixed(0)).join(' / ')} | ${median(times).toFixed(0)} | ${phase('load')} | ${phase('fetch')} | ${phase('evaluate')} | ${phase('render')} | ${last.stdout.split('\n').length - 1} lines |`,
      );
    }
    await server.close();
    console.log(
      [
        '',
        '| whole command, process start to exit (ms) | runs | median | load | fetch | evaluate | render | output |',
        '|---|---|---|---|---|---|---|---|',
        ...cli,
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
