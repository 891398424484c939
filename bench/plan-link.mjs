#!/usr/bin/env node
/**
 * Plan over a slow link against a per-object refresh (W3.9: "the over-a-link ratio stays ≥ 20×").
 *
 *   npm run build && node bench/plan-link.mjs [--runs N] [--users N] [--delay MS] [--in-flight N]
 *
 * The server (the fleet of bench/scale-data.mjs: by default 10,000 users, 20,000 devices, 30,000
 * rules) is reached through a loopback proxy written here that holds every chunk DELAY ms (10 by
 * default) in each direction, keeping their order: a link with a 20 ms round trip. Over it:
 *   - `netform plan` of the 1%-changed desired state, the built CLI in its own process, whole
 *     command (it reads the three lists);
 *   - a per-object refresh, as a provider that reads each object it manages by id does: one
 *     `GET /v0/<kind>/<id>` for every user, device and rule, IN_FLIGHT (10) at a time over
 *     keep-alive connections, with the ids known beforehand (as a state file holds them).
 * The ratio refresh / plan is the figure; both run in turns, RUNS rounds, medians reported.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createConnection, createServer } from 'node:net';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServer } from '../dist/server/index.js';
import { argValue, desiredYaml, median, model, prepareDatabase, runCli, seed } from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '2'));
const USERS = Number(argValue('--users', '10000'));
const DELAY = Number(argValue('--delay', '10'));
const IN_FLIGHT = Number(argValue('--in-flight', '10'));

/**
 * A TCP proxy that holds each chunk `delay` ms in each direction. Timers of one duration fire in
 * the order they were set, so chunks keep their order; a chunk's delay overlaps the next ones',
 * as on a link with latency and no bandwidth limit.
 */
function slowProxy(target, delay) {
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    const relay = (from, to) => {
      from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), delay));
      from.on('end', () => setTimeout(() => to.end(), delay));
    };
    relay(client, upstream);
    relay(upstream, client);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

function get(agent, url, token) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c) => (body += c));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${url}: ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every object by id, IN_FLIGHT at a time over keep-alive connections. */
async function refresh(base, token, paths) {
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++];
      const answer = await get(agent, `${base}${path}`, token);
      if (!answer.data) throw new Error(`${path}: no data`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  agent.destroy();
  return performance.now() - started;
}

const dir = mkdtempSync(join(tmpdir(), 'netform-bench-link-'));
try {
  const dbPath = join(dir, 'netform.db');
  const m = model({ users: USERS, devices: USERS * 2, rules: USERS * 3 });
  const token = await prepareDatabase(dbPath);
  await seed(dbPath, m);
  const file = join(dir, 'netform.yaml');
  writeFileSync(file, desiredYaml(m).text);
  const server = await startServer({ dbPath, port: 0, host: '127.0.0.1', logLevel: 'warn' });
  const proxy = await slowProxy(new URL(server.url), DELAY);
  const agent = new Agent({ keepAlive: true });
  const lists = await Promise.all(['users', 'devices', 'rules'].map((c) => get(agent, `${server.url}/v0/${c}`, token)));
  agent.destroy();
  const paths = ['users', 'devices', 'rules'].flatMap((c, i) => lists[i].data.map((o) => `/v0/${c}/${o.id}`));
  const env = { NETFORM_URL: proxy.url, NETFORM_TOKEN: token, NETFORM_TOKEN_USER: 'admin@example.com' };
  const load = [loadavg()[0]];
  const plans = [];
  const refreshes = [];
  for (let run = 0; run < RUNS; run++) {
    const plan = await runCli(['plan', '-f', file], env);
    if (plan.code !== 2) throw new Error(`plan exited ${plan.code}: ${plan.stderr.slice(0, 500)}`);
    plans.push(plan.wallMs);
    refreshes.push(await refresh(proxy.url, token, paths));
  }
  load.push(loadavg()[0]);
  await proxy.close();
  await server.close();
  const p = median(plans);
  const r = median(refreshes);
  const fmt = (xs) => xs.map((x) => (x / 1000).toFixed(2)).join(', ');
  console.log(
    `plan over a ${DELAY} ms-each-way link, ${m.users.length} users, ${m.devices.length} devices, ${m.rules.length} rules (${RUNS} runs, medians; load average ${load.map((l) => l.toFixed(1)).join(' -> ')}):`,
  );
  console.log(`  plan (whole command)          ${(p / 1000).toFixed(2)} s (runs: ${fmt(plans)})`);
  console.log(
    `  per-object refresh, ${IN_FLIGHT} in flight ${(r / 1000).toFixed(2)} s (runs: ${fmt(refreshes)}; ${paths.length} GETs)`,
  );
  console.log(`  ratio refresh / plan: ${(r / p).toFixed(1)}× (target ≥ 20×: ${r / p >= 20 ? 'met' : 'missed'})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
