/**
 * Runs slower than the schedule: the server is reached through a loopback proxy that holds its
 * answers back while the schedule's clock (moved by the test) passes two more ticks. Runs must
 * never overlap, skipped ticks are logged and counted, and a stop request during a run cancels
 * that run (it is not reported) and stops at once, exit 0. In this process on a clock the test
 * moves; schedule.test.ts's smoke test stops the real process with SIGTERM.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { startScheduledDrift, type ScheduledDrift } from '../../helpers/drift-in-process.js';
import { startHoldingProxy, type HoldingProxy } from '../../helpers/holding-proxy.js';

let server: TestServer;
let proxy: HoldingProxy;
let dir: string;
let drift: ScheduledDrift | undefined;

beforeEach(async () => {
  [server, dir] = await Promise.all([startTestServer(), mkdtemp(join(tmpdir(), 'netform-drift-'))]);
  proxy = await startHoldingProxy(server.url);
  await writeFile(join(dir, 'netform.yaml'), 'version: 1\nusers:\n  - email: admin@example.com\n    role: admin\n');
});

afterEach(async () => {
  proxy.release();
  drift?.stop();
  await drift?.done;
  drift = undefined;
  await Promise.all([server.stop(), proxy.close(), rm(dir, { recursive: true, force: true })]);
});

const iso = (t: number) => new Date(t).toISOString();

describe('netform drift --every with runs slower than the schedule', () => {
  it('never overlaps runs, skips and reports the ticks missed, and cancels the run in progress on a stop', async () => {
    drift = startScheduledDrift(['-f', join(dir, 'netform.yaml'), '--every', '*/1 * * * * *'], {
      NETFORM_URL: proxy.url,
      NETFORM_TOKEN: server.token,
    });
    // Started (the server was reached once): from now on the server's answers wait for the test.
    await drift.clock.waiting();
    proxy.hold();
    const asked = once(proxy.events, 'request');
    const startedAt = await drift.tick();
    await asked;
    // Two ticks come while the first run waits on the server: both skipped, and said so.
    const skippedAt = [await drift.tick(), await drift.tick()];
    await drift.clock.waiting();
    expect(drift.stderr().match(/skipped the run due at/g)).toHaveLength(2);
    for (const at of skippedAt)
      expect(drift.stderr()).toContain(
        `drift: skipped the run due at ${iso(at)}: the run started at ${iso(startedAt)} is still in progress`,
      );
    expect(drift.reports).toEqual([]);

    // The server answers half a second of the schedule's time later: the run took 2.5 s.
    drift.clock.advance(500);
    proxy.release();
    const first = await drift.waitForReport(() => true);
    expect(first).toMatchObject({ status: 'clean', skipped_ticks: 0, duration_ms: 2500, time: iso(startedAt) });

    // The next run starts at the next tick after the first ended, and reports the ticks skipped.
    const second = await drift.runOnce();
    expect(second).toMatchObject({ status: 'clean', skipped_ticks: 2 });
    expect(Date.parse(second.time)).toBeGreaterThanOrEqual(Date.parse(first.time) + first.duration_ms);

    // A stop request while a run waits on the server: that run is cancelled, not reported (its
    // failure would say nothing about the server), and the command ends at once with 0.
    proxy.hold();
    const askedAgain = once(proxy.events, 'request');
    await drift.tick();
    await askedAgain;
    drift.stop('SIGTERM');
    const { code, stderr } = await drift.done;
    expect(code).toBe(0);
    expect(stderr).toMatch(/drift: SIGTERM: stopping \(the run in progress is cancelled\)/);
    expect(stderr).toContain('drift: the run in progress was cancelled by the stop; it is not reported');
    expect(drift.reports).toHaveLength(2);
    expect(stderr).toContain('drift: stopped after 2 run(s)');
    expect(stderr).not.toContain(server.token);
  });
});
