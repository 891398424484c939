/**
 * The 10,000-user benchmark dataset shared by bench/plan-scale.mjs, bench/drift-run.mjs and
 * bench/desired-load.mjs (10,000 users, 20,000 devices, 30,000 rules), its desired state, its
 * seeding through the server's Store, and running the built CLI as users do. Importing this
 * module does nothing; the server's modules are imported only when a database is prepared, so
 * that a bench measuring the loader alone does not load them.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { formatAddress } from '../dist/src/model/index.js';

export const USERS = 10_000;
export const DEVICES = 20_000;
export const RULES = 30_000;
export const CLI = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));

export const key = () => randomBytes(32).toString('base64');

/** The value of `--name N` on the command line, or `fallback`. */
export function argValue(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}

/** Devices packed from the bottom of 10.0.0.0/16 and fd00::/112, as allocation would place them. */
export const deviceIpv4 = (i) => formatAddress(4, 0x0a000002n + BigInt(i));
export const deviceIpv6 = (i) => formatAddress(6, 0xfd000000000000000000000000000002n + BigInt(i));
/** Distinct /32 hosts in 100.64.0.0/10, so no two seeded rules overlap. */
export const ruleHost = (i) => formatAddress(4, 0x64400000n + BigInt(i * 7));
/**
 * Rule ports: two in three rules have a tcp or udp range within 1..10000, one in ten of those a
 * single port (exported as a quoted `"443"`, as real fleets have them).
 */
export const rulePorts = (i) => {
  const low = 1 + (i % 9000);
  const ported = i % 3 !== 0;
  const single = i % 10 === 1;
  return {
    port_type: ported ? (i % 3 === 1 ? 'tcp' : 'udp') : null,
    port_range: ported ? `${low} - ${single ? low : low + 100}` : null,
  };
};

/** Device names: one in fifty with spaces and an apostrophe, as people name them. */
export const deviceName = (i) => (i % 50 === 7 ? `device-${i} of O'Neil` : `device-${i}`);

/**
 * The objects to seed, kept to write the desired state from: every user unprivileged, devices on
 * defaults. `light`: the same counts with minimal objects (short emails and names, no preshared
 * key, rules without ports), so that the server's lists are light and netform's own work per
 * object is a larger share of a plan.
 */
export function model({
  users: userCount = USERS,
  devices: deviceCount = DEVICES,
  rules: ruleCount = RULES,
  light = false,
} = {}) {
  const users = [];
  for (let i = 0; i < userCount; i++)
    users.push({
      id: randomUUID(),
      email: light ? `u${i}@b.t` : `user-${i}@bench.test`,
      role: 'unprivileged',
      devices: [],
      rules: [],
    });
  const devices = [];
  for (let i = 0; i < deviceCount; i++) {
    const device = {
      id: randomUUID(),
      user: users[i % userCount],
      name: light ? `d${i}` : deviceName(i),
      public_key: key(),
      preshared_key: light ? null : undefined,
      ipv4: deviceIpv4(i),
      ipv6: deviceIpv6(i),
    };
    device.user.devices.push(device);
    devices.push(device);
  }
  const globalRules = [];
  const rules = [];
  for (let i = 0; i < ruleCount; i++) {
    const rule = {
      id: randomUUID(),
      action: i % 2 === 0 ? 'accept' : 'drop',
      destination: ruleHost(i),
      ...(light ? { port_type: null, port_range: null } : rulePorts(i)),
      user: i % 3 === 0 ? null : users[i % userCount],
    };
    if (rule.user) rule.user.rules.push(rule);
    else globalRules.push(rule);
    rules.push(rule);
  }
  return { users, devices, rules, globalRules };
}

/** The Store's timestamp format (microseconds). */
export const storeNow = () => new Date().toISOString().replace('Z', '000Z');

export const userRow = ({ id, email, role }, now) => ({
  id,
  email,
  role,
  password_hash: null,
  last_signed_in_at: null,
  last_signed_in_method: null,
  disabled_at: null,
  inserted_at: now,
  updated_at: now,
});

export const deviceRow = ({ id, user_id, name, public_key, preshared_key, ipv4, ipv6 }, now) => ({
  id,
  user_id,
  name,
  description: null,
  public_key,
  preshared_key: preshared_key === null ? null : key(),
  ipv4,
  ipv6,
  allowed_ips: null,
  dns: null,
  endpoint: null,
  mtu: null,
  persistent_keepalive: null,
  use_default_allowed_ips: true,
  use_default_dns: true,
  use_default_endpoint: true,
  use_default_mtu: true,
  use_default_persistent_keepalive: true,
  remote_ip: null,
  latest_handshake: null,
  rx_bytes: null,
  tx_bytes: null,
  inserted_at: now,
  updated_at: now,
});

export const ruleRow = ({ id, action, destination, port_type, port_range, user_id }, now) => ({
  id,
  action,
  destination,
  port_type,
  port_range,
  user_id,
  inserted_at: now,
  updated_at: now,
});

/**
 * A new database file with an admin token and tunnel networks large enough for the seeded
 * devices; returns the token.
 */
export async function prepareDatabase(dbPath, { ipv4 = '10.0.0.0/16', ipv6 = 'fd00::/112' } = {}) {
  const { issueToken, setServerDefault } = await import('../dist/server/index.js');
  const { token } = await issueToken({ dbPath, email: 'admin@example.com' });
  await setServerDefault({ dbPath, key: 'ipv4_network', value: ipv4 });
  await setServerDefault({ dbPath, key: 'ipv6_network', value: ipv6 });
  await setServerDefault({ dbPath, key: 'max_devices_per_user', value: '1000000' });
  return token;
}

