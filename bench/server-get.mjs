#!/usr/bin/env node
/**
 * GET of one object against bare Fastify, as ratios measured side by side in one run (W3.9: GET of
 * one object ≥ 50% of bare Fastify):
 *
 * - quiet logs: `netform serve --log-level warn` (no access lines; metrics on, as by default)
 *   against a bare Fastify app with `logger: false` answering a constant JSON of the same bytes;
 * - access lines: `netform serve` at its default `info`, stderr to a file (one JSON line a request),
 *   against the bare app writing Fastify's own `request completed` line (one JSON line a request,
 *   `disableRequestLogging` and that line in `onResponse`) at `info` to a file.
 *
 * For every target, requests per second and the server's CPU time (user and system, from /proc)
 * per answered request, which a shared machine moves less. Targets take turns round by round; the
 * figure of a target is the median of its rounds. The ratios to bare Fastify are paired: each
 * round's netform figure against the bare figure of the same round (measured just before it), the
 * median of those; a load that comes and goes then moves both sides of a ratio alike.
 *
 *   npm run build && node bench/server-get.mjs [--seconds 3] [--rounds 5] [--connections 16]
 *       [--baseline /path/to/other/dist] [--build NAME=DIST ...] [--prof DIR] [--only quiet|logged]
 *
 * --baseline DIST: also measure that build ("baseline"); --build NAME=DIST (repeatable): more builds.
 * --prof DIR: every server (bare Fastify too) runs with --cpu-prof into DIR (a profile each, on exit).
 * --ids N: GET N devices in turn (default 1, the same device every time; above 1,000, more rows than
 *   a server keeps: each GET reads its row and serializes it).
 * --rate R: R requests per second for every target (autocannon's overallRate), so that each answers
 *   the same load; --amount N: N requests per connection per round instead of --seconds.
 * The CPU column and the paired ratio are those of bench/server-cpu.mjs (also server-throughput.mjs's):
 * time on a CPU of all the server's threads from the scheduler, the main thread's share printed too.
 * Takes about (1 + rounds × seconds) × targets seconds: 2 × 16 s = 32 s with --only quiet and no
 * baseline, 48 s with one.
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMicros, median, pairedCpu, perRequest } from './server-cpu.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OURS = resolve(HERE, '../dist');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}
const SECONDS = Number(option('seconds', '3'));
const ROUNDS = Number(option('rounds', '5'));
const CONNECTIONS = Number(option('connections', '16'));
/** Requests per connection per round instead of --seconds (--amount N: every target answers the same N × connections). */
const AMOUNT = option('amount', undefined);
/** GET this many devices in turn (1: the same device every time; more than the 1,000 rows a server keeps: a row read and serialized each time). */
const IDS = Number(option('ids', '1'));
const BASELINE = option('baseline', undefined);
/** Every `--build NAME=DIST`. */
const EXTRA_BUILDS = process.argv
  .flatMap((arg, i) => (arg === '--build' ? [process.argv[i + 1]] : []))
  .map((spec) => ({ name: spec.slice(0, spec.indexOf('=')), dist: resolve(spec.slice(spec.indexOf('=') + 1)) }));
const PROF = option('prof', undefined);
const ONLY = option('only', undefined);
/** Requests per second, the same for every target (autocannon's overallRate); none: as fast as each answers. */
const RATE = option('rate', undefined);

/** Child: a bare Fastify app answering BYTES_FILE; `logged`: one access line a request to LOG_FILE. */
async function bareChild(bytesFile, logFile) {
  const { default: Fastify } = await import('fastify');
  const app = Fastify(
    logFile ? { logger: { level: 'info', file: logFile }, disableRequestLogging: true } : { logger: false },
  );
  const bytes = readFileSync(bytesFile);
  if (logFile)
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
      done();
    });
  app.get('/v0/devices/:id', async (_request, reply) => reply.type('application/json; charset=utf-8').send(bytes));
  await app.listen({ host: '127.0.0.1', port: 0 });
  // Exits (writing its --cpu-prof profile) when the bench stops it.
  process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
  process.stdout.write(`listening on http://127.0.0.1:${app.server.address().port}\n`);
}

