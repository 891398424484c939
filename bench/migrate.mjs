#!/usr/bin/env node
/**
 * `netform migrate firezone-1x` at fleet scale, on the 10,000-user dataset of bench/scale-data.mjs
 * (10,000 users, 20,000 devices, 30,000 rules): the compiler alone on the access model, and the
 * whole command on the desired state (-f, one YAML file). Prints the object counts and times.
 *
 *   npm run build && node bench/migrate.mjs [--users N] [--skip-cli]
 *
 * `--users N` scales the fleet's shape down or up: N users, 2N devices, 3N rules.
 */
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createHash } from 'node:crypto';
import { compileMigration, terraformText } from '../dist/src/migrate/index.js';
import { argValue, model, desiredYaml, runCli, timingsOf } from './scale-data.mjs';

const userCount = Number(argValue('--users', '10000'));
const m = model({ users: userCount, devices: 2 * userCount, rules: 3 * userCount });
const users = new Map();
for (const u of m.users)
  users.set(u.email, {
    key: u.email,
    email: u.email,
    devices: u.devices.map((d) => ({ name: d.name, ipv4: d.ipv4, ipv6: d.ipv6 })),
  });
const accessModel = {
  users,
  rules: m.rules.map((r) => ({
    owner: r.user ? r.user.email : null,
    action: r.action,
    destination: r.destination,
    port_type: r.port_type,
    port_range: r.port_range,
  })),
  settings: { portRules: true, serverAddresses: ['10.3.2.1', 'fd00::3:2:1'] },
};
const started = performance.now();
const cpu = process.cpuUsage();
const migration = compileMigration({ model: accessModel, options: { prefer: 'narrower', assumeFilterRouting: false } });
const ms = performance.now() - started;
const cpuUsed = process.cpuUsage(cpu);
const verdicts = { equal: 0, narrower: 0, wider: 0 };
for (const u of migration.users) verdicts[u.verdict]++;
console.log(
  `library: ${Math.round(ms)} ms wall, ${Math.round((cpuUsed.user + cpuUsed.system) / 1000)} ms CPU; ${migration.actors.length} actors, ${migration.groups.length} groups, ${migration.memberships.length} memberships, ${migration.resources.length} resources, ${migration.policies.length} policies; users ${JSON.stringify(verdicts)}`,
);
// The output's fingerprint: the same for the same fleet whatever the build (compare before and after a change).
const digest = createHash('sha256')
  .update(terraformText(migration, 'netform'))
  .update(JSON.stringify(migration.users))
  .digest('hex')
  .slice(0, 16);
console.log(`digest of main.tf.json and the per-user results: ${digest}`);
if (argValue('--skip-cli', null) === null && !process.argv.includes('--skip-cli')) {
  const dir = mkdtempSync(join(tmpdir(), 'netform-bench-migrate-'));
  try {
    const file = join(dir, 'fleet.yaml');
    writeFileSync(file, desiredYaml(m).text);
    const run = await runCli(['migrate', 'firezone-1x', '-f', file, '-o', join(dir, 'out')], {});
    if (run.code !== 0) throw new Error(run.stderr);
    console.log(`cli -f: ${Math.round(run.wallMs)} ms wall, phases ${JSON.stringify(timingsOf(run.stderr))}`);
    console.log(run.stdout.trim());
    const report = JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'));
    console.log(
      `report.json ${Math.round(readFileSync(join(dir, 'out', 'report.json')).length / 1024)} KiB; expected ${JSON.stringify(report.expected_seconds)} s`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
