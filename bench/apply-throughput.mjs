#!/usr/bin/env node
/**
 * Apply throughput from empty: `netform apply` creating a fleet on an empty server, against raw
 * concurrent POSTs of the same objects at the same concurrency (8, the executor's default) against
 * the same server build, both in one run (issue 13: apply ≥ 90% of raw).
 *
 *   npm run build && node bench/apply-throughput.mjs [--users N] [--runs N] [--baseline DIST] [--no-busy]
 *
 * Each measurement gets a fresh database served by a real `startServer` in this process (every
 * create is a durable `synchronous = FULL` commit); the raw client runs in its own Node process,
 * as the CLI does, so that neither shares the server's event loop. Raw and apply alternate, RUNS
 * times, so that the load of the shared machine falls on both alike. Raw follows the executor's
 * phases: users first, then devices and rules (which need the users' ids).
 *
 * Two comparisons: whole processes, start to exit (apply also reads the files, reads the empty
 * server, plans, prints, and checks every answer; raw reads a JSON file of the fleet), and the
 * writes alone (raw's POST loop as the child times it; apply's executor as the CLI reports it with
 * NETFORM_TIMINGS set, `netform-write-timings`). The fixed costs of a command weigh less the larger
 * the fleet: --users 2000 is closer to the issue's fleet than the quick default.
 *
 * Quiet and busy (W3.9): every run measures both sides once on a quiet machine and once while
 * `os.cpus().length - 1` busy-loop processes run (started before the busy raw run and stopped after
 * the busy apply run, so both sides of the busy ratio share them). Every client process (raw and
 * apply) also reports its own CPU time (user + system) and its event loop's delay (p50/p99, from
 * perf_hooks.monitorEventLoopDelay), and the server (in this process) its CPU time, so that a
 * difference can be placed on the client or on the server. --baseline DIST: apply also runs the
 * CLI of another build (its `dist/`), against this build's server, in the same turns.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { argValue, CLI, median, model, prepareDatabase } from './scale-data.mjs';

const CONCURRENCY = 8;

/** Child: raw POSTs of the fleet in `file` (JSON) to URL; prints the milliseconds it took. */
if (process.argv[2] === '--raw-child') {
  const [, , , url, token, file] = process.argv;
  const fleet = JSON.parse(readFileSync(file, 'utf8'));
  const started = performance.now();
  const ids = new Map();
  await pool(
    fleet.users.map(
      (u) => async () => ids.set(u.email, (await post(url, token, 'users', { user: { email: u.email } })).id),
    ),
  );
  await pool([
    ...fleet.devices.map(
      (d) => async () =>
        post(url, token, 'devices', { device: { user_id: ids.get(d.user), name: d.name, public_key: d.public_key } }),
    ),
    ...fleet.rules.map(
      (r) => async () =>
        post(url, token, 'rules', { rule: { ...r.fields, ...(r.user ? { user_id: ids.get(r.user) } : {}) } }),
    ),
  ]);
  process.stdout.write(String(performance.now() - started));
  process.exit(0);
}

const USERS = Number(argValue('--users', '500'));
const RUNS = Number(argValue('--runs', '2'));
const BASELINE = argValue('--baseline', undefined);
const BUSY = !process.argv.includes('--no-busy');

/**
 * Preloaded into every client process (--import): at exit, its CPU time and event-loop delay on
 * stderr as `netform-bench-client {...}`.
 */
const PRELOAD = `
import { monitorEventLoopDelay } from 'node:perf_hooks';
const h = monitorEventLoopDelay({ resolution: 10 });
h.enable();
process.on('exit', () => {
  const c = process.cpuUsage();
  process.stderr.write('netform-bench-client ' + JSON.stringify({ cpuMs: (c.user + c.system) / 1000, loopP50: h.percentile(50) / 1e6, loopP99: h.percentile(99) / 1e6, loopMax: h.max / 1e6 }) + '\\n');
});
`;

/** Starts `os.cpus().length - 1` busy-loop processes; returns a function that stops them. */
function startBusy() {
  const children = Array.from({ length: Math.max(1, cpus().length - 1) }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  return () =>
    Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : (c.once('exit', r), c.kill())))));
}

