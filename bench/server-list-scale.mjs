#!/usr/bin/env node
/**
 * The scale curve of the server's list GETs: `GET /v0/users`, `/v0/devices` and `/v0/rules` on
 * the bench fleet (10,000 users, 20,000 devices, 30,000 rules: bench/scale-data.mjs) at 1×, 2×
 * and 5× its size, each list's wall time, the server's CPU time for it and the server's peak RSS
 * while answering it.
 *
 * One `netform serve --log-level warn` per size, all three running at once on their own seeded
 * SQLite files; the lists take turns round by round (users at 1×, 2×, 5×, then devices, ...), so
 * a load that comes and goes on a shared machine falls on every size alike, and each round's
 * figure at 2× and 5× is divided by the same round's figure at 1× (paired ratios; the median is
 * printed). Linear is 2.00 and 5.00. The peak RSS is the server's VmHWM, reset before each request
 * (`/proc/PID/clear_refs`), so it is the peak while answering that list; "at rest" is its RSS
 * before the request. The client reads each answer through node:http and counts its bytes.
 *
 *   npm run build && node bench/server-list-scale.mjs [--rounds 3] [--scales 1,2,5] [--baseline DIST] [--keep DIR]
 *
 * Takes about 2 minutes on a quiet 2-core machine (seeding 480,000 rows through the Store is most
 * of it; about 5 times as long at a load average of 20).
 * --baseline DIST: the same sizes served by another build as well, in the same rounds.
 * --keep DIR: seeded databases are kept in DIR and used again by the next run with the same DIR.
 * --prof DIR: each server runs with --cpu-prof into DIR/<build>-<scale>x (a profile on exit).
 * The CPU column is the time on a CPU of all the server's threads (the garbage collector's helper
 * threads included), from /proc/PID/task/TID/schedstat; the main thread's is given apart.
 */
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  argValue,
  deviceRow,
  median,
  model,
  prepareDatabase,
  ruleRow,
  storeNow,
  userRow,
  withStoreTransaction,
} from './scale-data.mjs';

const ROUNDS = Number(argValue('--rounds', '3'));
const SCALES = argValue('--scales', '1,2,5').split(',').map(Number);
const BASELINE = argValue('--baseline', undefined);
const KEEP = argValue('--keep', undefined);
const OURS = fileURLToPath(new URL('../dist', import.meta.url));
const LISTS = ['users', 'devices', 'rules'];
const PROF = argValue('--prof', undefined);
const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/**
 * Time on a CPU of all the process's threads (the garbage collector's helper threads included),
 * and of its main thread alone, in ms, from the scheduler's nanoseconds.
 */
function cpuMs(pid) {
  let ns = 0;
  let main = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const used = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      ns += used;
      if (tid === String(pid)) main = used;
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return { all: ns / 1e6, main: main / 1e6 };
}

