/**
 * Cron schedules: node-cron 4 reads and checks the expressions (which may carry a leading seconds
 * field) and says whether an instant matches one; the ticker waits on a ScheduleClock (clock.ts)
 * for each next matching second, so a test's clock drives the very ticker the process runs.
 */
import cron from 'node-cron';
import { systemClock, type ScheduleClock } from './clock.js';
import type { Ticker } from './loop.js';

export interface CronTickerOptions {
  timezone?: string;
  /** Default: the system clock. */
  clock?: ScheduleClock;
  /** The ticker's own messages (late or impossible ticks); never stdout, which carries the reports. */
  log: (message: string) => void;
}

/** Null when the expression is valid; otherwise what is wrong with it, field by field. */
export function cronExpressionProblem(expression: string): string | null {
  const result = cron.validateDetailed(expression);
  if (result.valid) return null;
  const details = result.errors.map((e) => e.message);
  return details.length > 0 ? details.join('; ') : 'not a cron expression';
}

/** Null when the time zone is one the runtime knows (an IANA name such as `Europe/Paris`). */
export function timeZoneProblem(timeZone: string): string | null {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return null;
  } catch {
    return `unknown time zone "${timeZone}" (expected an IANA name such as Europe/Paris or UTC)`;
  }
}

const SECOND_MS = 1000;
const HOUR_MS = 3600 * SECOND_MS;
/** How far ahead a matching time is looked for: the calendar's days and weekdays repeat within 28 years. */
const HORIZON_MS = 28 * 366 * 24 * HOUR_MS;

/** The instants an expression names, in a time zone (default: the system's). */
export interface CronTimes {
  /** The first whole second after `after` (milliseconds since the epoch) that matches; null if none within 28 years. */
  next(after: number): number | null;
  /** Frees what node-cron keeps for the expression. */
  dispose(): void;
}

export function cronTimes(expression: string, timezone?: string): CronTimes {
  const fields = cron.parse(expression);
  const seconds = [...fields.second].sort((a, b) => a - b);
  const minutes = new Set(fields.minute);
  const hours = new Set(fields.hour);
  // Never started: node-cron's matcher alone, which judges the days (L, nth weekdays) as node-cron does.
  const task = cron.createTask(expression, () => undefined, { timezone, name: 'netform-drift' });
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const wallClock = (t: number) => {
    const part: Record<string, number> = {};
    for (const { type, value } of format.formatToParts(t)) part[type] = Number(value);
    const [hour, minute, second] = [part.hour!, part.minute!, part.second!];
    // The reading of the zone's clock as one number, to compare two readings.
    const reading = Date.UTC(part.year!, part.month! - 1, part.day!, hour, minute, second);
    return { hour, minute, second, reading };
  };
  return {
    next(after) {
      let t = Math.floor(after / SECOND_MS) * SECOND_MS + SECOND_MS;
      const horizon = t + HORIZON_MS;
      // When the clock is put back, the hour it repeats has had its runs already.
      const past = wallClock(t - SECOND_MS).reading;
      // Skips ahead by whole seconds, minutes, hours and days of the zone's clock; offsets change on
      // whole local hours, so no jump passes over a matching second.
      while (t <= horizon) {
        const { hour, minute, second, reading } = wallClock(t);
        if (reading <= past) {
          t += past - reading + SECOND_MS;
          continue;
        }
        const toNextMinute = (60 - second) * SECOND_MS;
        const toNextHour = (59 - minute) * 60 * SECOND_MS + toNextMinute;
        if (!hours.has(hour)) {
          t += toNextHour;
          continue;
        }
        const due = seconds.find((s) => s >= second);
        if (!minutes.has(minute) || due === undefined) {
          t += toNextMinute;
          continue;
        }
        if (due > second) {
          t += (due - second) * SECOND_MS;
          continue;
        }
        if (task.match(new Date(t))) return t;
        // The day does not match (its month, day or weekday): nor does the rest of it. A day on
        // which the clock changes may be an hour shorter: jump to an hour before its end at most.
        const toNextDay = (23 - hour) * HOUR_MS + toNextHour;
        t += Math.max(toNextHour, toNextDay - HOUR_MS);
      }
      return null;
    },
    dispose() {
      void task.destroy();
    },
  };
}

/**
 * Ticks at every matching second of the expression on the clock, until stopped. A tick that comes
 * late (the process was suspended) is given once, with the time it was due; the ones it passed
 * over are logged, not made up for.
 */
export function cronTicker(expression: string, options: CronTickerOptions): Ticker & { nextRun(): Date | null } {
  const clock = options.clock ?? systemClock;
  const times = cronTimes(expression, options.timezone);
  const stopping = new AbortController();
  let next: number | null = null;
  let ticking: Promise<void> = Promise.resolve();
  const noMore = () => options.log(`drift: scheduler: "${expression}" names no time in the next 28 years`);
  return {
    start(onTick) {
      next = times.next(clock.now());
      if (next === null) noMore();
      ticking = (async () => {
        while (next !== null) {
          const due = next;
          await clock.waitUntil(due, stopping.signal);
          if (stopping.signal.aborted) return;
          const now = clock.now();
          const after = times.next(due);
          if (after !== null && after <= now)
            options.log(
              `drift: scheduler: the run due at ${new Date(due).toISOString()} starts late (at ${new Date(now).toISOString()}); the runs due since are not made up for`,
            );
          next = after !== null && after <= now ? times.next(now) : after;
          if (next === null) noMore();
          onTick(new Date(due));
        }
      })();
    },
    async stop() {
      stopping.abort();
      await ticking;
      next = null;
      times.dispose();
    },
    nextRun() {
      return next === null ? null : new Date(next);
    },
  };
}
