/**
 * Runs slower than the schedule: the server is reached through a loopback proxy that holds each
 * connection back for longer than the one-second schedule. Runs must never overlap, skipped
 * ticks are logged and counted, and SIGTERM during a run cancels that run (it is not reported)
 * and stops at once, exit 0.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { reportTime, startDrift, type DriftProcess } from '../../helpers/drift.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';

const SLOWER_THAN_SCHEDULE_MS = 1500;

let server: TestServer;
let proxy: TcpProxy;
let dir: string;
let drift: DriftProcess | undefined;

beforeEach(async () => {
  [server, dir] = await Promise.all([startTestServer(), mkdtemp(join(tmpdir(), 'netform-drift-'))]);
  proxy = await startTcpProxy(server.url);
  await writeFile(join(dir, 'netform.yaml'), 'version: 1\nusers:\n  - email: admin@example.com\n    role: admin\n');
});

afterEach(async () => {
  drift?.kill();
  drift = undefined;
  await Promise.all([server.stop(), proxy.close(), rm(dir, { recursive: true, force: true })]);
});

describe('netform drift --every with runs slower than the schedule', () => {
  it('never overlaps runs, skips and reports the ticks missed, and cancels the run in progress on SIGTERM', async () => {
    proxy.setDelay(SLOWER_THAN_SCHEDULE_MS);
    drift = startDrift(['-f', join(dir, 'netform.yaml'), '--every', '*/1 * * * * *', '--run-at-start'], {
      NETFORM_URL: proxy.url,
      NETFORM_TOKEN: server.token,
    });

    await drift.waitForReport((r) => r.skipped_ticks > 0, { timeoutMs: 20_000 });
    await drift.waitForReport(() => true, { from: 2, timeoutMs: 20_000 });
    expect(drift.reports.every((r) => r.status === 'clean')).toBe(true);
    for (const report of drift.reports) expect(report.duration_ms).toBeGreaterThanOrEqual(SLOWER_THAN_SCHEDULE_MS - 50);
    // Each run starts after the previous one finished.
    for (let i = 1; i < drift.reports.length; i++) {
      const previous = drift.reports[i - 1]!;
      expect(reportTime(drift.reports[i]!)).toBeGreaterThanOrEqual(reportTime(previous) + previous.duration_ms);
    }
    expect(drift.stderr()).toMatch(/drift: skipped the run due at \S+: the run started at \S+ is still in progress/);
    const skippedLogged = drift.stderr().match(/skipped the run due at/g)!.length;
    const skippedReported = drift.reports.reduce((n, r) => n + r.skipped_ticks, 0);
    // The last skips may not have reached a report yet.
    expect(skippedReported).toBeGreaterThan(0);
    expect(skippedReported).toBeLessThanOrEqual(skippedLogged);

    // SIGTERM while a run is waiting on the slow connection: that run is cancelled, not reported
    // (its failure would say nothing about the server), and the process exits 0 at once.
    await drift.waitForStderr(/skipped the run due at/);
    await once(proxy.events, 'request');
    const before = drift.reports.length;
    drift.child.kill('SIGTERM');
    const { code } = await drift.exited;
    expect(code).toBe(0);
    expect(drift.stderr()).toMatch(/drift: SIGTERM: stopping \(the run in progress is cancelled\)/);
    expect(drift.stderr()).toContain('drift: the run in progress was cancelled by the stop; it is not reported');
    expect(drift.reports.length).toBe(before);
    expect(drift.stderr()).toMatch(new RegExp(`stopped after ${drift.reports.length} run\\(s\\)`));
  });
});