/** A server process; its stderr goes to `stderrFile` (or nowhere). */
function startProcess(args, label, stderrFile) {
  const stderr = stderrFile ? openSync(stderrFile, 'a') : 'ignore';
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', stderr] });
  return new Promise((resolvePromise, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match)
        resolvePromise({
          url: match[1],
          pid: child.pid,
          label,
          stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))),
        });
    });
    child.once('exit', (code) => reject(new Error(`${label} exited (${code}) before listening`)));
  });
}

/** Requests answered by each server process (warm-up included), by pid: the divisor of --prof's summary. */
const answered = new Map();

async function load(url, headers, pid, duration = SECONDS, paths = undefined) {
  const before = cpuMicros(pid);
  let next = 0;
  const result = await autocannon({
    url,
    // Each request the next path in turn (--ids).
    ...(paths
      ? {
          requests: [
            {
              setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }),
            },
          ],
        }
      : {}),
    connections: CONNECTIONS,
    ...(AMOUNT ? { amount: Number(AMOUNT) * CONNECTIONS } : { duration }),
    headers,
    ...(RATE ? { overallRate: Number(RATE) } : {}),
  });
  const after = cpuMicros(pid);
  const n = result.requests.total;
  answered.set(pid, (answered.get(pid) ?? 0) + n);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { rps: result.requests.average, ...perRequest(before, after, n) };
}

