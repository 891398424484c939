#!/usr/bin/env node
/**
 * Server throughput on each store, in one run: requests per second of GET /v0/devices/{id}, rule
 * create and device create, on SQLite, on PostgreSQL with one replica, and on PostgreSQL with two
 * replicas (autocannon spreads its connections over both). Every server is a real `netform serve`
 * process; PostgreSQL is a throwaway cluster started here (as test/helpers/postgres.ts does),
 * unless NETFORM_BENCH_POSTGRES_URL names a database server to create databases on.
 *
 *   npm run build && node bench/server-stores.mjs [--seconds N] [--connections N]
 */
import autocannon from 'autocannon';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const CLI = new URL('../dist/src/cli/main.js', import.meta.url).pathname;
const arg = (name, fallback) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback;
const SECONDS = arg('--seconds', 5);
const CONNECTIONS = arg('--connections', 10);
const run = promisify(execFile);

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startCluster() {
  const bin = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((d) =>
    existsSync(join(d, 'initdb')),
  );
  if (!bin) throw new Error('no PostgreSQL binaries: install the postgresql package or set NETFORM_BENCH_POSTGRES_URL');
  const dir = mkdtempSync(join(tmpdir(), 'netform-bench-pg-'));
  const owner = userInfo().uid === 0 ? 'postgres' : null;
  if (owner) chownSync(dir, Number(execFileSync('id', ['-u', owner])), Number(execFileSync('id', ['-g', owner])));
  const as = (cmd, args) =>
    owner ? run('runuser', ['-u', owner, '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args);
  const port = await freePort();
  await as('initdb', ['-D', join(dir, 'data'), '-U', 'netform', '-A', 'trust', '--locale=C', '-E', 'UTF8']);
  // Durable settings (fsync on), as a production server would run.
  await as('pg_ctl', [
    '-D',
    join(dir, 'data'),
    '-l',
    join(dir, 'log'),
    '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir}`,
    '-w',
    'start',
  ]);
  return {
    url: `postgres://netform@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await as('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function createDatabase(clusterUrl) {
  const name = `netform_bench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function cli(args) {
  return execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function serve(db) {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--db', db, '--log-level', 'silent'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').once('data', (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match)
        resolve({
          url: match[1],
          stop: () => new Promise((done) => (child.once('exit', done), child.kill('SIGTERM'))),
        });
      else reject(new Error(`unexpected: ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

async function api(url, token, method, path, body) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()).data;
}

async function measure(urls, token, request) {
  const result = await autocannon({
    url: urls.length === 1 ? urls[0] : urls,
    connections: CONNECTIONS * urls.length,
    duration: SECONDS,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [request],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors`);
  return Math.round(result.requests.average);
}

/** Sets up one database, starts `replicas` servers on it, and measures the three requests. */
async function bench(db, replicas) {
  const token = cli(['server', 'token', 'create', '--email', 'bench@example.com', '--db', db]);
  cli(['server', 'defaults', 'set', 'ipv4_network', '10.0.0.0/8', '--db', db]);
  cli(['server', 'defaults', 'set', 'ipv6_network', 'fd00::/80', '--db', db]);
  cli(['server', 'defaults', 'set', 'max_devices_per_user', '1000000', '--db', db]);
  const servers = [];
  for (let i = 0; i < replicas; i++) servers.push(await serve(db));
  const urls = servers.map((s) => s.url);
  try {
    const user = await api(urls[0], token, 'POST', '/v0/users', { user: { email: 'owner@example.com' } });
    const device = await api(urls[0], token, 'POST', '/v0/devices', {
      device: { user_id: user.id, public_key: randomBytes(32).toString('base64') },
    });
    let n = 0;
    const get = await measure(urls, token, { method: 'GET', path: `/v0/devices/${device.id}` });
    const rule = await measure(urls, token, {
      method: 'POST',
      path: '/v0/rules',
      setupRequest: (req) => {
        const i = n++;
        return {
          ...req,
          body: JSON.stringify({
            rule: { action: 'drop', destination: `100.${64 + ((i >> 16) & 63)}.${(i >> 8) & 255}.${i & 255}` },
          }),
        };
      },
    });
    const deviceCreate = await measure(urls, token, {
      method: 'POST',
      path: '/v0/devices',
      setupRequest: (req) => ({
        ...req,
        body: JSON.stringify({ device: { user_id: user.id, public_key: randomBytes(32).toString('base64') } }),
      }),
    });
    return { get, rule, device: deviceCreate };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'netform-bench-'));
const cluster = process.env.NETFORM_BENCH_POSTGRES_URL
  ? { url: process.env.NETFORM_BENCH_POSTGRES_URL, stop: async () => {} }
  : await startCluster();
try {
  const rows = [
    ['SQLite', await bench(join(dir, 'netform.db'), 1)],
    ['PostgreSQL, 1 replica', await bench(await createDatabase(cluster.url), 1)],
    ['PostgreSQL, 2 replicas', await bench(await createDatabase(cluster.url), 2)],
  ];
  console.log(`requests per second, ${SECONDS} s each, ${CONNECTIONS} connections per replica\n`);
  console.log('| store | GET /v0/devices/{id} | POST /v0/rules | POST /v0/devices |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const [name, r] of rows) console.log(`| ${name} | ${r.get} | ${r.rule} | ${r.device} |`);
} finally {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
