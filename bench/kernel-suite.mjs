/**
 * What the kernel suite (test/kernel) costs: each file run alone with
 * `vitest run --project sqlite FILE`, its wall time and CPU time (user + system, its namespaces'
 * agents, nft and python3 included: GNU time counts every child waited for), and the packets it
 * sent through the kernel, as the file itself prints them (they must not change). With
 * --baseline DIR (another checkout with node_modules), the same files there, alternating run by
 * run; the load average is recorded with each run. Needs root, nft and iproute2, as the suite.
 *
 *     node bench/kernel-suite.mjs [--runs 3] [--baseline /tmp/base] [--files oracle,migrate,after-apply,expiry]
 *
 * About 2.5 minutes a run of the four files on a quiet 2-core machine (twice that with a baseline).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { measureProcess } from './process-time.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    baseline: { type: 'string' },
    files: { type: 'string', default: 'oracle,migrate,after-apply,expiry' },
  },
});
const FILES = {
  oracle: 'test/kernel/kernel-oracle.test.ts',
  migrate: 'test/kernel/migrate-oracle.test.ts',
  'after-apply': 'test/kernel/after-apply.test.ts',
  expiry: 'test/kernel/expiry.test.ts',
};
const files = values.files.split(',').map((name) => {
  if (!FILES[name]) throw new Error(`--files: no kernel file called ${name} (${Object.keys(FILES).join(', ')})`);
  return name;
});
const trees = [
  ...(values.baseline ? [{ name: 'baseline', dir: resolve(values.baseline) }] : []),
  { name: 'this tree', dir: resolve('.') },
];
const runs = Number(values.runs);
const dir = mkdtempSync(join(tmpdir(), 'netform-kernel-bench-'));

/** The packet counts a file prints ("N packets compared", "N packets through both kernels"). */
function packetsOf(output) {
  return [...output.matchAll(/(\d+) packets (?:compared|through both kernels)/g)].map((m) => Number(m[1])).join('+');
}

const results = new Map();
try {
  for (let run = 0; run < runs; run++)
    for (const file of files)
      for (const tree of trees) {
        const load = loadavg()[0].toFixed(1);
        const m = await measureProcess(
          [join(tree.dir, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'sqlite', FILES[file]],
          { cwd: tree.dir, dir },
        );
        const output = m.stdout();
        if (m.code !== 0) throw new Error(`${tree.name}: ${FILES[file]} failed (${m.code}):\n${output}\n${m.stderr()}`);
        const key = `${file}\t${tree.name}`;
        if (!results.has(key)) results.set(key, []);
        results.get(key).push({ wall: m.wallMs / 1000, cpu: m.cpuMs / 1000, load, packets: packetsOf(output) });
        console.log(
          `run ${run + 1} ${file} (${tree.name}): ${(m.wallMs / 1000).toFixed(1)} s wall, ${(m.cpuMs / 1000).toFixed(1)} s CPU, load ${load}, packets ${packetsOf(output) || '-'}`,
        );
      }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log('\n| file | tree | wall (median) | CPU (median) | load averages | packets |\n|---|---|---|---|---|---|');
for (const [key, list] of results) {
  const [file, tree] = key.split('\t');
  console.log(
    `| ${FILES[file]} | ${tree} | ${median(list.map((r) => r.wall)).toFixed(1)} s | ${median(list.map((r) => r.cpu)).toFixed(1)} s | ${list.map((r) => r.load).join(', ')} | ${[...new Set(list.map((r) => r.packets || '-'))].join(' / ')} |`,
  );
}