const percent = (x) => `${(100 * x).toFixed(0)}%`;
const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'netform-get-'));
  const builds = [{ name: 'this branch', dist: OURS }];
  if (BASELINE) builds.push({ name: 'baseline', dist: resolve(BASELINE) });
  builds.push(...EXTRA_BUILDS);
  for (const build of builds)
    if (!existsSync(join(build.dist, 'src/cli/main.js')))
      throw new Error(`${build.dist}: no built CLI (npm run build)`);
  const loadBefore = loadAverage();
  const started = [];
  try {
    const { issueToken, setServerDefault, startServer } = await import(join(OURS, 'server/index.js'));
    // One database, one device; every netform server serves its own copy.
    const dbPath = join(dir, 'seed.db');
    const { token } = await issueToken({ dbPath, email: 'admin@example.com' });
    await setServerDefault({ dbPath, key: 'ipv4_network', value: '10.0.0.0/8' });
    await setServerDefault({ dbPath, key: 'ipv6_network', value: 'fd00::/104' });
    const seedServer = await startServer({ dbPath, port: 0, host: '127.0.0.1', logger: false });
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = async (path, body) =>
      (
        await (
          await fetch(`${seedServer.url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) })
        ).json()
      ).data;
    const user = await post('/v0/users', { user: { email: 'owner@example.com' } });
    const device = await post('/v0/devices', {
      device: { user_id: user.id, public_key: Buffer.alloc(32, 7).toString('base64'), name: 'laptop' },
    });
    const bytes = await (await fetch(`${seedServer.url}/v0/devices/${device.id}`, { headers: auth })).text();
    await seedServer.close();
    const bytesFile = join(dir, 'device.json');
    writeFileSync(bytesFile, bytes);
    const path = `/v0/devices/${device.id}`;
    // --ids N: N - 1 more devices of the same owner, written through the Store in one transaction.
    const paths = [path];
    if (IDS > 1) {
      const { withStoreTransaction, deviceRow, deviceIpv4, deviceIpv6, key, storeNow } =
        await import('./scale-data.mjs');
      const now = storeNow();
      await withStoreTransaction(dbPath, async (tx) => {
        for (let i = 1; i < IDS; i++) {
          const id = randomUUID();
          const name = `device-${i}`;
          const [ipv4, ipv6] = [deviceIpv4(i + 10), deviceIpv6(i + 10)];
          await tx.insertDevice(deviceRow({ id, user_id: user.id, name, public_key: key(), ipv4, ipv6 }, now));
          paths.push(`/v0/devices/${id}`);
        }
      });
    }

    const targets = [];
    const modes = ONLY ? [ONLY] : ['quiet', 'logged'];
    for (const mode of modes) {
      const logFile = mode === 'logged' ? join(dir, 'bare-access.log') : undefined;
      const bare = await startProcess(
        [
          ...(PROF ? ['--cpu-prof', '--cpu-prof-dir', PROF] : []),
          fileURLToPath(import.meta.url),
          '--bare',
          bytesFile,
          ...(logFile ? [logFile] : []),
        ],
        'bare',
      );
      started.push(bare);
      targets.push({
        mode,
        name: `bare Fastify (${mode === 'quiet' ? 'logger: false' : 'one access line at info, to a file'})`,
        url: `${bare.url}${path}`,
        pid: bare.pid,
        headers: {},
        logFile,
        bare: true,
      });
      for (const build of builds) {
        const db = join(dir, `${mode}-${build.name.replace(/\W/g, '')}.db`);
        writeFileSync(db, readFileSync(dbPath));
        const stderrFile = mode === 'logged' ? join(dir, `${mode}-${build.name.replace(/\W/g, '')}.log`) : undefined;
        const args = [
          ...(PROF ? ['--cpu-prof', '--cpu-prof-dir', PROF] : []),
          join(build.dist, 'src/cli/main.js'),
          'serve',
          '--port',
          '0',
          '--db',
          db,
          '--log-level',
          mode === 'quiet' ? 'warn' : 'info',
        ];
        const server = await startProcess(args, build.name, stderrFile);
        started.push(server);
        targets.push({
          mode,
          name: `netform ${build.name} (${mode === 'quiet' ? '--log-level warn' : 'info, stderr to a file'})`,
          url: `${server.url}${path}`,
          pid: server.pid,
          headers: { authorization: `Bearer ${token}` },
          logFile: stderrFile,
        });
      }
    }
    const many = IDS > 1 ? paths : undefined;
    for (const t of targets) await load(t.url, t.headers, t.pid, 1, many);
    const results = new Map(targets.map((t) => [t, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const t of targets) {
        const r = await load(t.url, t.headers, t.pid, SECONDS, many);
        results.get(t).push(r);
        process.stderr.write(
          `round ${round + 1}: ${t.name}: ${Math.round(r.rps)} req/s, ${r.cpu.toFixed(1)} µs CPU, ${r.mainThread.toFixed(1)} on the main thread (load ${loadAverage()})\n`,
        );
      }
    for (const t of targets)
      if (t.logFile && !(statSync(t.logFile).size > 0)) throw new Error(`${t.name}: no access lines written`);
    console.log(
      `\n${AMOUNT ? `${AMOUNT} requests per connection` : `${SECONDS} s`} per round, ${ROUNDS} rounds, ${CONNECTIONS} connections, ${IDS} device${IDS > 1 ? 's in turn' : ''}${RATE ? `, ${RATE} requests per second` : ''}, Node ${process.version}; load average (1, 5, 15 min) ${loadBefore} before, ${loadAverage()} after\n`,
    );
    console.log(
      '| target | req/s (median) | rounds | server CPU µs/request (median; user + system from /proc/PID/stat) | main thread µs/request | vs bare, paired: req/s | vs bare, paired: CPU (rounds) |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const mode of modes) {
      const ofMode = targets.filter((t) => t.mode === mode);
      const floor = results.get(ofMode.find((t) => t.bare));
      for (const t of ofMode) {
        const rs = results.get(t);
        const rps = median(rs.map((r) => r.rps));
        const cpu = median(rs.map((r) => r.cpu));
        const split = `${median(rs.map((r) => r.user)).toFixed(1)} + ${median(rs.map((r) => r.system)).toFixed(1)}`;
        // Round by round against the bare server's figure of the same round.
        const rpsRatios = rs.map((r, i) => r.rps / floor[i].rps);
        const cpuRatios = pairedCpu(rs, floor).rounds;
        console.log(
          `| ${t.name} | ${Math.round(rps)} | ${rs.map((r) => Math.round(r.rps)).join(' / ')} | ${cpu.toFixed(1)} (${split}) | ${median(rs.map((r) => r.mainThread)).toFixed(1)} | ${percent(median(rpsRatios))} | ${percent(median(cpuRatios))} (${cpuRatios.map((x) => (100 * x).toFixed(0)).join(' ')}) |`,
        );
      }
    }
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    if (PROF) summariseProfiles(started);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * --prof: each server's profile as µs of its main thread's busy time per answered request, by
 * what the samples were in: netform's own code (dist/, by the nearest own function), a package,
 * a part of Node, the serializer (fast-json-stringify's generated code), the send (`writev`),
 * garbage collection. Start-up (module loading, building the app) is left out. The profile is
 * wall time on the thread: on a loaded machine a system call that wakes another process (the
 * send) also counts the time the server then waits for a CPU, which its CPU time does not.
 */
function summariseProfiles(servers) {
  const files = readdirSync(PROF).filter((f) => f.endsWith('.cpuprofile'));
  for (const server of servers) {
    const file = files.find((f) => f.split('.').includes(String(server.pid)));
    const requests = answered.get(server.pid);
    if (!file || !requests) continue;
    const profile = JSON.parse(readFileSync(join(PROF, file), 'utf8'));
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const byPart = new Map();
    const byOwn = new Map();
    const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
    for (let i = 0; i < profile.samples.length; i++) {
      const us = profile.timeDeltas[i + 1] ?? 0;
      const stack = [];
      for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) stack.push(nodes.get(id).callFrame);
      const leaf = stack[0];
      if (leaf.functionName === '(idle)') continue;
      if (
        stack.some((f) =>
          /cjs\/loader|esm\/|avvio|bootstrap|compileSchemas|buildApp|startServer/.test(f.url + f.functionName),
        )
      )
        continue;
      let part;
      if (leaf.functionName === '(garbage collector)') part = 'garbage collection';
      else if (leaf.functionName === '(program)') part = '(program)';
      else if (leaf.functionName === 'writev' || leaf.functionName === 'writeUtf8String') part = 'send (writev)';
      else
        for (const f of stack) {
          if (f.url.includes('/dist/')) {
            part = 'netform';
            add(byOwn, `${f.functionName || '(anonymous)'} ${f.url.replace(/.*\/dist\//, '')}:${f.lineNumber + 1}`, us);
            break;
          }
          if (f.url.includes('fast-json-stringify') || (f.url === '' && /^anonymous/.test(f.functionName))) {
            part = 'serializer';
            break;
          }
          if (f.url.includes('node_modules/')) {
            part = f.url.replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/, '$1');
            break;
          }
          if (f.url.startsWith('node:')) {
            part = `node ${f.url.replace(/^node:(internal\/)?/, '').split('/')[0]}`;
            break;
          }
        }
      add(byPart, part ?? 'other', us);
    }
    const total = [...byPart.values()].reduce((a, b) => a + b, 0);
    console.log(
      `\n${server.label}: ${requests} requests, ${(total / requests).toFixed(1)} µs busy per request (${file})`,
    );
    for (const [part, us] of [...byPart].sort((a, b) => b[1] - a[1]).slice(0, 16))
      console.log(`  ${(us / requests).toFixed(2).padStart(7)} µs  ${part}`);
    if (byOwn.size) console.log('  netform, by nearest own function:');
    for (const [name, us] of [...byOwn].sort((a, b) => b[1] - a[1]).slice(0, 12))
      console.log(`    ${(us / requests).toFixed(2).padStart(7)} µs  ${name}`);
  }
}

if (process.argv[2] === '--bare') await bareChild(process.argv[3], process.argv[4]);
else await main();
