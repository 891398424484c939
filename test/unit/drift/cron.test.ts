import { describe, expect, it } from 'vitest';
import { cronExpressionProblem, cronTicker, timeZoneProblem } from '../../../src/drift/cron.js';

describe('cron schedule', () => {
  it('accepts five fields, and six with seconds first', () => {
    expect(cronExpressionProblem('*/15 * * * *')).toBeNull();
    expect(cronExpressionProblem('*/1 * * * * *')).toBeNull();
    expect(cronExpressionProblem('0 30 2 * * mon-fri')).toBeNull();
  });

  it('says what is wrong with an expression', () => {
    expect(cronExpressionProblem('61 * * * *')).toMatch(/61 .*minute/);
    expect(cronExpressionProblem('every hour')).toMatch(/expected 5 or 6 fields/);
  });

  it('checks time zones', () => {
    expect(timeZoneProblem('Europe/Paris')).toBeNull();
    expect(timeZoneProblem('UTC')).toBeNull();
    expect(timeZoneProblem('Mars/Olympus')).toMatch(/unknown time zone "Mars\/Olympus"/);
  });

  it('ticks on a seconds schedule with the scheduled time, and is gone after stop', async () => {
    const logs: string[] = [];
    const ticker = cronTicker('* * * * * *', { log: (m) => logs.push(m) });
    const ticks: Date[] = [];
    const first = new Promise<void>((resolve) =>
      ticker.start((at) => {
        ticks.push(at);
        resolve();
      }),
    );
    expect(ticker.nextRun()).toBeInstanceOf(Date);
    await first;
    await ticker.stop();
    expect(ticks).toHaveLength(1);
    expect(ticks[0]!.getMilliseconds()).toBe(0);
    // The task is destroyed: nothing is scheduled any more (the drift e2e tests also see the process exit).
    expect(ticker.nextRun()).toBeNull();
  });
});
