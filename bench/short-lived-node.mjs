#!/usr/bin/env node
/**
 * What V8's optimizing compiler costs a `netform` process that lives a second or less: the
 * commands the safety-net table runs as processes (test/e2e/cli/safety-net.test.ts), each run
 * as is and with SHORT_LIVED_NODE's flags (test/helpers/cli.ts: `--no-opt`), taking turns command
 * by command (which goes first alternates from round to round) so that the load of a shared
 * machine falls on both alike. Medians of RUNS rounds: CPU (user + system of the process, from
 * bash's `time`) and wall time. The commands: --version; validate -f FILE; plan -f FILE against a
 * server in this process (bench/scale-data.mjs's fleet: 20 users, 40 devices, 60 rules); and
 * plan's error paths of the table: connection refused, --token-file /dev/zero.
 *
 *   npm run build && node bench/short-lived-node.mjs [--runs 5]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { argValue, desiredYaml, median, model, prepareDatabase, seed } from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '5'));
const MAIN = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
/** The flags test/helpers/cli.ts's SHORT_LIVED_NODE gives the table's processes. */
const SHORT_LIVED = ['--no-opt'];

const dir = mkdtempSync(join(tmpdir(), 'netform-short-lived-'));
const dbPath = join(dir, 'bench.db');
const file = join(dir, 'netform.yaml');
const errFile = join(dir, 'stderr.txt');
const token = await prepareDatabase(dbPath);
const fleet = model({ users: 20, devices: 40, rules: 60 });
await seed(dbPath, fleet);
writeFileSync(file, desiredYaml(fleet).text);
const { startServer } = await import('../dist/server/index.js');
const server = await startServer({ dbPath, port: 0, host: '127.0.0.1', logger: false });
const refused = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(`http://127.0.0.1:${port}`));
  });
});

/** Each command, the exit codes that are its expected end, and its environment over the base one. */
const COMMANDS = [
  { name: '--version', args: ['--version'], codes: [0] },
  { name: 'validate', args: ['validate', '-f', file], codes: [0] },
  { name: 'plan', args: ['plan', '-f', file], codes: [0, 2] },
  { name: 'plan × connection refused', args: ['plan', '-f', file], codes: [1], env: { NETFORM_URL: refused } },
  {
    name: 'plan × --token-file /dev/zero',
    args: ['plan', '-f', file, '--token-file', '/dev/zero'],
    codes: [1],
    env: { NETFORM_TOKEN: undefined },
  },
];
const baseEnv = {
  ...process.env,
  NETFORM_URL: server.url,
  NETFORM_TOKEN: token,
  NETFORM_RETRIES: '1',
  NETFORM_RETRY_DELAY_MS: '20',
  NO_COLOR: '1',
  NETFORM_BENCH_ERR: errFile,
};
delete baseEnv.NODE_OPTIONS;

/** One process from start to exit: its exit code, CPU (user + system) and wall time, in ms. */
function measure(nodeArgs, command) {
  const env = { ...baseEnv, ...command.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(
      'bash',
      [
        '-c',
        'TIMEFORMAT="%U %S"; time "$0" "$@" > /dev/null 2> "$NETFORM_BENCH_ERR"',
        process.execPath,
        ...nodeArgs,
        MAIN,
        ...command.args,
      ],
      { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', fail);
    child.on('close', (code) => {
      const [user, sys] = stderr.trim().split('\n').at(-1).split(' ').map(Number);
      done({ code, cpuMs: (user + sys) * 1000, wallMs: performance.now() - started });
    });
  });
}

const variants = [
  { name: 'as is', node: [] },
  { name: SHORT_LIVED.join(' '), node: SHORT_LIVED },
];
const results = new Map(COMMANDS.map((c) => [c.name, new Map(variants.map((v) => [v.name, []]))]));
const loads = [loadavg()[0]];
for (let round = 0; round < RUNS; round++) {
  for (const command of COMMANDS) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      const result = await measure(variant.node, command);
      if (!command.codes.includes(result.code))
        throw new Error(
          `${variant.name}: ${command.name} exited ${result.code}:\n${readFileSync(errFile, 'utf8').slice(-2000)}`,
        );
      results.get(command.name).get(variant.name).push(result);
    }
  }
  loads.push(loadavg()[0]);
}

const s = (x) => (x / 1000).toFixed(3);
console.log(
  `netform processes as is and with ${SHORT_LIVED.join(' ')}, ${RUNS} rounds, medians in seconds; load average ${loads.map((l) => l.toFixed(1)).join(' → ')}`,
);
console.log('| command | CPU as is | CPU flagged | CPU ratio | wall as is | wall flagged | wall ratio |');
console.log('|---|---|---|---|---|---|---|');
for (const command of COMMANDS) {
  const of = (variant) => {
    const runs = results.get(command.name).get(variant.name);
    return { cpu: median(runs.map((r) => r.cpuMs)), wall: median(runs.map((r) => r.wallMs)) };
  };
  const [plain, flagged] = variants.map(of);
  console.log(
    `| ${command.name} | ${s(plain.cpu)} | ${s(flagged.cpu)} | ${(flagged.cpu / plain.cpu).toFixed(2)} | ${s(plain.wall)} | ${s(flagged.wall)} | ${(flagged.wall / plain.wall).toFixed(2)} |`,
  );
}

await server.close();
rmSync(dir, { recursive: true, force: true });
