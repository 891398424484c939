#!/usr/bin/env node
/**
 * Plan scale: how long `netform plan` takes, and how much memory it needs, for a server holding
 * 10,000 users, 20,000 devices and 30,000 rules, with a desired state in which 1% of the objects
 * differ (600 changes: 100 role updates, 200 device updates, 100 device creates, 100 device
 * deletions, 50 rule creates, 50 rule deletions).
 *
 *   npm run build && node bench/plan-scale.mjs [--runs N]
 *
 * Seeding goes straight through the server's Store in one transaction (through the API it would
 * take 60,000 fsyncs); `plan` is measured as users run it: the real CLI in its own process,
 * reading the live state over HTTP from a real server on the seeded file. The CLI reports its
 * phases (load the files, fetch, diff, render) and its peak RSS with NETFORM_TIMINGS=1.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

/** The seeded objects, kept to write the desired state from. */
function model() {
  const users = [];
  for (let i = 0; i < USERS; i++) users.push({ id: randomUUID(), email: `user-${i}@bench.test`, role: 'unprivileged', devices: [], rules: [] });
  const devices = [];
  for (let i = 0; i < DEVICES; i++) {
    const device = { id: randomUUID(), user: users[i % USERS], name: `device-${i}`, public_key: key(), ipv4: formatAddress(4, 0x0a000002n + BigInt(i)), ipv6: formatAddress(6, 0xfd000000000000000000000000000002n + BigInt(i)) };
    device.user.devices.push(device);
    devices.push(device);
  }
  const globalRules = [];
  const rules = [];
  for (let i = 0; i < RULES; i++) {
    const low = 1 + (i % 9000);
    const ported = i % 3 !== 0;
    const rule = {
      id: randomUUID(), action: i % 2 === 0 ? 'accept' : 'drop', destination: formatAddress(4, 0x64400000n + BigInt(i * 7)),
      port_type: ported ? (i % 3 === 1 ? 'tcp' : 'udp') : null, port_range: ported ? `${low} - ${low + 100}` : null,
      user: i % 3 === 0 ? null : users[i % USERS],
    };
    if (rule.user) rule.user.rules.push(rule);
    else globalRules.push(rule);
    rules.push(rule);
  }
  return { users, devices, rules, globalRules };
}

async function seed(dbPath, m) {
  const store = await openStore(dbPath);
  const now = new Date().toISOString().replace('Z', '000Z');
  await store.transaction(async (tx) => {
    for (const u of m.users) {
      await tx.insertUser({ id: u.id, email: u.email, role: u.role, password_hash: null, last_signed_in_at: null, last_signed_in_method: null, disabled_at: null, inserted_at: now, updated_at: now });
    }
    for (const d of m.devices) {
      await tx.insertDevice({
        id: d.id, user_id: d.user.id, name: d.name, description: null, public_key: d.public_key, preshared_key: key(), ipv4: d.ipv4, ipv6: d.ipv6,
        allowed_ips: null, dns: null, endpoint: null, mtu: null, persistent_keepalive: null,
        use_default_allowed_ips: true, use_default_dns: true, use_default_endpoint: true, use_default_mtu: true, use_default_persistent_keepalive: true,
        remote_ip: null, latest_handshake: null, rx_bytes: null, tx_bytes: null, inserted_at: now, updated_at: now,
      });
    }
    for (const r of m.rules) {
      await tx.insertRule({ id: r.id, action: r.action, destination: r.destination, port_type: r.port_type, port_range: r.port_range, user_id: r.user?.id ?? null, inserted_at: now, updated_at: now });
    }
  });
  await store.close();
}

const ruleYaml = (r) => `{ action: ${r.action}, destination: ${r.destination}${r.port_type ? `, port_type: ${r.port_type}, port_range: "${r.port_range}"` : ''} }`;

