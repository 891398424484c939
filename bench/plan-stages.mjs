#!/usr/bin/env node
/**
 * Processor time of each stage of one `plan`, in-process, for builds in turns: the measure that
 * holds on a loaded machine (wall times there swing by half; a stage's CPU far less).
 *
 *   node bench/plan-fixture.mjs DIR &        # the fleet, served; wait for "ready"
 *   node bench/plan-stages.mjs DIR --runs 3 [--baseline DIST] [--step NAME=DIST ...]
 *
 * Each run is a fresh process per build (builds alternating by round) doing what `plan -f
 * DIR/netform.yaml` does, in its order: the three list reads started, the desired state loaded
 * (`load`), the lists awaited and parsed (`lists`), the diff (`diff`) and the judgement on the state
 * after apply (`access`); each stage's CPU (user + system, all threads: garbage collection
 * included) and the process's peak RSS. The plan's changes, undeclared items and access changes
 * are digested: every build and run must give the same (exit 1 if not). Medians per build, the
 * ratio candidate / baseline, and the load average at start and end.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
};

const STAGE = `
import { createHash } from 'node:crypto';
const dist = process.env.STAGES_DIST;
const { openSession, readLiveState } = await import(dist + '/src/ops/session.js');
const { makePlan } = await import(dist + '/src/ops/plan.js');
const { loadDesired, loaderFor } = await import(dist + '/src/ops/desired.js');
const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const out = {};
let mark = cpu();
const stage = (name) => { const now = cpu(); out[name] = Math.round(now - mark); mark = now; };
const session = await openSession({ server: { url: process.env.NETFORM_URL, token: process.env.NETFORM_TOKEN }, tokenUser: process.env.NETFORM_TOKEN_USER, tuning: { timeoutMs: 300000 } });
const lists = readLiveState(session);
stage('start');
const desired = await loadDesired(process.env.STAGES_FILE, {}, loaderFor());
stage('load');
const live = await lists;
stage('lists');
const plan = await makePlan(desired, { runTests: true }, session, { phase: (p) => p !== 'fetch' && stage(p) }, Promise.resolve(live));
const digest = createHash('sha256').update(JSON.stringify([plan.changes, plan.undeclared, plan.access, plan.outcome])).digest('hex').slice(0, 16);
process.stdout.write(JSON.stringify({ ...out, total: Math.round(cpu()), rss: Math.round(process.resourceUsage().maxRSS / 1024), digest }));
`;

const dir = resolve(process.argv[2] ?? '');
const env = Object.fromEntries(
  [...readFileSync(join(dir, 'env.sh'), 'utf8').matchAll(/(NETFORM_\w+)=(\S+)/g)].map((m) => [m[1], m[2]]),
);
const RUNS = Number(arg('--runs', '3'));
const builds = [{ name: 'candidate', dist: join(ROOT, 'dist') }];
const BASELINE = arg('--baseline', undefined);
if (BASELINE) builds.unshift({ name: 'baseline', dist: resolve(BASELINE) });
// `--step NAME=DIST` (repeatable): more builds in the same turns, such as one per commit.
process.argv.forEach((a, i) => {
  if (a !== '--step') return;
  const [name, dist] = process.argv[i + 1].split('=');
  builds.splice(builds.length - 1, 0, { name, dist: resolve(dist) });
});

function once(dist) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', STAGE], {
      env: { ...process.env, ...env, STAGES_DIST: dist, STAGES_FILE: join(dir, 'netform.yaml') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (text += c));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(JSON.parse(text)) : fail(new Error(`stages exited ${code}`))));
  });
}

const la = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
console.log(`load average at start: ${la()}`);
const results = new Map(builds.map((b) => [b.name, []]));
for (let i = 0; i < RUNS; i++) {
  // Each round in another order: the builds rotate, and every other round runs backwards.
  const rotated = builds.map((_, j) => builds[(i + j) % builds.length]);
  for (const b of i % 2 === 0 ? rotated : rotated.reverse()) {
    const r = await once(b.dist);
    results.get(b.name).push(r);
    console.log(`${b.name} ${JSON.stringify(r)} (load ${la()})`);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const stages = ['start', 'load', 'lists', 'diff', 'access', 'total', 'rss'];
console.log(`\n| build | ${stages.join(' | ')} |\n|---|${stages.map(() => '---').join('|')}|`);
const med = new Map();
for (const [name, rs] of results) {
  med.set(name, Object.fromEntries(stages.map((s) => [s, median(rs.map((r) => r[s]))])));
  console.log(`| ${name} | ${stages.map((s) => med.get(name)[s]).join(' | ')} |`);
}
if (BASELINE)
  for (const b of builds.slice(1))
    console.log(
      `| ${b.name} / baseline | ${stages.map((s) => (med.get(b.name)[s] / med.get('baseline')[s]).toFixed(2) + '×').join(' | ')} |`,
    );
const digests = new Set([...results.values()].flat().map((r) => r.digest));
console.log(
  `\ndigests: ${[...digests].join(', ')}${digests.size === 1 ? ' (the same from every build and run)' : ' DIFFER'}`,
);
console.log(`load average at end: ${la()}`);
if (digests.size !== 1) process.exitCode = 1;
