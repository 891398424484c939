import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/drift/clock.js';
import { cronExpressionProblem, cronTicker, cronTimes, timeZoneProblem } from '../../../src/drift/cron.js';
import { manualClock } from '../../helpers/manual-clock.js';

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

  it('names the next whole second that matches, in the time zone of the schedule', () => {
    const at = (iso: string) => Date.parse(iso);
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    const everySecond = cronTimes('*/1 * * * * *');
    expect(iso(everySecond.next(at('2027-01-05T10:00:00.000Z')))).toBe('2027-01-05T10:00:01.000Z');
    expect(iso(everySecond.next(at('2027-01-05T10:00:00.999Z')))).toBe('2027-01-05T10:00:01.000Z');
    const weekdays = cronTimes('0 30 2 * * mon-fri', 'Europe/Paris');
    // Friday 8 January 2027 02:30 in Paris (UTC+1), then Monday.
    expect(iso(weekdays.next(at('2027-01-07T02:00:00Z')))).toBe('2027-01-08T01:30:00.000Z');
    expect(iso(weekdays.next(at('2027-01-08T01:30:00Z')))).toBe('2027-01-11T01:30:00.000Z');
    const lastDay = cronTimes('0 0 L * *', 'UTC');
    expect(iso(lastDay.next(at('2028-02-03T00:00:00Z')))).toBe('2028-02-29T00:00:00.000Z');
    const yearly = cronTimes('0 0 1 1 *', 'Asia/Kolkata');
    expect(iso(yearly.next(at('2027-03-01T00:00:00Z')))).toBe('2027-12-31T18:30:00.000Z');
    for (const times of [everySecond, weekdays, lastDay, yearly]) times.dispose();
  });

  it('runs once in an hour the clock repeats, and skips a time the clock jumps over', () => {
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    const times = cronTimes('30 2 * * *', 'Europe/Paris');
    // 31 October 2027: 03:00 summer time becomes 02:00 winter time; 02:30 comes twice, runs once.
    const first = times.next(Date.parse('2027-10-30T12:00:00Z'));
    expect(iso(first)).toBe('2027-10-31T00:30:00.000Z');
    expect(iso(times.next(first!))).toBe('2027-11-01T01:30:00.000Z');
    // 28 March 2027: 02:00 becomes 03:00; there is no 02:30 that day.
    expect(iso(times.next(Date.parse('2027-03-27T12:00:00Z')))).toBe('2027-03-29T00:30:00.000Z');
    times.dispose();
  });

  it('ticks on the clock it is given, with the time each run was due, and stops waiting at stop', async () => {
    const clock = manualClock(Date.parse('2027-01-05T10:00:00.000Z'));
    const logs: string[] = [];
    const ticker = cronTicker('*/1 * * * * *', { clock, log: (m) => logs.push(m) });
    const ticks: string[] = [];
    ticker.start((at) => ticks.push(at.toISOString()));
    expect(ticker.nextRun()?.toISOString()).toBe('2027-01-05T10:00:01.000Z');
    await clock.tick();
    await clock.tick();
    await clock.waiting();
    expect(ticks).toEqual(['2027-01-05T10:00:01.000Z', '2027-01-05T10:00:02.000Z']);
    // Three seconds late (the process was suspended): one run, for the time it was due; the rest logged.
    clock.advance(4000);
    await clock.waiting();
    expect(ticks.at(-1)).toBe('2027-01-05T10:00:03.000Z');
    expect(ticks).toHaveLength(3);
    expect(logs).toEqual([
      'drift: scheduler: the run due at 2027-01-05T10:00:03.000Z starts late (at 2027-01-05T10:00:06.000Z); the runs due since are not made up for',
    ]);
    expect(ticker.nextRun()?.toISOString()).toBe('2027-01-05T10:00:07.000Z');
    await ticker.stop();
    expect(ticker.nextRun()).toBeNull();
    clock.advance(10_000);
    expect(ticks).toHaveLength(3);
  });

  it('waits on the system clock by default, and a stop ends the wait at once', async () => {
    const stop = new AbortController();
    const waited = systemClock.waitUntil(Date.now() + 3_600_000, stop.signal);
    stop.abort();
    await waited;
    await systemClock.waitUntil(Date.now() - 1, new AbortController().signal);
    expect(systemClock.now()).toBeGreaterThan(Date.parse('2026-01-01T00:00:00Z'));
  });
});