/** A client process: node ARGS with the preload; its stderr's `netform-bench-client` line parsed. */
function runClient(args, env = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', preloadFile, ...args], {
      env: { ...process.env, ...env, NO_COLOR: '1', NETFORM_TIMINGS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stderr.split('\n').find((l) => l.startsWith('netform-bench-client '));
      const client = line ? JSON.parse(line.slice('netform-bench-client '.length)) : {};
      resolve({ code, stdout, stderr, wallMs: performance.now() - started, client });
    });
  });
}

const m = model({ users: USERS, devices: 2 * USERS, rules: 3 * USERS });
const objects = m.users.length + m.devices.length + m.rules.length;

const ruleFields = (r) => ({
  action: r.action,
  destination: r.destination,
  ...(r.port_type ? { port_type: r.port_type, port_range: r.port_range } : {}),
});

function desiredYaml() {
  const out = ['version: 1', 'users:'];
  for (const u of m.users) {
    out.push(`  - email: ${u.email}`);
    if (u.devices.length)
      out.push('    devices:', ...u.devices.map((d) => `      - { name: ${d.name}, public_key: "${d.public_key}" }`));
    if (u.rules.length) out.push('    rules:', ...u.rules.map((r) => `      - ${JSON.stringify(ruleFields(r))}`));
  }
  out.push('rules:', ...m.globalRules.map((r) => `  - ${JSON.stringify(ruleFields(r))}`));
  return `${out.join('\n')}\n`;
}

