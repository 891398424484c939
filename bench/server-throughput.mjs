#!/usr/bin/env node
/**
 * Server throughput, side by side in one run (issue 13, "a faster server, still durable"):
 *
 * - GET /v0/devices/{id} against a bare Fastify route returning the same bytes;
 * - POST /v0/rules and POST /v0/devices against a bare Fastify route doing one durable SQLite
 *   insert per request (WAL, synchronous=FULL), the floor any durable create must pay;
 * - the same netform requests on `main`'s build (BASELINE, default /work/main/dist) when present;
 * - for every target, the server's CPU time per answered request and its paired ratio to the
 *   floor, both as bench/server-cpu.mjs defines them (the same as server-get.mjs's): steadier than
 *   requests per second on a shared machine, where another process's load moves the rates of all
 *   targets. The GETs go to servers of their own whose databases take no writes, with the
 *   Authorization header alone, as in server-get.mjs;
 * - GET of the three lists holding 60,000 objects each, this build against main's.
 *
 *   npm run build && node bench/server-throughput.mjs [--seconds 5] [--rounds 3] [--connections 16]
 *       [--baseline /path/to/other/dist] [--no-lists] [--no-rates] [--log-level warn] [--creates-only]
 *
 * Every server is a real `netform serve` process (default options unless --log-level: request logs
 * at info level to stderr, here /dev/null; metrics on) or a bare Fastify process, each alone on its port; the load
 * generator (autocannon) runs in this process. Targets take turns round by round so that load on
 * the shared machine falls on all alike; the figure of a target is the median of its rounds, and
 * the paired columns the median of each round's ratio to its floor measured in the same round.
 * Takes about (1 + rounds × seconds) × targets seconds plus the lists: with --seconds 3 --rounds 3
 * --no-lists and a baseline, 11 targets, about 2 minutes; with --creates-only, 5 targets, about 1 minute.
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { cpuMicros, median, pairedCpu, perRequest } from './server-cpu.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OURS = resolve(HERE, '../dist');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}
const SECONDS = Number(option('seconds', '5'));
const ROUNDS = Number(option('rounds', '3'));
const CONNECTIONS = Number(option('connections', '16'));
const BASELINE = option('baseline', '/work/main/dist');
const LISTS = !process.argv.includes('--no-lists');
const RATES = !process.argv.includes('--no-rates');
/** Only the creates (bare insert, this build and the baseline; no GETs, no group-commit-off rows). */
const CREATES_ONLY = process.argv.includes('--creates-only');
const LIST_SIZE = 60_000;
/** netform servers' --log-level; their default (info) when not given. */
const LOG_LEVEL = option('log-level', undefined);
const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const LOAD_BEFORE = loadAverage();
const key = () => randomBytes(32).toString('base64');

// ---------------------------------------------------------------- child processes (servers)

/** A bare Fastify server in its own process: `get BYTES_FILE` or `insert DB_PATH`. */
async function bareChild(kind, arg) {
  const { default: Fastify } = await import('fastify');
  // `get-logged`: the same route with Fastify's default request logs (two lines a request; pino, info, stderr).
  const app = Fastify({ logger: kind === 'get-logged' ? { level: 'info', stream: process.stderr } : false });
  if (kind === 'get' || kind === 'get-logged') {
    const { readFileSync } = await import('node:fs');
    const bytes = readFileSync(arg);
    app.get('/v0/devices/:id', async (_request, reply) => reply.type('application/json; charset=utf-8').send(bytes));
  } else {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(arg);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, body TEXT NOT NULL, inserted_at TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO items (id, body, inserted_at) VALUES (?, ?, ?)');
    app.post('/bare', async (request, reply) => {
      const row = { id: randomUUID(), ...request.body.item, inserted_at: new Date().toISOString() };
      insert.run(row.id, JSON.stringify(request.body.item), row.inserted_at);
      return reply.code(201).send({ data: row });
    });
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`listening on http://127.0.0.1:${app.server.address().port}\n`);
}

function startProcess(args, label, env = {}) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...env } });
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

const serve = (build, dbPath, label) =>
  startProcess(
    [
      join(build.dist, 'src/cli/main.js'),
      'serve',
      '--port',
      '0',
      '--db',
      dbPath,
      ...(LOG_LEVEL ? ['--log-level', LOG_LEVEL] : []),
    ],
    label,
    build.env,
  );

// ---------------------------------------------------------------- load

/** One load of `url`; `pid`: the server's process, whose CPU time per answered request is measured too. */
async function load(url, requests, pid, extra = {}) {
  const cpuBefore = cpuMicros(pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, requests, ...extra });
  const { cpu } = perRequest(cpuBefore, cpuMicros(pid), result.requests.total);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpu };
}

