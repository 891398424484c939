#!/usr/bin/env node
/**
 * What starting the bundled server costs: CPU (user + sys) and wall of `netform serve` from spawn
 * to its "listening on" line (SQLite, on a database that exists), of `serve` until it has answered
 * what a test asks first (its health, a list, a create, a read: the first use of four routes), and
 * of the `server` commands
 * (`server token create`, `server token list`, `server defaults show`) from spawn to exit. The
 * test suite starts about fifty servers and as many token commands; users pay it at every start.
 *
 *   node bench/serve-start.mjs [--runs 7] [--baseline OTHER/dist] [--postgres postgres://...] [--only WORD]
 *
 * With --baseline, the two builds alternate run by run (the machine's load hits both alike) and
 * the ratio this/baseline is printed per row. CPU of serve is read from /proc/PID/stat when the
 * line arrives; a command's from the shell's `times` (its children's user and sys). Medians.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    baseline: { type: 'string' },
    postgres: { type: 'string' },
    only: { type: 'string' },
  },
});
const runs = Number(args.runs);
const here = resolve(fileURLToPath(new URL('../dist', import.meta.url)));
const builds = [{ name: 'this', dist: here }];
if (args.baseline) builds.push({ name: 'baseline', dist: resolve(args.baseline) });
const TICK = 100; // clock ticks a second (USER_HZ on Linux)
const dir = mkdtempSync(join(tmpdir(), 'netform-serve-start-'));

function bin(dist) {
  return join(dist, 'src/cli/main.js');
}

/** CPU seconds (user + sys) a process has used so far. */
function cpuOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}

/**
 * `serve` until its listening line (then, with `requests`, until they are answered): { cpu, wall }
 * in seconds; then SIGTERM and wait for its exit.
 */
function serveOnce(dist, db, requests) {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [bin(dist), 'serve', '--port', '0', '--db', db], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let figures = null;
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (figures === null && out.includes('listening on')) {
        figures = {};
        const url = /listening on (\S+)/.exec(out)[1];
        (requests ? requests(url) : Promise.resolve()).then(
          () => {
            Object.assign(figures, { cpu: cpuOf(child.pid), wall: Number(process.hrtime.bigint() - started) / 1e9 });
            child.kill('SIGTERM');
          },
          (error) => {
            child.kill('SIGKILL');
            fail(error);
          },
        );
      }
    });
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('exit', () => (figures ? done(figures) : fail(new Error(`serve exited before listening: ${err}`))));
  });
}