/** Runs `tasks` with at most CONCURRENCY at once. */
async function pool(tasks) {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function post(url, token, collection, body) {
  const response = await fetch(`${url}/v0/${collection}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`POST ${collection}: ${response.status} ${await response.text()}`);
  return (await response.json()).data;
}

async function fresh(dir, name) {
  const { startServer } = await import('../dist/server/index.js');
  const dbPath = join(dir, `${name}.db`);
  const token = await prepareDatabase(dbPath);
  const server = await startServer({ dbPath, port: 0, host: '127.0.0.1', logger: false });
  return { server, token };
}

/** The server's CPU time (this process) over `work`, in ms, beside work's own result. */
async function serverCpu(work) {
  const before = process.cpuUsage();
  const result = await work();
  const c = process.cpuUsage(before);
  return { ...result, serverCpuMs: (c.user + c.system) / 1000 };
}

async function raw(dir, name, fleetFile) {
  const { server, token } = await fresh(dir, name);
  try {
    const r = await serverCpu(() =>
      runClient([fileURLToPath(import.meta.url), '--raw-child', server.url, token, fleetFile]),
    );
    if (r.code !== 0) throw new Error(`raw client exited ${r.code}:\n${r.stderr.slice(-3000)}`);
    return { wallMs: r.wallMs, writesMs: Number(r.stdout), client: r.client, serverCpuMs: r.serverCpuMs };
  } finally {
    await server.close();
  }
}

async function apply(dir, name, file, cli = CLI) {
  const { server, token } = await fresh(dir, name);
  try {
    const r = await serverCpu(() =>
      runClient([cli, 'apply', '-f', file, '--yes'], {
        NETFORM_URL: server.url,
        NETFORM_TOKEN: token,
        NETFORM_TOKEN_USER: 'admin@example.com',
      }),
    );
    if (r.code !== 0) throw new Error(`apply exited ${r.code}:\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}`);
    const line = r.stderr.split('\n').find((l) => l.startsWith('netform-write-timings '));
    return {
      wallMs: r.wallMs,
      writesMs: line ? JSON.parse(line.slice('netform-write-timings '.length)).writes : NaN,
      client: r.client,
      serverCpuMs: r.serverCpuMs,
    };
  } finally {
    await server.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'netform-apply-bench-'));
const preloadFile = join(dir, 'preload.mjs');
writeFileSync(preloadFile, PRELOAD);
try {
  const file = join(dir, 'fleet.yaml');
  writeFileSync(file, desiredYaml());
  const fleetFile = join(dir, 'fleet.json');
  writeFileSync(
    fleetFile,
    JSON.stringify({
      users: m.users.map((u) => ({ email: u.email })),
      devices: m.devices.map((d) => ({ user: d.user.email, name: d.name, public_key: d.public_key })),
      rules: m.rules.map((r) => ({ user: r.user?.email, fields: ruleFields(r) })),
    }),
  );
  const sides = [
    {
      name: 'raw',
      label: 'raw concurrent POSTs (fetch, users then devices and rules)',
      run: (n) => raw(dir, n, fleetFile),
    },
    { name: 'apply', label: '`netform apply -f --yes` from empty (this build)', run: (n) => apply(dir, n, file) },
    ...(BASELINE
      ? [
          {
            name: 'apply-baseline',
            label: `\`netform apply -f --yes\` from empty (${BASELINE})`,
            run: (n) => apply(dir, n, file, join(BASELINE, 'src/cli/main.js')),
          },
        ]
      : []),
  ];
  const conditions = BUSY ? ['quiet', 'busy'] : ['quiet'];
  const results = new Map();
  const loads = [];
  for (let i = 0; i < RUNS; i++) {
    for (const condition of conditions) {
      const stop = condition === 'busy' ? startBusy() : null;
      try {
        for (const side of sides) {
          const r = await side.run(`${side.name}-${condition}-${i}`);
          const k = `${condition}|${side.name}`;
          results.set(k, [...(results.get(k) ?? []), r]);
          process.stderr.write(
            `run ${i + 1} ${condition} ${side.name}: ${r.wallMs.toFixed(0)} ms (writes ${r.writesMs.toFixed(0)}), client CPU ${r.client.cpuMs?.toFixed(0)} ms, server CPU ${r.serverCpuMs.toFixed(0)} ms, loop p99 ${r.client.loopP99?.toFixed(1)} ms\n`,
          );
        }
      } finally {
        loads.push(loadavg()[0]);
        if (stop) await stop();
      }
    }
  }
  const rate = (ms) => (objects / (ms / 1000)).toFixed(0);
  const verdict = (ratio) => (ratio >= 0.9 ? 'met' : '**missed**');
  const out = [
    `Fleet: ${m.users.length} users, ${m.devices.length} devices, ${m.rules.length} rules (${objects} creates), concurrency ${CONCURRENCY}, ${RUNS} runs in turns, fresh database each; busy: ${Math.max(1, cpus().length - 1)} busy-loop processes on ${cpus().length} CPUs; 1-min load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}.`,
  ];
  for (const condition of conditions) {
    out.push(
      '',
      `**${condition}**`,
      '',
      '| | whole process, runs (ms) | median | creates/s | writes alone (median ms) | client CPU ms (median) | server CPU ms (median) | client event-loop delay p50 / p99 ms (median) |',
      '|---|---|---|---|---|---|---|---|',
    );
    const rawWall = median(results.get(`${condition}|raw`).map((x) => x.wallMs));
    const rawWrites = median(results.get(`${condition}|raw`).map((x) => x.writesMs));
    const verdicts = [];
    for (const side of sides) {
      const rs = results.get(`${condition}|${side.name}`);
      const wall = median(rs.map((x) => x.wallMs));
      const writes = median(rs.map((x) => x.writesMs));
      out.push(
        `| ${side.label} | ${rs.map((x) => x.wallMs.toFixed(0)).join(' / ')} | ${wall.toFixed(0)} ms | ${rate(wall)} | ${writes.toFixed(0)} | ${median(rs.map((x) => x.client.cpuMs)).toFixed(0)} | ${median(rs.map((x) => x.serverCpuMs)).toFixed(0)} | ${median(rs.map((x) => x.client.loopP50)).toFixed(1)} / ${median(rs.map((x) => x.client.loopP99)).toFixed(1)} |`,
      );
      if (side.name !== 'raw')
        verdicts.push(
          `${side.name}: whole processes = ${((rawWall / wall) * 100).toFixed(0)}% of raw (target ≥ 90%: ${verdict(rawWall / wall)}); writes alone = ${((rawWrites / writes) * 100).toFixed(0)}% of raw`,
        );
    }
    out.push('', ...verdicts.map((v) => `${condition}, ${v}.`));
  }
  console.log(out.join('\n'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
