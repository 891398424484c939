/**
 * A schedule clock (src/drift/clock.ts) that moves only when the test moves it: a scheduled
 * drift run in-process with it ticks when the test says, and no test waits for the wall clock.
 */
import { EventEmitter, once } from 'node:events';
import type { ScheduleClock } from '../../src/drift/clock.js';

export interface ManualClock extends ScheduleClock {
  /** Resolves with the earliest instant waited for, once something waits (the schedule is between ticks). */
  waiting(): Promise<number>;
  /** Waits until something waits, then moves the clock to that instant (the next tick) and returns it. */
  tick(): Promise<number>;
  /** Moves the clock forward by `ms`, ending the waits that fall due on the way. */
  advance(ms: number): void;
  /** How many runs the schedule has said were over (runEnded). */
  readonly runsEnded: number;
  /** Resolves once the schedule has said `count` runs in all were over. */
  runsEndedReach(count: number): Promise<void>;
}

/** A clock at `start` (default: this second, whole), which never moves by itself. */
export function manualClock(start = Math.floor(Date.now() / 1000) * 1000): ManualClock {
  let now = start;
  const waits = new Set<{ at: number; end: () => void }>();
  const watchers = new Set<() => void>();
  const ended = new EventEmitter();
  let runsEnded = 0;
  const earliest = () => Math.min(...[...waits].map((w) => w.at));
  const moveTo = (at: number) => {
    now = Math.max(now, at);
    for (const wait of [...waits]) if (wait.at <= now) wait.end();
  };
  const clock: ManualClock = {
    now: () => now,
    waitUntil(at, signal) {
      if (at <= now || signal.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const wait = {
          at,
          end: () => {
            waits.delete(wait);
            signal.removeEventListener('abort', wait.end);
            resolve();
          },
        };
        waits.add(wait);
        signal.addEventListener('abort', wait.end, { once: true });
        for (const watcher of [...watchers]) {
          watchers.delete(watcher);
          watcher();
        }
      });
    },
    async waiting() {
      while (waits.size === 0) await new Promise<void>((resolve) => watchers.add(resolve));
      return earliest();
    },
    async tick() {
      const at = await clock.waiting();
      moveTo(at);
      return at;
    },
    advance(ms) {
      moveTo(now + ms);
    },
    runEnded() {
      runsEnded += 1;
      ended.emit('run');
    },
    get runsEnded() {
      return runsEnded;
    },
    async runsEndedReach(count) {
      while (runsEnded < count) await once(ended, 'run');
    },
  };
  return clock;
}
