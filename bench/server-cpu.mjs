/**
 * One definition of a server's CPU per request and of its ratio to a floor, shared by the server
 * benches (server-get.mjs, server-throughput.mjs), so that their GET figures mean the same thing:
 *
 * - CPU: the time on a CPU of all the server process's threads, from the scheduler
 *   (/proc/PID/task/TID/schedstat, nanoseconds), over the answered requests of a round; its main
 *   thread's share and the user + system split (/proc/PID/stat, clock ticks) alongside;
 * - the ratio to the floor (bare Fastify): paired, the floor's CPU per request over the server's
 *   in the same round (the floor measured just before it), the median of the rounds' ratios; a load
 *   that comes and goes then moves both sides of a ratio alike.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

const onCpu = (path) => Number(readFileSync(path, 'utf8').split(' ')[0]) / 1000;

/** The process's CPU time so far, in µs: all threads (`onCpu`), its main thread, user and system. */
export function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  let all = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) all += onCpu(`/proc/${pid}/task/${tid}/schedstat`);
  return {
    user: (Number(fields[11]) * 1e6) / CLOCK_TICKS,
    system: (Number(fields[12]) * 1e6) / CLOCK_TICKS,
    onCpu: all,
    mainThread: onCpu(`/proc/${pid}/task/${pid}/schedstat`),
  };
}

/** CPU µs per request between two readings of cpuMicros over `requests` answers. */
export function perRequest(before, after, requests) {
  return {
    cpu: (after.onCpu - before.onCpu) / requests,
    mainThread: (after.mainThread - before.mainThread) / requests,
    user: (after.user - before.user) / requests,
    system: (after.system - before.system) / requests,
  };
}

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The paired CPU ratio of a target to its floor, round by round (`rounds[i].cpu`, `floor[i].cpu`): median and each round's. */
export function pairedCpu(rounds, floor) {
  const ratios = rounds.map((r, i) => floor[i].cpu / r.cpu);
  return { median: median(ratios), rounds: ratios };
}
