#!/usr/bin/env node
/**
 * Server scale: latency of the two requests that must not slow down with the database's size,
 * rule create (the overlap check) and device create (address allocation), on an empty database
 * and on one holding 100,000 rules and 50,000 devices, in one run. What matters is the ratio.
 *
 *   npm run build && node bench/server-scale.mjs [--requests N]
 *
 * Seeding goes straight through the Store in one transaction (the API would need 150,000
 * fsyncs); the measured requests go over HTTP to a real server on the seeded file.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { issueToken, setServerDefault, startServer } from '../dist/server/index.js';
import { openStore } from '../dist/server/store/index.js';
import { formatAddress } from '../dist/src/model/index.js';

const RULES = 100_000;
const DEVICES = 50_000;
const USERS = 5_000;
const argIndex = process.argv.indexOf('--requests');
const REQUESTS = argIndex === -1 ? 200 : Number(process.argv[argIndex + 1]);

const key = () => randomBytes(32).toString('base64');

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1] };
}

async function seed(dbPath) {
  const store = await openStore(dbPath);
  const now = new Date().toISOString().replace('Z', '000Z');
  const users = [];
  await store.transaction(async (tx) => {
    for (let i = 0; i < USERS; i++) {
      const user = {
        id: randomUUID(),
        email: `seed-${i}@example.com`,
        role: 'unprivileged',
        password_hash: null,
        last_signed_in_at: null,
        last_signed_in_method: null,
        disabled_at: null,
        inserted_at: now,
        updated_at: now,
      };
      await tx.insertUser(user);
      users.push(user.id);
    }
    // Devices packed from the bottom of the networks, as allocation would have placed them.
    for (let i = 0; i < DEVICES; i++) {
      await tx.insertDevice({
        id: randomUUID(),
        user_id: users[i % USERS],
        name: `device-${i}`,
        description: null,
        public_key: key(),
        preshared_key: key(),
        ipv4: formatAddress(4, 0x0a000002n + BigInt(i)),
        ipv6: formatAddress(6, 0xfd000000000000000000000000000002n + BigInt(i)),
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
    }
    // Rules: distinct /32 hosts in 100.64.0.0/10, both actions, global and user-bound, with and
    // without ports (tcp and udp, ranges within 1..10000), so no two overlap.
    for (let i = 0; i < RULES; i++) {
      const low = 1 + (i % 9000);
      const ported = i % 3 !== 0;
      await tx.insertRule({
        id: randomUUID(),
        action: i % 2 === 0 ? 'accept' : 'drop',
        destination: formatAddress(4, 0x64400000n + BigInt(i * 7)),
        port_type: ported ? (i % 3 === 1 ? 'tcp' : 'udp') : null,
        port_range: ported ? `${low} - ${low + 100}` : null,
        user_id: i % 4 === 0 ? null : users[i % USERS],
        inserted_at: now,
        updated_at: now,
      });
    }
  });
  await store.close();
}

/** A server on a new database file, seeded or not; requests are timed by the caller. */
async function prepare(label, seeded) {
  const dir = mkdtempSync(join(tmpdir(), 'netform-bench-'));
  const dbPath = join(dir, 'netform.db');
  const { token } = await issueToken({ dbPath, email: 'admin@example.com' });
  await setServerDefault({ dbPath, key: 'ipv4_network', value: '10.0.0.0/16' });
  await setServerDefault({ dbPath, key: 'ipv6_network', value: 'fd00::/112' });
  await setServerDefault({ dbPath, key: 'max_devices_per_user', value: '1000000' });
  let seedSeconds = 0;
  if (seeded) {
    const t = performance.now();
    await seed(dbPath);
    seedSeconds = (performance.now() - t) / 1000;
  }
  const server = await startServer({ dbPath, port: 0 });
  const call = async (method, path, body) => {
    const t = performance.now();
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const json = text === '' ? null : JSON.parse(text);
    const ms = performance.now() - t;
    return { ms, status: res.status, json };
  };
  const expectStatus = async (status, method, path, body) => {
    const res = await call(method, path, body);
    if (res.status !== status)
      throw new Error(
        `${label}: ${method} ${path} ${JSON.stringify(body)} answered ${res.status} ${JSON.stringify(res.json)}`,
      );
    return res;
  };
  const owner = (await expectStatus(201, 'POST', '/v0/users', { user: { email: 'bench@example.com' } })).json.data;
  // Warm-up (connections, statement caches) outside the measurement.
  await expectStatus(201, 'POST', '/v0/rules', { rule: { destination: '198.18.255.1', action: 'accept' } });
  return {
    label,
    seedSeconds,
    owner,
    expectStatus,
    samples: { device: [], reuse: [], rule: [], conflict: [] },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const empty = await prepare('empty', false);
const loaded = await prepare(`${RULES.toLocaleString('en')} rules, ${DEVICES.toLocaleString('en')} devices`, true);
const targets = [empty, loaded];
try {
  // The first allocation after a bulk import walks the used addresses once (no hint yet).
  for (const t of targets)
    t.firstDevice = (
      await t.expectStatus(201, 'POST', '/v0/devices', { device: { user_id: t.owner.id, public_key: key() } })
    ).ms;

  // Both databases take turns request by request, so load on the machine hits both alike.
  for (let i = 0; i < REQUESTS; i++) {
    const host = (offset) => formatAddress(4, 0x64400000n + BigInt(i * 7 + offset));
    // Rule shapes in the groups the seed filled: a host next to seeded hosts with ports, a /24
    // elsewhere, a user-bound host; then a rule each conflicts with, which must be found.
    const created = [
      { destination: host(3), action: 'accept', port_type: 'tcp', port_range: '80' },
      { destination: `198.19.${i % 256}.0/24`, action: 'drop' },
      { destination: host(5), action: 'drop', user_id: null },
    ][i % 3];
    const conflicting = [
      { ...created, port_range: '70-90' },
      { destination: `198.19.${i % 256}.${1 + (i % 200)}`, action: 'drop' },
      { ...created, destination: `${created.destination}/32` },
    ][i % 3];
    for (const t of targets) {
      const rule = i % 3 === 2 ? { ...created, user_id: t.owner.id } : created;
      const conflict = i % 3 === 2 ? { ...conflicting, user_id: t.owner.id } : conflicting;
      const device = await t.expectStatus(201, 'POST', '/v0/devices', {
        device: { user_id: t.owner.id, public_key: key() },
      });
      t.samples.device.push(device.ms);
      // Every tenth round: give an address back and take it again (the free-list path).
      if (i % 10 === 0) {
        await t.expectStatus(204, 'DELETE', `/v0/devices/${device.json.data.id}`);
        const again = await t.expectStatus(201, 'POST', '/v0/devices', {
          device: { user_id: t.owner.id, public_key: key() },
        });
        if (again.json.data.ipv4 !== device.json.data.ipv4)
          throw new Error(`${t.label}: freed ${device.json.data.ipv4} but got ${again.json.data.ipv4}`);
        t.samples.reuse.push(again.ms);
      }
      t.samples.rule.push((await t.expectStatus(201, 'POST', '/v0/rules', { rule })).ms);
      t.samples.conflict.push((await t.expectStatus(422, 'POST', '/v0/rules', { rule: conflict })).ms);
    }
  }
  for (const t of targets)
    t.lastAddress = (
      await t.expectStatus(201, 'POST', '/v0/devices', { device: { user_id: t.owner.id, public_key: key() } })
    ).json.data.ipv4;
} finally {
  for (const t of targets) await t.close();
}
for (const t of targets) for (const k of Object.keys(t.samples)) t[k] = stats(t.samples[k]);

const fmt = (ms) => `${ms.toFixed(2)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
const rows = [
  ['device create (allocation), median', empty.device.median, loaded.device.median],
  ['device create (allocation), p95', empty.device.p95, loaded.device.p95],
  ['device create reusing a freed address, median', empty.reuse.median, loaded.reuse.median],
  ['rule create (overlap check, no conflict), median', empty.rule.median, loaded.rule.median],
  ['rule create (overlap check, no conflict), p95', empty.rule.p95, loaded.rule.p95],
  ['rule create refused (overlap found), median', empty.conflict.median, loaded.conflict.median],
  ['first device create after bulk import (no allocation hint yet)', empty.firstDevice, loaded.firstDevice],
];
console.log(`| request (${REQUESTS} each, over HTTP) | empty | ${loaded.label} | ratio |`);
console.log('|---|---|---|---|');
for (const [name, a, b] of rows) console.log(`| ${name} | ${fmt(a)} | ${fmt(b)} | ${ratio(b, a)} |`);
console.log(
  `\nseeding ${loaded.label} through the Store in one transaction: ${loaded.seedSeconds.toFixed(1)} s; last address handed out on the loaded database: ${loaded.lastAddress}`,
);
