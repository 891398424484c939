/**
 * The time a schedule keeps: what time it is, and a wait until a given instant that a stop cuts
 * short. A process keeps the system's (systemClock); a test gives one it moves forward by hand,
 * so that a schedule's runs come when the test says and no test waits for the wall clock.
 */
export interface ScheduleClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves once now() has reached `at`, or at once when `signal` aborts (a stop). */
  waitUntil(at: number, signal: AbortSignal): Promise<void>;
  /**
   * Told each time a run has ended, its reports delivered: a test's clock moves on to the next
   * tick only then. The system clock has no use for it.
   */
  runEnded?(): void;
}

/** setTimeout waits at most this long (about 24.8 days); a longer wait is taken in parts. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** The system clock, waiting with timers that keep the process alive while it waits. */
export const systemClock: ScheduleClock = {
  now: () => Date.now(),
  waitUntil(at, signal) {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      // A timer may fire a little before the system clock says it is time: wait again for the rest.
      const wait = () => {
        const left = at - Date.now();
        if (left <= 0) done();
        else timer = setTimeout(wait, Math.min(left, LONGEST_TIMER_MS));
      };
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', done, { once: true });
      wait();
    });
  },
};
