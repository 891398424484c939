/** The real ticker: node-cron 4, whose expressions may carry a leading seconds field. */
import cron, { type Logger, type ScheduledTask } from 'node-cron';
import type { Ticker } from './loop.js';

export interface CronTickerOptions {
  timezone?: string;
  /** node-cron's own messages (missed ticks and the like); never stdout, which carries the reports. */
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

export function cronTicker(expression: string, options: CronTickerOptions): Ticker & { nextRun(): Date | null } {
  const logger: Logger = {
    info: () => undefined,
    debug: () => undefined,
    warn: (message) => options.log(`drift: scheduler: ${message}`),
    error: (message) => options.log(`drift: scheduler: ${message instanceof Error ? message.message : message}`),
  };
  let task: ScheduledTask | null = null;
  return {
    start(onTick) {
      task = cron.createTask(
        expression,
        (context) => {
          // The loop decides about overlap itself; node-cron only says when.
          onTick(context.date);
        },
        { timezone: options.timezone, logger, name: 'netform-drift' },
      );
      void task.start();
    },
    async stop() {
      const current = task;
      task = null;
      if (current) await current.destroy();
    },
    nextRun() {
      return task?.getNextRun() ?? null;
    },
  };
}
