/**
 * With NETFORM_TEST_CPU_LOG=FILE (vitest.config.ts adds this setup file then), each test file
 * appends one JSON line to FILE: its path, the project, its wall time and the CPU seconds its
 * worker process spent, its child processes included (the CLI and server processes it started
 * and waited for, read from /proc/self/stat: utime, stime, cutime, cstime). On a shared machine
 * the CPU figure is the one to compare between runs; wall times depend on the load. A worker runs
 * file after file (vitest.config.ts: isolate false), so the lines carry its pid and running totals
 * (`cpuTotal`), and `cpu` is the difference from its previous line: a worker's start and the
 * imports it makes once count towards its first file (with `--isolate`, every file's).
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';

const TICKS_PER_SECOND = 100;

/** This process's CPU seconds, and those of its children it has waited for. */
function cpuSeconds(): { self: number; children: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 (state) on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const at = (field: number) => Number(fields[field - 3]);
  return { self: (at(14) + at(15)) / TICKS_PER_SECOND, children: (at(16) + at(17)) / TICKS_PER_SECOND };
}

const log = process.env.NETFORM_TEST_CPU_LOG;
let file = '';
let started = 0;

beforeAll(() => {
  file = relative(process.cwd(), expect.getState().testPath ?? '');
  started = Date.now();
});

/** The worker's totals at its previous file's end (kept in the environment, which outlives the file's modules). */
const PREVIOUS = 'NETFORM_TEST_CPU_PREVIOUS';

afterAll(() => {
  if (!log || !file) return;
  const cpu = cpuSeconds();
  const total = cpu.self + cpu.children;
  const previous = Number(process.env[PREVIOUS] ?? 0);
  process.env[PREVIOUS] = String(total);
  const line = {
    file,
    project: process.env.NETFORM_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite',
    wall: Math.round(process.uptime() * 10) / 10,
    tests: Math.round((Date.now() - started) / 100) / 10,
    cpu: Math.round((total - previous) * 100) / 100,
    cpuTotal: Math.round(total * 100) / 100,
    children: Math.round(cpu.children * 100) / 100,
    pid: process.pid,
  };
  appendFileSync(log, `${JSON.stringify(line)}\n`);
});
