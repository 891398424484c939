#!/usr/bin/env node
/**
 * The write path of a create, without HTTP: the services' createRule and createDevice through the
 * store as `netform serve` wraps it (metrics instrumentation), on a real SQLite file with group
 * commit, 16 creates asked for at once (as 16 connections would), the permission re-read inside
 * each write transaction included (the request's token and owner, as the auth hook hands them on).
 * CPU time of this process per create (user + system, `process.cpuUsage`: the COMMIT's fsync
 * counts only its system time), this build and the baseline in turns, round by round; the first
 * round of each is a warm-up. A loaded machine moves a whole HTTP request's CPU by more than the
 * write path's changes; this loop much less.
 *
 *   npm run build && node bench/server-create-path.mjs --baseline /path/to/other/dist [--rounds 7] [--waves 40]
 *       [--methods]   (also the wall time per call of each store method, this build only)
 *
 * With --rounds 7 --waves 40 (4,480 creates of each kind per build): about 30 s on a quiet machine.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}
const BASELINE = option('baseline', undefined);
const ROUNDS = Number(option('rounds', '7'));
const WAVES = Number(option('waves', '40'));
const METHODS = process.argv.includes('--methods');
const AT_ONCE = 16;
const OWNERS = 500;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const LOAD_BEFORE = load();

/**
 * Wall time per call of every store method (for --methods): `times` gets name → [ns, calls]. The
 * methods are wrapped on the store's classes, so the writer connection's calls count too.
 */
function timeMethods(store, times) {
  let proto = Object.getPrototypeOf(store);
  while (proto && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = proto[name];
      if (name === 'constructor' || name === 'transaction' || typeof method !== 'function') continue;
      proto[name] = function (...args) {
        const t = process.hrtime.bigint();
        const result = method.apply(this, args);
        const entry = times.get(name) ?? [0n, 0];
        entry[0] += process.hrtime.bigint() - t;
        entry[1]++;
        times.set(name, entry);
        return result;
      };
    }
    proto = Object.getPrototypeOf(proto);
  }
}

async function setUp(name, dist, times) {
  const dir = mkdtempSync(join(tmpdir(), 'netform-create-path-'));
  const dbPath = join(dir, 'netform.db');
  const { issueToken, setServerDefault, createMetrics } = await import(join(dist, 'server/index.js'));
  const { token } = await issueToken({ dbPath, email: 'admin@example.com' });
  for (const [k, v] of [
    ['ipv4_network', '10.0.0.0/8'],
    ['ipv6_network', 'fd00::/104'],
    ['max_devices_per_user', '1000000'],
  ])
    await setServerDefault({ dbPath, key: k, value: v });
  const { openStore } = await import(join(dist, 'server/store/index.js'));
  const { instrumentStore } = await import(join(dist, 'server/metrics.js'));
  const { hashApiToken } = await import(join(dist, 'server/crypto.js'));
  const { createClock } = await import(join(dist, 'server/clock.js'));
  const rules = await import(join(dist, 'server/services/rules.js'));
  const devices = await import(join(dist, 'server/services/devices.js'));
  const users = await import(join(dist, 'server/services/users.js'));
  const raw = await openStore(dbPath);
  if (times) timeMethods(raw, times);
  const store = instrumentStore(raw, createMetrics(raw).storeErrors);
  const tokenHash = hashApiToken(token);
  const actor = (await store.findTokenByHash(tokenHash)).owner;
  const ctx = { store, clock: createClock(), legacyDeviceUpdates: false, credential: { tokenHash, actor } };
  const owners = [];
  for (let i = 0; i < OWNERS; i++) owners.push((await users.createUser(ctx, { email: `owner${i}@example.com` })).id);
  let counter = 0;
  let next = 0;
  const create = {
    rules: () => {
      const c = counter++;
      const destination = `100.${64 + ((c >> 16) & 63)}.${(c >> 8) & 255}.${c & 255}`;
      return rules.createRule(ctx, { destination, action: 'accept' });
    },
    devices: () =>
      devices.createDevice(ctx, {
        user_id: owners[next++ % owners.length],
        public_key: randomBytes(32).toString('base64'),
      }),
  };
  return { name, create, results: { rules: [], devices: [] }, close: () => raw.close(), dir };
}

/** CPU µs per create of `WAVES` waves of AT_ONCE creates. */
async function measure(create) {
  const before = process.cpuUsage();
  for (let w = 0; w < WAVES; w++) {
    const wave = [];
    for (let i = 0; i < AT_ONCE; i++) wave.push(create());
    await Promise.all(wave);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / (WAVES * AT_ONCE);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const times = METHODS ? new Map() : null;
const builds = [await setUp('this build', resolve(HERE, '../dist'), times)];
if (BASELINE) builds.push(await setUp('baseline', resolve(BASELINE)));
times?.clear(); // the set-up's calls (owners, token) left out
try {
  for (let round = 0; round <= ROUNDS; round++) {
    for (const kind of ['rules', 'devices']) {
      for (const build of round % 2 ? [...builds].reverse() : builds) {
        const cpu = await measure(build.create[kind]);
        if (round > 0) build.results[kind].push(cpu);
      }
    }
  }
  console.log(
    `\n${ROUNDS} rounds (after a warm-up) of ${WAVES} × ${AT_ONCE} creates of each kind per build, in turns; Node ${process.version}; load average ${LOAD_BEFORE} at the start, ${load()} now\n`,
  );
  console.log('| create | build | CPU µs per create (median) | rounds | this build / baseline, paired (rounds) |');
  console.log('|---|---|---|---|---|');
  for (const kind of ['rules', 'devices']) {
    for (const build of builds) {
      const rs = build.results[kind];
      let paired = '';
      if (builds.length === 2 && build === builds[0]) {
        const ratios = rs.map((x, i) => x / builds[1].results[kind][i]);
        paired = `${(100 * median(ratios)).toFixed(0)}% (${ratios.map((r) => (100 * r).toFixed(0)).join(' ')})`;
      }
      console.log(
        `| POST /v0/${kind} | ${build.name} | ${median(rs).toFixed(1)} | ${rs.map((x) => x.toFixed(0)).join(' / ')} | ${paired} |`,
      );
    }
  }
  if (times) {
    const creates = (ROUNDS + 1) * WAVES * AT_ONCE;
    console.log('\nStore methods (this build; wall µs, both kinds together):\n');
    console.log('| method | calls per create | µs per call | µs per create |');
    console.log('|---|---|---|---|');
    for (const [name, [ns, calls]] of [...times].sort((a, b) => Number(b[1][0] - a[1][0])))
      console.log(
        `| ${name} | ${(calls / (2 * creates)).toFixed(2)} | ${(Number(ns) / 1000 / calls).toFixed(2)} | ${(Number(ns) / 1000 / (2 * creates)).toFixed(1)} |`,
      );
  }
} finally {
  for (const build of builds) {
    await build.close();
    rmSync(build.dir, { recursive: true, force: true });
  }
}
