#!/usr/bin/env node
/**
 * computeAccessDelta alone, in this process, on the shape of the bench fleet (bench/scale-data.mjs:
 * N users, 2N devices with both tunnels, 3N /32 rules, two in three with ports, a third global;
 * 1% of the users get a new device, 1% lose all theirs, 0.5% lose their own rules), no server and
 * no plan: its CPU time, the delta's size as compact JSON, and whether pretty JSON of it fits in a
 * JavaScript string (a JSON plan is pretty-printed): listed in every entry (version 1's shape, the
 * delta in memory) and, for a build that has it, as documents carry it (version 2, region sets).
 *
 *   npm run build && node bench/access-delta.mjs [--users N] [--dist DIR]   (DIR: a build's dist/, default ./dist)
 */
import { resolve } from 'node:path';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { argValue } from './scale-data.mjs';

const N = Number(argValue('--users', '10000'));
const DIST = pathToFileURL(resolve(argValue('--dist', 'dist'))).href;
const { computeAccessDelta } = await import(`${DIST}/src/access/delta.js`);
const { formatAddress } = await import(`${DIST}/src/model/index.js`);
const sets = await import(`${DIST}/src/access/delta-sets.js`).catch(() => null);

const ruleHost = (i) => formatAddress(4, 0x64400000n + BigInt(i * 7));
const users = new Map();
const keys = [];
for (let i = 0; i < N; i++) {
  const key = `user-${i}@bench.test`;
  keys.push(key);
  users.set(key, { key, email: key, devices: [] });
}
for (let i = 0; i < 2 * N; i++)
  users.get(keys[i % N]).devices.push({
    name: `device-${i}`,
    ipv4: formatAddress(4, 0x0a000002n + BigInt(i)),
    ipv6: formatAddress(6, 0xfd000000000000000000000000000002n + BigInt(i)),
  });
const rules = [];
for (let i = 0; i < 3 * N; i++) {
  const low = 1 + (i % 9000);
  const ported = i % 3 !== 0;
  rules.push({
    owner: i % 3 === 0 ? null : keys[i % N],
    action: i % 2 === 0 ? 'accept' : 'drop',
    destination: `${ruleHost(i)}/32`,
    port_type: ported ? (i % 3 === 1 ? 'tcp' : 'udp') : null,
    port_range: ported ? `${low} - ${i % 10 === 1 ? low : low + 100}` : null,
  });
}
const after = new Map();
keys.forEach((key, i) => {
  const u = users.get(key);
  const devices = i % 100 === 1 ? [] : i % 100 === 3 ? [...u.devices, { name: `new-${i}` }] : u.devices;
  after.set(key, { ...u, devices });
});
const index = new Map(keys.map((k, i) => [k, i]));
const afterRules = rules.filter((r) => !(r.owner && index.get(r.owner) % 200 === 4));
const settings = { portRules: true, serverAddresses: ['10.3.2.1', 'fd00::3:2:1'] };

const load = loadavg();
const c0 = process.cpuUsage();
const delta = computeAccessDelta({
  before: { users, rules, settings },
  after: { users: after, rules: afterRules, settings },
  compared: { before: 'before', after: 'after' },
});
const c1 = process.cpuUsage(c0);
const compact = JSON.stringify(delta).length;
const prettyLength = (value) => {
  try {
    return JSON.stringify(value, null, 2).length.toLocaleString('en');
  } catch (error) {
    return `${error.name}: ${error.message}`;
  }
};
const pretty = prettyLength(delta);
let document = '';
if (sets) {
  const c2 = process.cpuUsage();
  const doc = sets.accessDeltaDocument(delta);
  const c3 = process.cpuUsage(c2);
  document =
    `; as a document (version 2): ${doc.region_sets.length} region sets, compact JSON ${JSON.stringify(doc).length.toLocaleString('en')} chars, ` +
    `pretty ${prettyLength(doc)}, made in ${((c3.user + c3.system) / 1000).toFixed(0)} ms CPU, ` +
    `the largest set ${Math.max(...doc.region_sets.map((r) => JSON.stringify(r).length)).toLocaleString('en')} chars, ` +
    `at most ${Math.max(...doc.entries.map((e) => e.gained.length + e.lost.length))} set indexes in an entry`;
}
console.log(
  `${N} users, ${2 * N} devices, ${3 * N} rules (${argValue('--dist', 'dist')}): computeAccessDelta ${((c1.user + c1.system) / 1000).toFixed(0)} ms CPU; ` +
    `${delta.entries.length} entries; listed in every entry: compact JSON ${compact.toLocaleString('en')} chars, pretty ${pretty}${document}; ` +
    `load average ${load.map((x) => x.toFixed(2)).join(', ')}`,
);
