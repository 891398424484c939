#!/usr/bin/env node
/**
 * The per-request parts of a GET that W4.14 changed, timed alone in a loop (CPU only, no socket):
 * a loaded machine moves whole-request figures by more than these parts cost, a loop of them much
 * less. For each build, in turns round by round, nanoseconds per call (median of the rounds):
 *
 * - metrics: the onResponse hook of `recordRequests` (count and time one answer);
 * - auth: `authenticate` of a valid header, the token and owner kept by the store (frozen, as the
 *   SQLite reader keeps them between commits; the store's own lookup not included);
 * - settings: `readSettings` on the store's kept settings;
 * - answer: a kept device's answer after the store: its view and the body serialized by the
 *   route's schema (a build that keeps the bytes with the kept view: two WeakMap lookups).
 *
 *   npm run build && node bench/server-request-parts.mjs [--baseline /path/to/other/dist] [--rounds 7] [--calls 200000]
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}
const BASELINE = option('baseline', undefined);
const ROUNDS = Number(option('rounds', '7'));
const CALLS = Number(option('calls', '200000'));

const deepFreeze = (value) => {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
};

async function partsOf(dist) {
  const { createMetrics } = await import(join(dist, 'server/metrics.js'));
  const { recordRequests } = await import(join(dist, 'server/operations.js'));
  const { authenticate } = await import(join(dist, 'server/services/tokens.js'));
  const { readSettings, initialDefaults } = await import(join(dist, 'server/services/settings.js'));
  const { createClock } = await import(join(dist, 'server/clock.js'));
  const { generateApiToken, hashApiToken } = await import(join(dist, 'server/crypto.js'));

  const metrics = createMetrics({ countObjects: async () => ({ users: 0, devices: 0, rules: 0 }) });
  let hook;
  recordRequests({ addHook: (_name, fn) => (hook = fn) }, metrics);
  const request = { routeOptions: { url: '/v0/devices/:id' }, method: 'GET' };
  const reply = { statusCode: 200, elapsedTime: 0.42 };
  const done = () => {};

  const token = generateApiToken();
  const found = deepFreeze({
    token: {
      id: 'a1',
      user_id: 'u1',
      token_hash: hashApiToken(token),
      inserted_at: '2026-01-01T00:00:00.000000Z',
      expires_at: '2099-01-01T00:00:00.000000Z',
      revoked_at: null,
    },
    owner: {
      id: 'u1',
      email: 'admin@example.com',
      role: 'admin',
      password_hash: null,
      last_signed_in_at: null,
      last_signed_in_method: null,
      disabled_at: null,
      inserted_at: '2026-01-01T00:00:00.000000Z',
      updated_at: '2026-01-01T00:00:00.000000Z',
    },
  });
  const clock = createClock();
  const header = `Bearer ${token}`;
  const tokenStore = { findTokenByHash: async () => found };
  const settings = deepFreeze({ ...initialDefaults(), server_public_key: 'x'.repeat(44) });
  const settingsStore = { getSettings: async () => settings };

  // The answer of a kept device: its view and the route's serialized body (fast-json-stringify
  // with the route's 200 schema, as Fastify compiles it). A build with routes/answer.js keeps the
  // bytes with the kept view; an older one builds the view and serializes it on every request.
  const { default: fastJson } = await import('fast-json-stringify');
  const { SHARED_SCHEMAS, DEVICE_SCHEMAS } = await import(join(dist, 'server/routes/schemas.js'));
  const views = await import(join(dist, 'server/services/views.js'));
  const stringify = fastJson(DEVICE_SCHEMAS.show.response[200], {
    schema: Object.fromEntries(SHARED_SCHEMAS.map((s) => [s.$id, s])),
  });
  const deviceSettings = deepFreeze({
    serverPublicKey: 'x'.repeat(44),
    defaults: {
      allowed_ips: ['0.0.0.0/0', '::/0'],
      dns: ['1.1.1.1'],
      endpoint: 'vpn:51820',
      mtu: 1280,
      persistent_keepalive: 25,
    },
  });
  const device = deepFreeze({
    id: 'a73eb33f-1711-4e3c-a0c7-e5d102c42e73',
    user_id: '07affd0b-ed61-4193-bea3-e4f07cbb9746',
    name: 'laptop',
    description: null,
    public_key: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=',
    preshared_key: 'H9LSi6lL0G6ed9zh9KVcqIfxne9iNoqUGSfnkqxw2Ho=',
    ipv4: '10.0.0.1',
    ipv6: 'fd00::2',
    ...Object.fromEntries(['allowed_ips', 'dns', 'endpoint', 'mtu', 'persistent_keepalive'].map((k) => [k, null])),
    ...Object.fromEntries(
      ['allowed_ips', 'dns', 'endpoint', 'mtu', 'persistent_keepalive'].map((k) => [`use_default_${k}`, true]),
    ),
    remote_ip: null,
    latest_handshake: null,
    rx_bytes: null,
    tx_bytes: null,
    inserted_at: '2026-11-29T12:48:29.037245Z',
    updated_at: '2026-11-29T12:48:29.037245Z',
  });
  let answer;
  try {
    const { answerOne } = await import(join(dist, 'server/routes/answer.js'));
    const fakeReply = { serialize: stringify, type: () => fakeReply, send: () => fakeReply };
    answer = () => answerOne(fakeReply, views.shownDevice(device, deviceSettings));
  } catch {
    answer = () => stringify({ data: views.deviceView(device, deviceSettings) });
  }

  return {
    answer: async () => {
      for (let i = 0; i < CALLS; i++) answer();
    },
    metrics: async () => {
      for (let i = 0; i < CALLS; i++) hook(request, reply, done);
    },
    auth: async () => {
      for (let i = 0; i < CALLS; i++)
        if (!(await authenticate(tokenStore, clock, header)).ok) throw new Error('refused');
    },
    settings: async () => {
      for (let i = 0; i < CALLS; i++) await readSettings(settingsStore);
    },
  };
}

const builds = [{ name: 'this build', dist: resolve(HERE, '../dist') }];
if (BASELINE) builds.push({ name: 'baseline', dist: resolve(BASELINE) });
for (const build of builds) build.parts = await partsOf(build.dist);
const names = Object.keys(builds[0].parts);
const results = new Map();
for (let round = 0; round < ROUNDS + 1; round++)
  for (const name of names)
    for (const build of builds) {
      const start = process.cpuUsage();
      await build.parts[name]();
      const used = process.cpuUsage(start);
      // Round 0 warms up (the optimising compiler); not counted.
      if (round === 0) continue;
      const key = `${build.name}\t${name}`;
      if (!results.has(key)) results.set(key, []);
      results.get(key).push(((used.user + used.system) * 1000) / CALLS);
    }
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${ROUNDS} rounds of ${CALLS} calls, CPU ns per call (median), Node ${process.version}\n`);
console.log(`| part | ${builds.map((b) => b.name).join(' | ')} |`);
console.log(`|---|${builds.map(() => '---|').join('')}`);
for (const name of names)
  console.log(
    `| ${name} | ${builds.map((b) => `${Math.round(median(results.get(`${b.name}\t${name}`)))} ns`).join(' | ')} |`,
  );
