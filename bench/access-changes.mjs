#!/usr/bin/env node
/**
 * Access changes at fleet scale: computeAccessChanges (src/access) alone on the 10,000-user
 * dataset of bench/scale-data.mjs (30,000 rules), for three 1% rule changes:
 *   hosts:  300 rules replaced by others on new /32 hosts (as plan-scale changes them);
 *   broad:  the same, plus a global drop of the whole 100.64.0.0/10 the rules live in, and a
 *           global accept of 100.64.0.0/16 tcp 1-1024 (every user's own rules meet them);
 *   users:  300 users each given an own drop of a /24.
 *
 *   npm run build && node bench/access-changes.mjs [--runs N]
 */
import { performance } from 'node:perf_hooks';
import { computeAccessChanges } from '../dist/src/access/index.js';
import { argValue, median, model } from './scale-data.mjs';

const RUNS = Number(argValue('--runs', '3'));
const m = model();
const toRule = (r) => ({
  owner: r.user ? r.user.email : null,
  action: r.action,
  destination: r.destination,
  port_type: r.port_type,
  port_range: r.port_range,
  id: r.id,
});
const before = m.rules.map(toRule);
const users = m.users.map((u) => u.email);
const hosts = before.filter((_, i) => i % 100 !== 1);
for (let i = 0; i < 300; i++)
  hosts.push({ ...before[i * 100 + 1], destination: `100.127.${i >> 8}.${i & 255}`, id: undefined });
const broad = [
  ...hosts,
  { owner: null, action: 'drop', destination: '100.64.0.0/10', port_type: null, port_range: null },
  { owner: null, action: 'accept', destination: '100.64.0.0/16', port_type: 'tcp', port_range: '1 - 1024' },
];
const own = [
  ...before,
  ...m.users.slice(0, 300).map((u, i) => ({
    owner: u.email,
    action: 'drop',
    destination: `172.16.${i % 256}.0/24`,
    port_type: null,
    port_range: null,
  })),
];

const rows = [];
for (const [name, after] of [
  ['hosts', hosts],
  ['broad', broad],
  ['users', own],
]) {
  const times = [];
  let shown;
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const changes = computeAccessChanges({ before, after, users, portRules: true });
    times.push(performance.now() - started);
    shown = `${changes.users.length} users listed, everyone: ${changes.everyone ? `${changes.everyone.reachable.length + changes.everyone.blocked.length} blocks, ${changes.everyone.except.length} exceptions` : 'none'}`;
  }
  rows.push(`| ${name} | ${times.map((t) => t.toFixed(0)).join(' / ')} | ${median(times).toFixed(0)} | ${shown} |`);
}
console.log(['| change | runs (ms) | median | result |', '|---|---|---|---|', ...rows].join('\n'));