/** The desired state: everything as seeded, except 1% of the objects (600 changes). */
function desiredYaml(m) {
  const out = ['version: 1', 'settings:', '  prune: true', 'users:', '  - email: admin@example.com', '    role: admin'];
  let roleUpdates = 0;
  let deviceUpdates = 0;
  let deviceCreates = 0;
  let deviceDeletes = 0;
  let ruleCreates = 0;
  let ruleDeletes = 0;
  m.users.forEach((u, i) => {
    const promote = i % 100 === 0 && roleUpdates < 100;
    if (promote) roleUpdates++;
    out.push(`  - email: ${u.email}`, `    role: ${promote ? 'admin' : u.role}`);
    const devices = [];
    for (const d of u.devices) {
      if (i % 100 === 1 && deviceDeletes < 100) {
        deviceDeletes++;
        continue;
      }
      const changed = i % 50 === 2 && deviceUpdates < 200;
      if (changed) deviceUpdates++;
      devices.push(`      - { name: ${d.name}, public_key: "${d.public_key}"${changed ? ', mtu: 1380' : ''} }`);
    }
    if (i % 100 === 3 && deviceCreates < 100) {
      deviceCreates++;
      devices.push(`      - { name: new-${i}, public_key: "${key()}" }`);
    }
    if (devices.length) out.push('    devices:', ...devices);
    const rules = [];
    for (const r of u.rules) {
      if (i % 200 === 4 && ruleDeletes < 50) {
        ruleDeletes++;
        continue;
      }
      rules.push(`      - ${ruleYaml(r)}`);
    }
    if (i % 200 === 5 && ruleCreates < 50) {
      ruleCreates++;
      rules.push(`      - { action: accept, destination: 172.16.${Math.floor(i / 256)}.${i % 256} }`);
    }
    if (rules.length) out.push('    rules:', ...rules);
  });
  out.push('rules:', ...m.globalRules.map((r) => `  - ${ruleYaml(r)}`));
  const changes = { roleUpdates, deviceUpdates, deviceCreates, deviceDeletes, ruleCreates, ruleDeletes };
  return { text: `${out.join('\n')}\n`, changes };
}

function runPlan(args, env) {
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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), 'netform-plan-bench-'));
try {
  const dbPath = join(dir, 'netform.db');
  const { token } = await issueToken({ dbPath, email: 'admin@example.com' });
  await setServerDefault({ dbPath, key: 'ipv4_network', value: '10.0.0.0/16' });
  await setServerDefault({ dbPath, key: 'ipv6_network', value: 'fd00::/112' });
  await setServerDefault({ dbPath, key: 'max_devices_per_user', value: '1000000' });
  const m = model();
  let t = performance.now();
  await seed(dbPath, m);
  const seedSeconds = (performance.now() - t) / 1000;
  const desired = desiredYaml(m);
  const file = join(dir, 'netform.yaml');
  writeFileSync(file, desired.text);

  const server = await startServer({ dbPath, port: 0, host: '127.0.0.1' });
  const runs = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const r = await runPlan(['plan', '-f', file, '--format', 'text'], { NETFORM_URL: server.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' });
      if (r.code !== 2) throw new Error(`plan exited ${r.code}:\n${r.stderr}\n${r.stdout.slice(-2000)}`);
      const line = r.stderr.split('\n').find((l) => l.startsWith('netform-timings '));
      runs.push({ wallMs: r.wallMs, ...JSON.parse(line.slice('netform-timings '.length)), summary: r.stdout.trim().split('\n').at(-1) });
    }
  } finally {
    await server.close();
  }
  const row = (name, pick) => `| ${name} | ${runs.map((r) => pick(r).toFixed(0)).join(' / ')} | ${median(runs.map(pick)).toFixed(0)} |`;
  const report = [
    `Server: ${USERS.toLocaleString('en')} users, ${DEVICES.toLocaleString('en')} devices, ${RULES.toLocaleString('en')} rules (seeded through the Store in ${seedSeconds.toFixed(1)} s).`,
    `Desired state: one YAML file of ${(desired.text.length / 1e6).toFixed(1)} MB, prune on; 1% differs: ${JSON.stringify(desired.changes)}.`,
    `Plan printed: \`${runs[0].summary}\``,
    '',
    `| phase (ms) | runs | median |`,
    '|---|---|---|',
    row('load the YAML files', (r) => r.load),
    row('fetch (3 list calls, parallel)', (r) => r.fetch),
    row('diff (planChanges)', (r) => r.diff),
    row('render (text)', (r) => r.render),
    row('whole command, process start to exit', (r) => r.wallMs),
    row('RSS after loading the files (MB)', (r) => r.rss_mb.load),
    row('RSS after fetching (MB)', (r) => r.rss_mb.fetch),
    row('RSS after the diff (MB)', (r) => r.rss_mb.diff),
    row('peak RSS of the CLI process (MB)', (r) => r.rss_peak_mb),
  ];
  console.log(report.join('\n'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
