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
 * figure of a target is the median of its rounds.
 *
 *   npm run build && node bench/server-get.mjs [--seconds 3] [--rounds 5] [--connections 16]
 *       [--baseline /path/to/other/dist] [--prof DIR] [--only quiet|logged]
 *
 * --prof DIR: netform servers run with --cpu-prof into DIR (a profile per server, on exit).
 */
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const OURS = resolve(HERE, '../dist');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}
const SECONDS = Number(option('seconds', '3'));
const ROUNDS = Number(option('rounds', '5'));
const CONNECTIONS = Number(option('connections', '16'));
const BASELINE = option('baseline', undefined);
const PROF = option('prof', undefined);
const ONLY = option('only', undefined);
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

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
          stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))),
        });
    });
    child.once('exit', (code) => reject(new Error(`${label} exited (${code}) before listening`)));
  });
}

async function load(url, headers, pid, duration = SECONDS) {
  const before = cpuMicros(pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration, headers });
  const cpu = (cpuMicros(pid) - before) / result.requests.total;
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { rps: result.requests.average, cpu };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'netform-get-'));
  const builds = [{ name: 'this branch', dist: OURS }];
  if (BASELINE && existsSync(join(BASELINE, 'src/cli/main.js'))) builds.push({ name: 'baseline', dist: BASELINE });
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

    const targets = [];
    const modes = ONLY ? [ONLY] : ['quiet', 'logged'];
    for (const mode of modes) {
      const logFile = mode === 'logged' ? join(dir, 'bare-access.log') : undefined;
      const bare = await startProcess(
        [fileURLToPath(import.meta.url), '--bare', bytesFile, ...(logFile ? [logFile] : [])],
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
    for (const t of targets) await load(t.url, t.headers, t.pid, 1);
    const results = new Map(targets.map((t) => [t, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const t of targets) {
        const r = await load(t.url, t.headers, t.pid);
        results.get(t).push(r);
        process.stderr.write(`round ${round + 1}: ${t.name}: ${Math.round(r.rps)} req/s, ${r.cpu.toFixed(1)} µs CPU\n`);
      }
    for (const t of targets)
      if (t.logFile && !(statSync(t.logFile).size > 0)) throw new Error(`${t.name}: no access lines written`);
    console.log(`\n${SECONDS} s per round, ${ROUNDS} rounds, ${CONNECTIONS} connections, Node ${process.version}\n`);
    console.log(
      '| target | req/s (median) | rounds | server CPU µs/request (median) | vs bare (req/s) | vs bare (CPU) |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const mode of modes) {
      const ofMode = targets.filter((t) => t.mode === mode);
      const floor = ofMode.find((t) => t.bare);
      const fr = median(results.get(floor).map((r) => r.rps));
      const fc = median(results.get(floor).map((r) => r.cpu));
      for (const t of ofMode) {
        const rs = results.get(t);
        const rps = median(rs.map((r) => r.rps));
        const cpu = median(rs.map((r) => r.cpu));
        console.log(
          `| ${t.name} | ${Math.round(rps)} | ${rs.map((r) => Math.round(r.rps)).join(' / ')} | ${cpu.toFixed(1)} | ${((100 * rps) / fr).toFixed(0)}% | ${((100 * fc) / cpu).toFixed(0)}% |`,
        );
      }
    }
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--bare') await bareChild(process.argv[3], process.argv[4]);
else await main();
