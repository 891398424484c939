#!/usr/bin/env node
/**
 * Drift run: how long one drift check takes against the 10,000-user benchmark server (10,000
 * users, 20,000 devices, 30,000 rules: the dataset of bench/plan-scale.mjs), measured as users
 * run it:
 *   - `netform export -o DIR` of that server (the adoption step), once;
 *   - `netform drift -f DIR` once, on the exported files (clean, exit 0), as a process: wall time
 *     and its phases (NETFORM_TIMINGS);
 *   - `netform drift --every` scheduled: the `duration_ms` of its runs (no process start);
 *   - `netform drift -f DIR` once more after 1% of the objects were changed by hand through the
 *     API (exit 2).
 *
 *   npm run build && node bench/drift-run.mjs [--runs N]
 *
 * Seeding goes straight through the server's Store in one transaction, as bench/plan-scale.mjs
 * does, with the same shapes (that script runs on import, so its seeding cannot be imported).
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { issueToken, setServerDefault, startServer } from '../dist/server/index.js';
import { openStore } from '../dist/server/store/index.js';
import { formatAddress } from '../dist/src/model/index.js';

const USERS = 10_000;
const DEVICES = 20_000;
const RULES = 30_000;
const CLI = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
const runsIndex = process.argv.indexOf('--runs');
const RUNS = runsIndex === -1 ? 3 : Number(process.argv[runsIndex + 1]);

const key = () => randomBytes(32).toString('base64');

/** The dataset of bench/plan-scale.mjs: every user unprivileged, devices on defaults, /32 rule destinations. */
async function seed(dbPath) {
  const store = await openStore(dbPath);
  const now = new Date().toISOString().replace('Z', '000Z');
  const users = [];
  const devices = [];
  const rules = [];
  await store.transaction(async (tx) => {
    for (let i = 0; i < USERS; i++) {
      const user = { id: randomUUID(), email: `user-${i}@bench.test` };
      users.push(user);
      await tx.insertUser({ id: user.id, email: user.email, role: 'unprivileged', password_hash: null, last_signed_in_at: null, last_signed_in_method: null, disabled_at: null, inserted_at: now, updated_at: now });
    }
    for (let i = 0; i < DEVICES; i++) {
      const id = randomUUID();
      devices.push(id);
      await tx.insertDevice({
        id, user_id: users[i % USERS].id, name: `device-${i}`, description: null, public_key: key(), preshared_key: key(),
        ipv4: formatAddress(4, 0x0a000002n + BigInt(i)), ipv6: formatAddress(6, 0xfd000000000000000000000000000002n + BigInt(i)),
        allowed_ips: null, dns: null, endpoint: null, mtu: null, persistent_keepalive: null,
        use_default_allowed_ips: true, use_default_dns: true, use_default_endpoint: true, use_default_mtu: true, use_default_persistent_keepalive: true,
        remote_ip: null, latest_handshake: null, rx_bytes: null, tx_bytes: null, inserted_at: now, updated_at: now,
      });
    }
    for (let i = 0; i < RULES; i++) {
      const low = 1 + (i % 9000);
      const ported = i % 3 !== 0;
      const id = randomUUID();
      rules.push(id);
      await tx.insertRule({
        id, action: i % 2 === 0 ? 'accept' : 'drop', destination: formatAddress(4, 0x64400000n + BigInt(i * 7)),
        port_type: ported ? (i % 3 === 1 ? 'tcp' : 'udp') : null, port_range: ported ? `${low} - ${low + 100}` : null,
        user_id: i % 3 === 0 ? null : users[i % USERS].id, inserted_at: now, updated_at: now,
      });
    }
  });
  await store.close();
  return { users, devices, rules };
}

function runCli(args, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env, NO_COLOR: '1', NETFORM_TIMINGS: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, wallMs: performance.now() - started }));
  });
}

function timingsOf(stderr) {
  const line = stderr.split('\n').find((l) => l.startsWith('netform-timings '));
  return line ? JSON.parse(line.slice('netform-timings '.length)) : {};
}

/** `drift --every` until `count` reports have come, then SIGTERM; returns the reports. */
function scheduledRuns(args, env, count) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'drift', ...args], { env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const reports = [];
    let buffer = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf('\n')) !== -1) {
        reports.push(JSON.parse(buffer.slice(0, newline)));
        buffer = buffer.slice(newline + 1);
        if (reports.length === count) child.kill('SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(reports) : reject(new Error(`drift --every exited ${code}:\n${stderr}`))));
  });
}