// ---------------------------------------------------------------- the run

async function prepareDatabase(dist, dir, name) {
  const { issueToken, setServerDefault } = await import(join(dist, 'server/index.js'));
  const dbPath = join(dir, `${name}.db`);
  const { token } = await issueToken({ dbPath, email: 'admin@example.com' });
  for (const [k, v] of [
    ['ipv4_network', '10.0.0.0/8'],
    ['ipv6_network', 'fd00::/104'],
    ['max_devices_per_user', '1000000'],
  ]) {
    await setServerDefault({ dbPath, key: k, value: v });
  }
  return { dbPath, token };
}

async function seedLists(dbPath) {
  const { openStore } = await import(join(OURS, 'server/store/index.js'));
  const { formatAddress } = await import(join(OURS, 'src/model/index.js'));
  const store = await openStore(dbPath);
  const now = new Date().toISOString().replace('Z', '000Z');
  await store.transaction(async (tx) => {
    const users = [];
    for (let i = 0; i < LIST_SIZE; i++) {
      const id = randomUUID();
      users.push(id);
      await tx.insertUser({
        id,
        email: `list-${i}@example.com`,
        role: 'unprivileged',
        password_hash: null,
        last_signed_in_at: null,
        last_signed_in_method: null,
        disabled_at: null,
        inserted_at: now,
        updated_at: now,
      });
    }
    for (let i = 0; i < LIST_SIZE; i++) {
      await tx.insertDevice({
        id: randomUUID(),
        user_id: users[i],
        name: `device-${i}`,
        description: i % 2 ? 'a laptop' : null,
        public_key: key(),
        preshared_key: key(),
        ipv4: formatAddress(4, 0x0b000002n + BigInt(i)),
        ipv6: formatAddress(6, 0xfd000000000000000000000001000002n + BigInt(i)),
        allowed_ips: i % 3 ? null : ['10.0.0.0/8'],
        dns: null,
        endpoint: null,
        mtu: i % 3 ? null : 1400,
        persistent_keepalive: null,
        use_default_allowed_ips: i % 3 !== 0,
        use_default_dns: true,
        use_default_endpoint: true,
        use_default_mtu: i % 3 !== 0,
        use_default_persistent_keepalive: true,
        remote_ip: null,
        latest_handshake: null,
        rx_bytes: null,
        tx_bytes: null,
        inserted_at: now,
        updated_at: now,
      });
      await tx.insertRule({
        id: randomUUID(),
        action: i % 2 ? 'accept' : 'drop',
        destination: formatAddress(4, 0x64400000n + BigInt(i * 3)),
        port_type: i % 4 ? 'tcp' : null,
        port_range: i % 4 ? '443 - 443' : null,
        user_id: i % 5 ? null : users[i],
        inserted_at: now,
        updated_at: now,
      });
    }
  });
  await store.close();
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'netform-throughput-'));
  const builds = [
    { name: 'this branch', dist: OURS },
    { name: 'this branch, group commit off', dist: OURS, env: { NETFORM_SQLITE_GROUP_COMMIT: '0' }, writesOnly: true },
  ].filter((b) => !(CREATES_ONLY && b.writesOnly));
  if (BASELINE && existsSync(join(BASELINE, 'src/cli/main.js')) && resolve(BASELINE) !== OURS)
    builds.push({ name: 'main', dist: BASELINE });
  const started = [];
  try {
    // One database per build and target kind, so that one target's writes never slow another's reads.
    const servers = {};
    for (const build of builds) {
      const db = await prepareDatabase(OURS, dir, `${build.name.replace(/\W/g, '')}`);
      const server = await serve(build, db.dbPath, build.name);
      started.push(server);
      servers[build.name] = { ...server, token: db.token };
    }
    const headers = (token) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    const api = async (server, method, path, body) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: headers(server.token),
        body: body && JSON.stringify(body),
      });
      return { status: res.status, text: await res.text() };
    };

    // Device creates go round-robin to OWNERS users, as in a fleet (one user with thousands of
    // devices would measure the per-user name and limit checks instead).
    const OWNERS = 500;
    for (const server of Object.values(servers)) {
      server.owners = [];
      for (let i = 0; i < OWNERS; i++)
        server.owners.push(
          JSON.parse((await api(server, 'POST', '/v0/users', { user: { email: `owner${i}@example.com` } })).text).data
            .id,
        );
      server.next = 0;
    }
    // The GETs go to servers of their own, on databases that take no writes during the run (as in
    // server-get.mjs): the creates' rounds would otherwise renew what the reader keeps, and grow
    // the database and the heap, between the GET rounds.
    const getServers = {};
    for (const build of builds.filter((b) => !b.writesOnly)) {
      const db = await prepareDatabase(OURS, dir, `get-${build.name.replace(/\W/g, '')}`);
      const server = { ...(await serve(build, db.dbPath, `${build.name} GETs`)), token: db.token };
      started.push(server);
      const owner = JSON.parse((await api(server, 'POST', '/v0/users', { user: { email: 'get@example.com' } })).text)
        .data.id;
      server.device = JSON.parse(
        (await api(server, 'POST', '/v0/devices', { device: { user_id: owner, public_key: key() } })).text,
      ).data;
      getServers[build.name] = server;
    }
    const bytes = (await api(getServers['this branch'], 'GET', `/v0/devices/${getServers['this branch'].device.id}`))
      .text;
    const bytesFile = join(dir, 'device.json');
    (await import('node:fs')).writeFileSync(bytesFile, bytes);
    const bareGet = await startProcess([fileURLToPath(import.meta.url), '--bare', 'get', bytesFile], 'bare get');
    started.push(bareGet);
    const bareGetLogged = await startProcess(
      [fileURLToPath(import.meta.url), '--bare', 'get-logged', bytesFile],
      'bare get, logged',
    );
    started.push(bareGetLogged);
    const bareInsert = await startProcess(
      [fileURLToPath(import.meta.url), '--bare', 'insert', join(dir, 'bare.db')],
      'bare insert',
    );
    started.push(bareInsert);

    let counter = 0;
    const ruleBody = () =>
      JSON.stringify({
        rule: {
          destination: `100.${64 + ((counter >> 16) & 63)}.${(counter >> 8) & 255}.${counter++ & 255}`,
          action: 'accept',
        },
      });
    const deviceBody = (server) =>
      JSON.stringify({ device: { user_id: server.owners[server.next++ % server.owners.length], public_key: key() } });

    const targets = [
      {
        group: 'get',
        name: 'bare Fastify, same bytes',
        url: `${bareGet.url}/v0/devices/${getServers['this branch'].device.id}`,
        pid: bareGet.pid,
        requests: [{ method: 'GET' }],
      },
      ...builds
        .filter((b) => !b.writesOnly)
        .map((b) => ({
          group: 'get',
          name: `netform GET /v0/devices/{id} (${b.name})`,
          url: `${getServers[b.name].url}/v0/devices/${getServers[b.name].device.id}`,
          pid: getServers[b.name].pid,
          requests: [{ method: 'GET', headers: { authorization: `Bearer ${getServers[b.name].token}` } }],
        })),
      {
        group: 'get',
        name: "bare Fastify, same bytes, Fastify's default request logs (two lines)",
        url: `${bareGetLogged.url}/v0/devices/${getServers['this branch'].device.id}`,
        pid: bareGetLogged.pid,
        requests: [{ method: 'GET' }],
      },
      {
        group: 'create',
        name: 'bare Fastify, one durable SQLite insert',
        url: `${bareInsert.url}/bare`,
        pid: bareInsert.pid,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (r) => ({
              ...r,
              body: JSON.stringify({ item: { destination: `10.0.0.${counter++ & 255}`, action: 'accept' } }),
            }),
          },
        ],
      },
      ...builds.flatMap((b) => [
        {
          group: 'create',
          name: `netform POST /v0/rules (${b.name})`,
          url: `${servers[b.name].url}/v0/rules`,
          pid: servers[b.name].pid,
          requests: [
            {
              method: 'POST',
              headers: headers(servers[b.name].token),
              setupRequest: (r) => ({ ...r, body: ruleBody() }),
            },
          ],
        },
        {
          group: 'create',
          name: `netform POST /v0/devices (${b.name})`,
          url: `${servers[b.name].url}/v0/devices`,
          pid: servers[b.name].pid,
          requests: [
            {
              method: 'POST',
              headers: headers(servers[b.name].token),
              setupRequest: (r) => ({ ...r, body: deviceBody(servers[b.name]) }),
            },
          ],
        },
      ]),
    ];
    // The netform GETs come right after the bare GET, as in server-get.mjs: a paired ratio is only
    // as good as the load staying the same between its two measurements.
    if (!RATES) targets.length = 0;
    if (CREATES_ONLY)
      for (let i = targets.length - 1; i >= 0; i--)
        if (targets[i].group !== 'create' || targets[i].name.includes('group commit off')) targets.splice(i, 1);
    // Warm-up, then rounds in turns.
    for (const t of targets) await load(t.url, t.requests, t.pid, { duration: 1 });
    const results = new Map(targets.map((t) => [t, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) {
        const r = await load(t.url, t.requests, t.pid);
        results.get(t).push(r);
        process.stderr.write(`round ${round + 1}: ${t.name}: ${Math.round(r.rps)} req/s, ${r.cpu.toFixed(1)} µs CPU\n`);
      }
    }

    const row = (t) => {
      const rs = results.get(t);
      return {
        name: t.name,
        group: t.group,
        rps: median(rs.map((r) => r.rps)),
        rounds: rs.map((r) => Math.round(r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
        cpu: median(rs.map((r) => r.cpu)),
      };
    };
    const rows = targets.map(row);
    const floorOf = (group) => rows.find((r) => r.group === group)?.rps;
    // Paired: each round's figure against its group's floor in the same round (measured just
    // before it), the median of those ratios; a load that comes and goes moves both sides alike.
    const paired = (name, group) => {
      const rs = results.get(targets.find((t) => t.name === name));
      const floor = results.get(targets.find((t) => t.group === group));
      const rps = rs.map((r, i) => r.rps / floor[i].rps);
      const cpu = pairedCpu(rs, floor).rounds;
      const pct = (x) => `${(100 * x).toFixed(0)}%`;
      return { rps: pct(median(rps)), cpu: `${pct(median(cpu))} (${cpu.map((x) => (100 * x).toFixed(0)).join(' ')})` };
    };
    const logs = LOG_LEVEL
      ? `netform servers at --log-level ${LOG_LEVEL}`
      : 'netform servers at their default log level';
    console.log(
      `\n${SECONDS} s per round, ${ROUNDS} rounds, ${CONNECTIONS} connections, ${logs}, Node ${process.version}; load average (1, 5, 15 min) ${LOAD_BEFORE} at the start, ${loadAverage()} now\n`,
    );
    console.log(
      '| target | req/s (median) | rounds | p50 ms | p99 ms | server CPU µs/request | vs its floor | vs its floor, paired: req/s | paired: floor CPU / CPU (rounds) |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const floor = floorOf(r.group);
      const p = paired(r.name, r.group);
      console.log(
        `| ${r.name} | ${Math.round(r.rps)} | ${r.rounds.join(' / ')} | ${r.p50} | ${r.p99} | ${r.cpu.toFixed(1)} | ${((100 * r.rps) / floor).toFixed(0)}% | ${p.rps} | ${p.cpu} |`,
      );
    }

    if (LISTS) {
      // Lists of 60,000: a copy of one seeded file per build, each served by its build.
      const seeded = join(dir, 'lists.db');
      const prepared = await prepareDatabase(OURS, dir, 'lists');
      copyFileSync(prepared.dbPath, seeded);
      const t0 = performance.now();
      await seedLists(prepared.dbPath);
      const seedSeconds = ((performance.now() - t0) / 1000).toFixed(1);
      const listServers = [];
      for (const build of builds.filter((b) => !b.writesOnly)) {
        const path = join(dir, `lists-${build.name.replace(/\W/g, '')}.db`);
        copyFileSync(prepared.dbPath, path);
        const server = await serve(build, path, `${build.name} lists`);
        started.push(server);
        listServers.push({ build, server });
      }
      const times = new Map();
      for (let round = 0; round < 5; round++) {
        for (const { build, server } of listServers) {
          for (const path of ['/v0/users', '/v0/devices', '/v0/rules']) {
            const t = performance.now();
            const res = await fetch(`${server.url}${path}`, { headers: headers(prepared.token) });
            const text = await res.text();
            const ms = performance.now() - t;
            if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
            const k = `${path}|${build.name}`;
            times.set(k, [...(times.get(k) ?? []), ms]);
            if (round === 0) times.set(`${k}|bytes`, [text.length]);
          }
        }
      }
      console.log(
        `\nLists of ${LIST_SIZE.toLocaleString('en')} objects (seeded in ${seedSeconds} s), one request at a time, 5 rounds, median ms:\n`,
      );
      const listBuilds = builds.filter((b) => !b.writesOnly);
      console.log(`| list | ${listBuilds.map((b) => b.name).join(' | ')} | bytes |`);
      console.log(`|---|${listBuilds.map(() => '---|').join('')}---|`);
      for (const path of ['/v0/users', '/v0/devices', '/v0/rules']) {
        const cells = listBuilds.map((b) => median(times.get(`${path}|${b.name}`)).toFixed(0));
        console.log(
          `| GET ${path} | ${cells.join(' | ')} | ${times.get(`${path}|this branch|bytes`)[0].toLocaleString('en')} |`,
        );
      }
    }
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--bare') {
  await bareChild(process.argv[3], process.argv[4]);
} else {
  await main();
}
