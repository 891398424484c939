/**
 * A scheduled drift (`netform drift --every …`) run in this process through run(argv, io), on a
 * clock the test moves (manual-clock.ts): its runs come when the test calls tick(), never when
 * the wall clock says, and its reports can be awaited as they are written. The server and the
 * webhook are still real and reached over HTTP. Where the process itself is what is tested
 * (signals, the real cron clock), test/helpers/drift.ts's startDrift runs the built CLI.
 */
import { EventEmitter } from 'node:events';
import { memoryIo, type MemoryIo, type StopReason } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import type { DriftReport } from '../../src/drift/report.js';
import { manualClock, type ManualClock } from './manual-clock.js';
import { inProcessEnv, type InProcessResult } from './run-in-process.js';

export interface ScheduledDrift {
  io: MemoryIo;
  /** The schedule's clock (also the run's clock, at which expiries are judged). */
  clock: ManualClock;
  /** The reports written so far, one per stdout line. */
  readonly reports: DriftReport[];
  stderr(): string;
  /** Moves the clock to the next time the schedule waits for (a run starts, or is skipped if one is going). */
  tick(): Promise<number>;
  /** Ticks, then waits for the run that tick started to end (its reports delivered): that run's report. */
  runOnce(): Promise<DriftReport>;
  /** Resolves with the first report at or after index `from` that matches. */
  waitForReport(match: (r: DriftReport) => boolean, options?: { from?: number }): Promise<DriftReport>;
  /** Resolves when stderr contains the text. */
  waitForStderr(text: string | RegExp): Promise<void>;
  /** A stop request, as SIGTERM (the default) or SIGINT is to the process. */
  stop(reason?: StopReason): void;
  /** Resolves with the exit code and the output once the command has ended. */
  done: Promise<InProcessResult>;
  /** Whether the command has ended. */
  readonly ended: boolean;
}

/** How long a wait for output may take before the test fails with what was written (a bound, not a pause). */
const WAIT_BOUND_MS = 20_000;

/**
 * Starts `netform drift ARGS` in this process. `env` goes over this process's environment
 * (NETFORM_URL and NETFORM_TOKEN removed first, as startDrift does); give paths absolute.
 */
export function startScheduledDrift(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { clock?: ManualClock } = {},
): ScheduledDrift {
  const clock = options.clock ?? manualClock();
  const io = memoryIo({
    env: inProcessEnv({ NETFORM_URL: undefined, NETFORM_TOKEN: undefined, ...env }),
    cwd: process.cwd(),
    clock: () => new Date(clock.now()),
    scheduleClock: clock,
  });
  const events = new EventEmitter();
  for (const stream of [io.out, io.err]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((...args: unknown[]) => {
      const written = write(...args);
      events.emit('change');
      return written;
    }) as typeof stream.write;
  }
  // Every stdout line must be one JSON report: JSON.parse throws (and the test fails) otherwise.
  const reports = () =>
    io
      .stdout()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as DriftReport);
  let ended = false;
  const done = run(['drift', ...args], io).then((code) => {
    ended = true;
    events.emit('change');
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  });
  const describe = () => `stderr:\n${io.stderr()}\nstdout:\n${io.stdout()}`;
  const until = (done: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(bound);
        events.off('change', check);
        resolve();
      };
      const bound = setTimeout(() => {
        events.off('change', check);
        reject(new Error(`no ${what} within ${WAIT_BOUND_MS} ms\n${describe()}`));
      }, WAIT_BOUND_MS);
      events.on('change', check);
      check();
    });
  return {
    io,
    clock,
    get reports() {
      return reports();
    },
    stderr: () => io.stderr(),
    tick: () => clock.tick(),
    async runOnce() {
      const before = clock.runsEnded;
      const at = await clock.tick();
      const over = await Promise.race([clock.runsEndedReach(before + 1).then(() => true), done.then(() => false)]);
      if (!over) throw new Error(`drift ended before the run due at ${new Date(at).toISOString()} did\n${describe()}`);
      const report = reports().find((r) => Date.parse(r.time) === at);
      if (!report) throw new Error(`no report for the run due at ${new Date(at).toISOString()}\n${describe()}`);
      return report;
    },
    async waitForReport(match, { from = 0 } = {}) {
      const find = () => reports().slice(from).find(match);
      await until(() => find() !== undefined || ended, 'matching drift report');
      const found = find();
      if (!found) throw new Error(`drift ended before a matching report\n${describe()}`);
      return found;
    },
    waitForStderr(text) {
      return until(() => (typeof text === 'string' ? io.stderr().includes(text) : text.test(io.stderr())), `${text}`);
    },
    stop: (reason) => io.requestStop(reason),
    done,
    get ended() {
      return ended;
    },
  };
}