/** VmRSS and VmHWM of a process, in MB. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Resets the peak RSS (VmHWM) to the current RSS (Linux 4.0+). */
function resetPeak(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

function startServer(dist, db, name) {
  const child = spawn(
    process.execPath,
    [
      ...(PROF ? ['--cpu-prof', '--cpu-prof-dir', join(PROF, name)] : []),
      join(dist, 'src/cli/main.js'),
      'serve',
      '--port',
      '0',
      '--db',
      db,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolvePromise, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match)
        resolvePromise({
          url: match[1],
          pid: child.pid,
          stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))),
        });
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening`)));
  });
}

/** One GET, its body read and counted: wall ms, bytes, objects (the body's `"id":` count is not needed: the status says enough). */
function get(url, token) {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    http
      .get(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
        let bytes = 0;
        res.on('data', (chunk) => (bytes += chunk.length));
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
          else resolvePromise({ ms: performance.now() - started, bytes });
        });
      })
      .on('error', reject);
  });
}

async function measure(server, list, token) {
  const before = memory(server.pid);
  resetPeak(server.pid);
  const cpuBefore = cpuMs(server.pid);
  const { ms, bytes } = await get(`${server.url}/v0/${list}`, token);
  const cpuAfter = cpuMs(server.pid);
  const cpu = cpuAfter.all - cpuBefore.all;
  const main = cpuAfter.main - cpuBefore.main;
  return { ms, bytes, cpu, main, rest: before.rss, peak: memory(server.pid).peak };
}

/**
 * scale-data.mjs's seed, with a 256 MB page cache on the seeding connection: with SQLite's
 * default 2 MB, inserting 300,000 rows under random UUID keys took more than twice as long per
 * row as 60,000 (the index pages no longer stay in the cache).
 */
async function seed(dbPath, m) {
  const now = storeNow();
  await withStoreTransaction(dbPath, async (tx) => {
    tx.db.pragma('cache_size = -262144');
    for (const u of m.users) await tx.insertUser(userRow(u, now));
    for (const d of m.devices) await tx.insertDevice(deviceRow({ ...d, user_id: d.user.id }, now));
    for (const r of m.rules) await tx.insertRule(ruleRow({ ...r, user_id: r.user?.id ?? null }, now));
  });
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'netform-list-scale-'));
  const builds = [{ name: 'this build', dist: OURS }];
  if (BASELINE) builds.push({ name: 'baseline', dist: resolve(BASELINE) });
  const servers = [];
  const loadBefore = loadAverage();
  try {
    const seeded = [];
    for (const scale of SCALES) {
      const counts = { users: 10_000 * scale, devices: 20_000 * scale, rules: 30_000 * scale };
      const db = join(dir, `fleet-${scale}.db`);
      const kept = KEEP && join(KEEP, `fleet-${scale}.db`);
      if (kept && existsSync(`${kept}.json`)) {
        copyFileSync(kept, db);
        seeded.push({ scale, counts, db, token: JSON.parse(readFileSync(`${kept}.json`, 'utf8')).token });
        continue;
      }
      const started = performance.now();
      // Networks large enough for 5× the devices (10.0.0.0/16 holds 65,534).
      const token = await prepareDatabase(db, { ipv4: '10.0.0.0/8', ipv6: 'fd00::/104' });
      await seed(db, model(counts));
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stderr.write(`seeded ${scale}×: ${JSON.stringify(counts)} in ${seconds} s (load ${loadAverage()})\n`);
      seeded.push({ scale, counts, db, token });
      if (kept) {
        mkdirSync(KEEP, { recursive: true });
        copyFileSync(db, kept);
        writeFileSync(`${kept}.json`, JSON.stringify({ token }));
      }
    }
    const targets = [];
    for (const build of builds)
      for (const s of seeded) {
        // Each build serves its own copy: a server may write to its file (allocation hints).
        const db = join(dir, `fleet-${s.scale}-${builds.indexOf(build)}.db`);
        writeFileSync(db, readFileSync(s.db));
        const server = await startServer(build.dist, db, `${builds.indexOf(build)}-${s.scale}x`);
        servers.push(server);
        targets.push({ build: build.name, ...s, server });
      }
    // A warm-up request of every list on every server (compiles the hot paths).
    for (const list of LISTS) for (const t of targets) await get(`${t.server.url}/v0/${list}`, t.token);
    const results = new Map();
    for (let round = 0; round < ROUNDS; round++)
      for (const list of LISTS)
        for (const t of targets) {
          const r = await measure(t.server, list, t.token);
          const key = `${t.build}|${t.scale}|${list}`;
          if (!results.has(key)) results.set(key, []);
          results.get(key).push(r);
          process.stderr.write(
            `round ${round + 1}: ${t.build} ${t.scale}× ${list}: ${r.ms.toFixed(0)} ms, CPU ${r.cpu.toFixed(0)} ms, peak ${r.peak.toFixed(0)} MB (load ${loadAverage()})\n`,
          );
        }

    console.log(
      `\n${ROUNDS} rounds, Node ${process.version}; load average (1, 5, 15 min) ${loadBefore} before, ${loadAverage()} after\n`,
    );
    console.log(
      '| build | list | scale (objects) | MB answered | wall ms (median; rounds) | × 1×, paired wall | server CPU ms | × 1×, paired CPU | µs CPU per object | main thread CPU ms | × 1×, paired | RSS at rest MB | peak RSS MB | peak − rest MB |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const build of builds)
      for (const list of LISTS) {
        const base = results.get(`${build.name}|${SCALES[0]}|${list}`);
        for (const s of seeded) {
          const rs = results.get(`${build.name}|${s.scale}|${list}`);
          const wall = median(rs.map((r) => r.ms));
          const cpu = median(rs.map((r) => r.cpu));
          const wallRatio = median(rs.map((r, i) => r.ms / base[i].ms));
          const cpuRatio = median(rs.map((r, i) => r.cpu / base[i].cpu));
          const main = median(rs.map((r) => r.main));
          const mainRatio = median(rs.map((r, i) => r.main / base[i].main));
          const rest = median(rs.map((r) => r.rest));
          const peak = median(rs.map((r) => r.peak));
          console.log(
            `| ${build.name} | ${list} | ${s.scale}× (${s.counts[list].toLocaleString('en')}) | ${(rs[0].bytes / 1e6).toFixed(1)} | ${wall.toFixed(0)} (${rs.map((r) => r.ms.toFixed(0)).join(' / ')}) | ${wallRatio.toFixed(2)} | ${cpu.toFixed(0)} | ${cpuRatio.toFixed(2)} | ${((1000 * cpu) / s.counts[list]).toFixed(2)} | ${main.toFixed(0)} | ${mainRatio.toFixed(2)} | ${rest.toFixed(0)} | ${peak.toFixed(0)} | ${(peak - rest).toFixed(0)} |`,
          );
        }
      }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