/** Writes through the Store in one transaction (through the API it would take one fsync a row). */
export async function withStoreTransaction(dbPath, write) {
  const { openStore } = await import('../dist/server/store/index.js');
  const store = await openStore(dbPath);
  try {
    await store.transaction(write);
  } finally {
    await store.close();
  }
}

/** Seeds the objects of model() into the database file. */
export async function seed(dbPath, m) {
  const now = storeNow();
  await withStoreTransaction(dbPath, async (tx) => {
    for (const u of m.users) await tx.insertUser(userRow(u, now));
    for (const d of m.devices) await tx.insertDevice(deviceRow({ ...d, user_id: d.user.id }, now));
    for (const r of m.rules) await tx.insertRule(ruleRow({ ...r, user_id: r.user?.id ?? null }, now));
  });
}

const ruleYaml = (r) =>
  `{ action: ${r.action}, destination: ${r.destination}${r.port_type ? `, port_type: ${r.port_type}, port_range: "${r.port_range}"` : ''} }`;

/**
 * The desired state: everything as in model(), except 1% of the objects (600 changes: 100 role
 * updates, 200 device updates, 100 device creates, 100 device deletions, 50 rule creates, 50 rule
 * deletions). With `faults`, about 1,000 mistakes of every kind the loader reports are written
 * in as well (bench/desired-load.mjs).
 */
export function desiredYaml(m, { faults = false } = {}) {
  const out = ['version: 1', 'settings:', '  prune: true', 'users:', '  - email: admin@example.com', '    role: admin'];
  // 1% of the objects differ whatever the size: the caps grow with the number of users.
  const k = m.users.length / 10_000;
  let roleUpdates = 0;
  let deviceUpdates = 0;
  let deviceCreates = 0;
  let deviceDeletes = 0;
  let ruleCreates = 0;
  let ruleDeletes = 0;
  m.users.forEach((u, i) => {
    const promote = i % 100 === 0 && roleUpdates < 100 * k;
    if (promote) roleUpdates++;
    const fault = faults && i % 50 === 7;
    out.push(
      `  - email: ${fault && i % 100 === 7 ? u.email.replace('@', ' at ') : u.email}`,
      `    role: ${promote ? 'admin' : u.role}`,
    );
    if (fault) out.push(i % 100 === 7 ? '    rolle: admin' : '    role_name: 12');
    const devices = [];
    for (const d of u.devices) {
      if (i % 100 === 1 && deviceDeletes < 100 * k) {
        deviceDeletes++;
        continue;
      }
      const changed = i % 50 === 2 && deviceUpdates < 200 * k;
      if (changed) deviceUpdates++;
      const extra = fault
        ? i % 100 === 7
          ? ', mtu: 99999, dns: [1.1.1.1, "nope nope", 1.1.1.1]'
          : ', mtu: high, use_default_endpoint: false'
        : '';
      devices.push(`      - { name: ${d.name}, public_key: "${d.public_key}"${changed ? ', mtu: 1380' : ''}${extra} }`);
    }
    if (fault) devices.push(`      - { name: ${u.devices[0].name}, public_key: "${u.devices[0].public_key}" }`);
    if (i % 100 === 3 && deviceCreates < 100 * k) {
      deviceCreates++;
      devices.push(`      - { name: new-${i}, public_key: "${key()}" }`);
    }
    if (devices.length) out.push('    devices:', ...devices);
    const rules = [];
    for (const r of u.rules) {
      if (i % 200 === 4 && ruleDeletes < 50 * k) {
        ruleDeletes++;
        continue;
      }
      rules.push(`      - ${ruleYaml(r)}`);
    }
    if (i % 200 === 5 && ruleCreates < 50 * k) {
      ruleCreates++;
      rules.push(`      - { action: accept, destination: 172.16.${Math.floor(i / 256)}.${i % 256} }`);
    }
    if (fault && u.rules.length > 0)
      rules.push(
        `      - ${ruleYaml({ ...u.rules[0], port_range: u.rules[0].port_range && u.rules[0].port_range.replace(' - ', '-') })}`,
      );
    if (fault) rules.push(`      - { action: accept, destination: 10.${i % 256}.0.0/33, port_type: tcp }`);
    if (rules.length) out.push('    rules:', ...rules);
  });
  out.push('rules:', ...m.globalRules.map((r) => `  - ${ruleYaml(r)}`));
  if (faults)
    out.push('  - { action: accept, destination: 100.64.0.0/24 }', '  - { action: maybe, destination: 100.64.0.0 }');
  const changes = { roleUpdates, deviceUpdates, deviceCreates, deviceDeletes, ruleCreates, ruleDeletes };
  return { text: `${out.join('\n')}\n`, changes };
}

/** The built CLI in its own process, with its phase timings on (NETFORM_TIMINGS). */
export function runCli(args, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env, NO_COLOR: '1', NETFORM_TIMINGS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, wallMs: performance.now() - started }));
  });
}

/** The CLI's `netform-timings {...}` line from its stderr, parsed; {} without one. */
export function timingsOf(stderr) {
  const line = stderr.split('\n').find((l) => l.startsWith('netform-timings '));
  return line ? JSON.parse(line.slice('netform-timings '.length)) : {};
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
