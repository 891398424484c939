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
 * times, so that the load of the shared machine falls on both alike. Raw follows the executor's
 * phases: users first, then devices and rules (which need the users' ids).
 *
 * Two comparisons: whole processes, start to exit (apply also reads the files, reads the empty
 * server, plans, prints, and checks every answer; raw reads a JSON file of the fleet), and the
 * writes alone (raw's POST loop as the child times it; apply's executor as the CLI reports it with
 * NETFORM_TIMINGS set, `netform-write-timings`). The fixed costs of a command weigh less the larger
 * the fleet: --users 2000 is closer to the issue's fleet than the quick default.
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
      const started = performance.now();
      const child = spawn(
        process.execPath,
        [fileURLToPath(import.meta.url), '--raw-child', server.url, token, fleetFile],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0
          ? resolve({ wallMs: performance.now() - started, writesMs: Number(out) })
          : reject(new Error(`raw client exited ${code}`)),
      );
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
    const line = r.stderr.split('\n').find((l) => l.startsWith('netform-write-timings '));
    return { wallMs: r.wallMs, writesMs: line ? JSON.parse(line.slice('netform-write-timings '.length)).writes : NaN };
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
  const runs = (xs, pick) => xs.map((x) => pick(x).toFixed(0)).join(' / ');
  const wall = { raw: median(raws.map((x) => x.wallMs)), apply: median(applies.map((x) => x.wallMs)) };
  const writes = { raw: median(raws.map((x) => x.writesMs)), apply: median(applies.map((x) => x.writesMs)) };
  const verdict = (ratio) => (ratio >= 0.9 ? 'met' : '**missed**');
  console.log(
    [
      `Fleet: ${m.users.length} users, ${m.devices.length} devices, ${m.rules.length} rules (${objects} creates), concurrency ${CONCURRENCY}, ${RUNS} runs in turns, fresh database each.`,
      '',
      '| | runs (ms) | median | creates/s |',
      '|---|---|---|---|',
      `| raw concurrent POSTs: whole process (fetch, users then devices and rules) | ${runs(raws, (x) => x.wallMs)} | ${wall.raw.toFixed(0)} ms | ${rate(wall.raw)} |`,
      `| \`netform apply -f --yes\` from empty: whole command (start, read files, read server, plan, writes, summary) | ${runs(applies, (x) => x.wallMs)} | ${wall.apply.toFixed(0)} ms | ${rate(wall.apply)} |`,
      `| raw: the POSTs alone | ${runs(raws, (x) => x.writesMs)} | ${writes.raw.toFixed(0)} ms | ${rate(writes.raw)} |`,
      `| apply: its writes alone (the executor, with progress and checks of every answer) | ${runs(applies, (x) => x.writesMs)} | ${writes.apply.toFixed(0)} ms | ${rate(writes.apply)} |`,
      '',
      `apply throughput, whole processes = ${((wall.raw / wall.apply) * 100).toFixed(0)}% of raw (target ≥ 90%: ${verdict(wall.raw / wall.apply)}); ` +
        `writes alone = ${((writes.raw / writes.apply) * 100).toFixed(0)}% of raw (${verdict(writes.raw / writes.apply)}).`,
    ].join('\n'),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
