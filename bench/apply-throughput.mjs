#!/usr/bin/env node
/**
 * Apply throughput from empty: `netform apply` creating a fleet on an empty server, against raw
 * concurrent POSTs of the same objects at the same concurrency (8, the executor's default) against
 * the same server build, both in one run (issue 13: apply ≥ 90% of raw).
 *
 *   npm run build && node bench/apply-throughput.mjs [--users N] [--runs N]
 *
 * Each measurement gets a fresh database served by a real `startServer` in this process (every
 * create is a durable `synchronous = FULL` commit); the raw client runs in its own Node process,
 * as the CLI does, so that neither shares the server's event loop. Raw and apply alternate, RUNS
 * times, so that the load of the shared machine falls on both alike. Raw follows the executor's phases: users
 * first, then devices and rules (which need the users' ids). `apply` is the whole command, process
 * start to exit (it also reads the files, reads the empty server, plans, and checks every answer).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { argValue, median, model, prepareDatabase, runCli } from './scale-data.mjs';

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

async function raw(dir, name, fleetFile) {
  const { server, token } = await fresh(dir, name);
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [fileURLToPath(import.meta.url), '--raw-child', server.url, token, fleetFile],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`raw client exited ${code}`))));
    });
  } finally {
    await server.close();
  }
}

async function apply(dir, name, file) {
  const { server, token } = await fresh(dir, name);
  try {
    const r = await runCli(['apply', '-f', file, '--yes'], {
      NETFORM_URL: server.url,
      NETFORM_TOKEN: token,
      NETFORM_TOKEN_USER: 'admin@example.com',
    });
    if (r.code !== 0) throw new Error(`apply exited ${r.code}:\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}`);
    return r.wallMs;
  } finally {
    await server.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'netform-apply-bench-'));
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
  const raws = [];
  const applies = [];
  for (let i = 0; i < RUNS; i++) {
    raws.push(await raw(dir, `raw-${i}`, fleetFile));
    applies.push(await apply(dir, `apply-${i}`, file));
  }
  const rate = (ms) => (objects / (ms / 1000)).toFixed(0);
  const r = median(raws);
  const a = median(applies);
  console.log(
    [
      `Fleet: ${m.users.length} users, ${m.devices.length} devices, ${m.rules.length} rules (${objects} creates), concurrency ${CONCURRENCY}, ${RUNS} runs in turns, fresh database each.`,
      '',
      '| | runs (ms) | median | creates/s |',
      '|---|---|---|---|',
      `| raw concurrent POSTs (fetch in its own process, users then devices and rules) | ${raws.map((x) => x.toFixed(0)).join(' / ')} | ${r.toFixed(0)} ms | ${rate(r)} |`,
      `| \`netform apply -f --yes\` from empty, whole command | ${applies.map((x) => x.toFixed(0)).join(' / ')} | ${a.toFixed(0)} ms | ${rate(a)} |`,
      '',
      `apply throughput = ${((r / a) * 100).toFixed(0)}% of raw (target ≥ 90%: ${r / a >= 0.9 ? 'met' : '**missed**'}).`,
    ].join('\n'),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
