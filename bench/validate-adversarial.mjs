#!/usr/bin/env node
/**
 * `netform validate` on three adversarial desired-state files (security review 2026-11b, G1's
 * follow-up): how long it takes and how much memory it needs, each in a fresh process.
 *
 *   npm run build && node bench/validate-adversarial.mjs [--runs N] [--keep DIR]
 *
 *   aliases      10,000 nested YAML aliases: `&a1 [*a0]`, `&a2 [*a1]`, … each alias the list before
 *   overlaps     10,000 rules of one user, every one overlapping the same block (10.0.0.0/8, tcp,
 *                ranges `i-60000`): each pair overlaps, the worst case of the overlap check
 *   port-ranges  100,000 global rules with distinct port ranges (50,000 ports, tcp and udp), none
 *                overlapping: a large valid file
 *
 * Time is the wall time of the whole process; peak RSS is the child's maximum resident set size
 * (from /usr/bin/time -f %M when present, else process.resourceUsage in an --import hook).
 * A file over 10 s or 1 GB needs a documented limit that validate checks (docs/netform.md, "Bounds").
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
};
const runs = Number(arg('--runs', '3'));
const keep = arg('--keep', null);

function aliases(n) {
  const lines = ['version: 1', 'users:', '  - email: alias@example.com', 'anchors:', '  - &a0 x'];
  for (let i = 1; i <= n; i++) lines.push(`  - &a${i} [*a${i - 1}]`);
  return `${lines.join('\n')}\n`;
}

function overlaps(n) {
  const lines = ['version: 1', 'users:', '  - email: overlap@example.com', '    rules:'];
  for (let i = 1; i <= n; i++)
    lines.push(`      - { action: drop, destination: 10.0.0.0/8, port_type: tcp, port_range: "${i}-60000" }`);
  return `${lines.join('\n')}\n`;
}

function portRanges(n) {
  const lines = ['version: 1', 'rules:'];
  for (let i = 0; i < n; i++)
    lines.push(
      `  - { action: accept, destination: 10.0.0.0/8, port_type: ${i % 2 ? 'udp' : 'tcp'}, port_range: "${Math.floor(i / 2) + 1}" }`,
    );
  return `${lines.join('\n')}\n`;
}

const FILES = [
  ['aliases', '10,000 nested YAML aliases', aliases(10_000)],
  ['overlaps', '10,000 rules of one user overlapping one block', overlaps(10_000)],
  ['port-ranges', '100,000 port ranges (global rules)', portRanges(100_000)],
];

const dir = keep ?? mkdtempSync(join(tmpdir(), 'netform-bench-adversarial-'));
const hasTime = existsSync('/usr/bin/time');
const HOOK = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\nMAXRSS '+process.resourceUsage().maxRSS+'\\n'))`;

function measure(file) {
  const started = process.hrtime.bigint();
  const result = hasTime
    ? spawnSync('/usr/bin/time', ['-f', 'MAXRSS %M CPU %U %S', process.execPath, CLI, 'validate', '-f', file], {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
      })
    : spawnSync(process.execPath, ['--import', HOOK, CLI, 'validate', '-f', file], {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
      });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const kb = Number(/MAXRSS (\d+)/.exec(result.stderr)?.[1] ?? NaN);
  const cpu = /CPU ([\d.]+) ([\d.]+)/.exec(result.stderr);
  const cpuS = cpu ? Number(cpu[1]) + Number(cpu[2]) : NaN;
  const first = (result.stdout + result.stderr)
    .split('\n')
    .find((l) => l.trim() !== '' && !l.startsWith('MAXRSS'))
    ?.replace(dir, '…');
  return { ms, cpuS, mb: kb / 1024, code: result.status, first: first ?? '' };
}

console.log(
  `validate on adversarial files; node ${process.version}; ${runs} runs each; load ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  '| file | size | exit | wall, runs (s) | median wall (s) | CPU user+sys, runs (s) | peak RSS, max (MB) | first line of output |',
);
console.log('|---|---|---|---|---|---|---|---|');
try {
  for (const [name, what, text] of FILES) {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, text);
    const results = Array.from({ length: runs }, () => measure(file));
    const times = results.map((r) => r.ms / 1000).sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    const rss = Math.max(...results.map((r) => r.mb));
    const line = results[0].first.length > 90 ? `${results[0].first.slice(0, 90)}…` : results[0].first;
    console.log(
      `| ${what} | ${(text.length / 1e6).toFixed(1)} MB | ${results[0].code} | ${results.map((r) => (r.ms / 1000).toFixed(2)).join(' / ')} | ${median.toFixed(2)} | ${results.map((r) => r.cpuS.toFixed(2)).join(' / ')} | ${rss.toFixed(0)} | \`${line.replace(/\|/g, '\\|')}\` |`,
    );
  }
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