async function api(url, token, method, path, body) {
  const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => (x === undefined ? '–' : x.toFixed(0));

const dir = mkdtempSync(join(tmpdir(), 'netform-drift-bench-'));
try {
  const dbPath = join(dir, 'netform.db');
  const { token } = await issueToken({ dbPath, email: 'admin@example.com' });
  await setServerDefault({ dbPath, key: 'ipv4_network', value: '10.0.0.0/16' });
  await setServerDefault({ dbPath, key: 'ipv6_network', value: 'fd00::/112' });
  await setServerDefault({ dbPath, key: 'max_devices_per_user', value: '1000000' });
  let t = performance.now();
  const seeded = await seed(dbPath);
  const seedSeconds = (performance.now() - t) / 1000;

  const server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const env = { NETFORM_URL: server.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' };
  const lines = [];
  try {
    const desired = join(dir, 'desired');
    const exported = await runCli(['export', '-o', desired], env);
    if (exported.code !== 0) throw new Error(`export exited ${exported.code}:\n${exported.stderr}`);
    const exportedSplit = await runCli(['export', '-o', join(dir, 'desired-split'), '--split'], env);
    if (exportedSplit.code !== 0) throw new Error(`export --split exited ${exportedSplit.code}:\n${exportedSplit.stderr}`);
    const explicit = join(dir, 'desired-explicit');
    const exportedExplicit = await runCli(['export', '-o', explicit, '--explicit-defaults'], env);
    if (exportedExplicit.code !== 0) throw new Error(`export --explicit-defaults exited ${exportedExplicit.code}:\n${exportedExplicit.stderr}`);

    const clean = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await runCli(['drift', '-f', desired], env);
      if (r.code !== 0) throw new Error(`drift on the export exited ${r.code} (expected 0):\n${r.stderr}\n${r.stdout.slice(-2000)}`);
      clean.push({ wallMs: r.wallMs, ...timingsOf(r.stderr) });
    }
    const splitRun = await runCli(['drift', '-f', join(dir, 'desired-split')], env);
    if (splitRun.code !== 0) throw new Error(`drift on the split export exited ${splitRun.code}:\n${splitRun.stderr}`);

    const scheduled = await scheduledRuns(['-f', desired, '--every', '*/2 * * * * *', '--run-at-start'], env, RUNS + 1);

    // 1% of the objects changed by hand: 100 promotions, 200 device MTUs, 100 rules deleted, 200 new users.
    t = performance.now();
    for (let i = 0; i < 100; i++) await api(server.url, token, 'PATCH', `/v0/users/${seeded.users[i * 100].id}`, { user: { role: 'admin' } });
    for (let i = 0; i < 200; i++) await api(server.url, token, 'PATCH', `/v0/devices/${seeded.devices[i * 100]}`, { device: { use_default_mtu: false, mtu: 1380 } });
    for (let i = 0; i < 100; i++) await api(server.url, token, 'DELETE', `/v0/rules/${seeded.rules[i * 300]}`);
    for (let i = 0; i < 200; i++) await api(server.url, token, 'POST', '/v0/users', { user: { email: `hand-made-${i}@bench.test` } });
    const handSeconds = (performance.now() - t) / 1000;
    const driftedRuns = async (files) => {
      const runs = [];
      let summary = '';
      for (let i = 0; i < RUNS; i++) {
        const r = await runCli(['drift', '-f', files], env);
        if (r.code !== 2) throw new Error(`drift after hand changes exited ${r.code} (expected 2):\n${r.stderr}`);
        runs.push({ wallMs: r.wallMs, ...timingsOf(r.stderr) });
        summary = r.stdout.trim().split('\n').at(-1);
      }
      return { runs, summary };
    };
    const drifted = await driftedRuns(desired);
    const driftedExplicit = await driftedRuns(explicit);

    const row = (name, runs, pick) => `| ${name} | ${runs.map((r) => ms(pick(r))).join(' / ')} | ${ms(median(runs.map(pick)))} |`;
    lines.push(
      `Server: ${USERS.toLocaleString('en')} users, ${DEVICES.toLocaleString('en')} devices, ${RULES.toLocaleString('en')} rules (seeded through the Store in ${seedSeconds.toFixed(1)} s), real HTTP on loopback; the CLI in its own process.`,
      `Export: \`netform export -o DIR\` ${(exported.wallMs / 1000).toFixed(1)} s (one file), \`--split\` ${(exportedSplit.wallMs / 1000).toFixed(1)} s (${USERS + 2} files), \`--explicit-defaults\` ${(exportedExplicit.wallMs / 1000).toFixed(1)} s; \`drift\` on the split export: exit ${splitRun.code} in ${(splitRun.wallMs / 1000).toFixed(1)} s.`,
      '',
      '| one drift run (ms) | runs | median |',
      '|---|---|---|',
      row('`drift -f` once, clean (exit 0): whole process', clean, (r) => r.wallMs),
      row('… load the exported YAML', clean, (r) => r.load),
      row('… fetch (3 list calls)', clean, (r) => r.fetch),
      row('… diff (planChanges)', clean, (r) => r.diff),
      row('`drift --every`, clean: `duration_ms` of a scheduled run', scheduled.slice(1), (r) => r.duration_ms),
      row('`drift -f` once after 1% hand changes (exit 2): whole process', drifted.runs, (r) => r.wallMs),
      row('… same, on the `--explicit-defaults` export', driftedExplicit.runs, (r) => r.wallMs),
      row('peak RSS of the drift process (MB), clean', clean, (r) => r.rss_peak_mb),
      '',
      `Hand changes (${handSeconds.toFixed(1)} s through the API): 100 promotions to admin, 200 device MTUs, 100 rules deleted, 200 users created.`,
      `Drift on the default export: \`${drifted.summary}\` (only the deleted rules: the roles and MTUs were at their defaults, so left out and unmanaged; the new users are not declared and prune is off).`,
      `Drift on the \`--explicit-defaults\` export: \`${driftedExplicit.summary}\`.`,
    );
  } finally {
    await server.close();
  }
  console.log(lines.join('\n'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