/** A command from spawn to exit, through sh so that `times` reports its CPU: { cpu, wall, stdout }. */
function commandOnce(dist, argv) {
  return new Promise((done, fail) => {
    const quoted = [process.execPath, bin(dist), ...argv].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    const started = process.hrtime.bigint();
    const child = spawn('sh', ['-c', `${quoted} >"$OUTLOG" 2>"$ERRLOG" || exit 9; times`], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ERRLOG: join(dir, 'err.log'), OUTLOG: join(dir, 'out.log') },
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => {
      const wall = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) return fail(new Error(`${argv.join(' ')} failed: ${readFileSync(join(dir, 'err.log'), 'utf8')}`));
      // Second line: the children's user and sys, as 0m0.850s 0m0.100s.
      const seconds = out
        .trim()
        .split('\n')[1]
        .split(/\s+/)
        .map((t) => {
          const [, m, s] = /(\d+)m([\d.]+)s/.exec(t);
          return Number(m) * 60 + Number(s);
        });
      done({ cpu: seconds[0] + seconds[1], wall, stdout: readFileSync(join(dir, 'out.log'), 'utf8') });
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const tokens = new Map(); // database -> admin token
/** What a test does first with a server: its health, a list, a create and a read back (one serializer each). */
async function firstRequests(url, db) {
  const headers = { authorization: `Bearer ${tokens.get(db)}`, 'content-type': 'application/json' };
  const ok = async (response) => {
    if (!response.ok) throw new Error(`${response.url}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  await ok(await fetch(`${url}/healthz`));
  await ok(await fetch(`${url}/v0/users`, { headers }));
  const email = `u${Math.random().toString(36).slice(2)}@bench.test`;
  const { data } = await ok(
    await fetch(`${url}/v0/users`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ user: { email, role: 'unprivileged' } }),
    }),
  );
  await ok(await fetch(`${url}/v0/users/${data.id}`, { headers }));
}

const rows = [
  { name: 'serve to listening (SQLite)', run: (dist, db) => serveOnce(dist, db) },
  {
    name: 'serve, then 4 first requests (SQLite)',
    run: (dist, db) => serveOnce(dist, db, (url) => firstRequests(url, db)),
  },
  {
    name: 'server token create',
    run: (dist, db, i) => commandOnce(dist, ['server', 'token', 'create', '--email', `b${i}@bench.test`, '--db', db]),
  },
  { name: 'server token list', run: (dist, db) => commandOnce(dist, ['server', 'token', 'list', '--db', db]) },
  { name: 'server defaults show', run: (dist, db) => commandOnce(dist, ['server', 'defaults', 'show', '--db', db]) },
];
if (args.postgres) {
  rows.push({ name: 'serve to listening (PostgreSQL)', run: (dist) => serveOnce(dist, args.postgres) });
}
// --only WORD: the rows whose name has WORD (say "requests", "token").
if (args.only) rows.splice(0, rows.length, ...rows.filter((row) => row.name.includes(args.only)));

const load = [loadavg()[0]];
const figures = new Map(); // `${row}\t${build}` -> [{cpu, wall}]
try {
  // One database per build, made by that build (a first token), as a test server's would be.
  const dbs = new Map();
  for (const build of builds) {
    const db = join(dir, `${build.name}.db`);
    const { stdout } = await commandOnce(build.dist, [
      'server',
      'token',
      'create',
      '--email',
      'first@bench.test',
      '--db',
      db,
    ]);
    tokens.set(db, stdout.trim());
    dbs.set(build.name, db);
  }
  // A warm-up round (file cache), not counted.
  for (const build of builds) for (const row of rows) await row.run(build.dist, dbs.get(build.name), 'w');
  for (let i = 0; i < runs; i++) {
    const order = i % 2 ? [...builds].reverse() : builds;
    for (const row of rows) {
      for (const build of order) {
        const key = `${row.name}\t${build.name}`;
        if (!figures.has(key)) figures.set(key, []);
        figures.get(key).push(await row.run(build.dist, dbs.get(build.name), `${i}${build.name}`));
      }
    }
    load.push(loadavg()[0]);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const ms = (s) => `${Math.round(s * 1000)} ms`;
console.log(
  `${runs} runs each, alternating; medians. 1-min load average ${Math.min(...load).toFixed(1)}-${Math.max(...load).toFixed(1)}`,
);
const header = ['| row', ...builds.flatMap((b) => [`${b.name} CPU`, `${b.name} wall`])];
if (builds.length > 1) header.push('CPU this/baseline', 'wall this/baseline');
console.log(`${header.join(' | ')} |`);
console.log(`|${header.map(() => '---').join('|')}|`);
for (const row of rows) {
  const cells = [`| ${row.name}`];
  const med = builds.map((b) => {
    const xs = figures.get(`${row.name}\t${b.name}`);
    return { cpu: median(xs.map((x) => x.cpu)), wall: median(xs.map((x) => x.wall)) };
  });
  for (const m of med) cells.push(ms(m.cpu), ms(m.wall));
  if (builds.length > 1)
    cells.push(`${(med[0].cpu / med[1].cpu).toFixed(2)}×`, `${(med[0].wall / med[1].wall).toFixed(2)}×`);
  console.log(`${cells.join(' | ')} |`);
}
