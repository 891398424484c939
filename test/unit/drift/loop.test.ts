import { describe, expect, it } from 'vitest';
import { DriftLoop, type DriftRunContext, type ReportSink, type Ticker } from '../../../src/drift/loop.js';
import { redactSecrets, reportFromPlan, type DriftReport } from '../../../src/drift/report.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, type Change, type WordedPlan as Plan } from '../../../src/plan/types.js';

function plan(changes: Change[] = []): Plan {
  const summary = { create: 0, update: 0, delete: 0, replace: 0, cascade: 0 };
  for (const c of changes) summary[c.action] += 1;
  return {
    format: PLAN_FORMAT,
    format_version: PLAN_FORMAT_VERSION,
    created_at: '2024-01-01T00:00:00.000Z',
    server: 'http://127.0.0.1:1',
    sources: ['netform.yaml'],
    changes: changes as Plan['changes'],
    summary,
    limits: [],
    warnings: [],
  };
}

const mtuChange: Change = {
  id: 'device:a@example.com/laptop',
  kind: 'device',
  action: 'update',
  key: 'a@example.com/laptop',
  label: 'device a@example.com/laptop',
  phase: 2,
  liveId: 'd1',
  fingerprint: 'f',
  fields: [{ field: 'mtu', before: 1400, after: 1380 }],
  body: { mtu: 1380 },
};

/** A ticker the test fires by hand. */
function manualTicker() {
  let onTick: ((at: Date) => void) | null = null;
  let stopped = false;
  const ticker: Ticker = {
    start: (cb) => {
      onTick = cb;
    },
    stop: () => {
      stopped = true;
    },
  };
  return {
    ticker,
    fire: (at = new Date(0)) => onTick?.(at),
    get stopped() {
      return stopped;
    },
  };
}

/** A run the test finishes by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A sink that records reports and lets the test await the n-th one. */
function recordingSink() {
  const reports: DriftReport[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const sink: ReportSink = {
    name: 'recorder',
    async deliver(report) {
      reports.push(report);
      for (const w of waiters.filter((w) => reports.length >= w.count)) w.resolve();
    },
  };
  const reportCount = (count: number) =>
    new Promise<void>((resolve) => {
      if (reports.length >= count) resolve();
      else waiters.push({ count, resolve });
    });
  return { sink, reports, reportCount };
}

describe('drift loop', () => {
  it('reports clean, drift and failed runs with time and duration from the injected clock', async () => {
    const ticks = manualTicker();
    const recorder = recordingSink();
    let clock = Date.parse('2024-05-01T10:00:00.000Z');
    const outcomes: (() => Promise<Plan>)[] = [
      async () => {
        clock += 120;
        return plan();
      },
      async () => {
        clock += 80;
        return plan([mtuChange]);
      },
      async () => {
        clock += 5;
        throw new Error('connect ECONNREFUSED 127.0.0.1:9');
      },
      async () => plan(),
    ];
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => clock,
      run: () => outcomes.shift()!(),
      sinks: [recorder.sink],
      log: () => undefined,
    });
    loop.start();
    for (let i = 1; i <= 4; i++) {
      ticks.fire();
      await recorder.reportCount(i);
      await loop.whenIdle();
      clock += 1000;
    }
    const [clean, drift, failed, recovered] = recorder.reports;
    expect(clean).toMatchObject({
      format: 'netform.drift',
      format_version: 1,
      status: 'clean',
      time: '2024-05-01T10:00:00.000Z',
      duration_ms: 120,
      changes: [],
      skipped_ticks: 0,
    });
    expect(drift).toMatchObject({
      status: 'drift',
      duration_ms: 80,
      counts: { create: 0, update: 1, delete: 0, replace: 0 },
    });
    expect(drift!.changes).toEqual([
      {
        id: mtuChange.id,
        kind: 'device',
        action: 'update',
        key: 'a@example.com/laptop',
        label: 'device a@example.com/laptop',
        fields: [{ field: 'mtu', before: 1400, after: 1380 }],
        observed: 'differs',
      },
    ]);
    expect(failed).toMatchObject({
      status: 'failed',
      error: 'connect ECONNREFUSED 127.0.0.1:9',
      counts: { create: 0, update: 0, delete: 0, replace: 0 },
      changes: [],
    });
    expect(recovered!.status).toBe('clean');
    expect(loop.runs).toBe(4);
    await loop.stop();
  });

  it('never overlaps runs: a tick during a run is skipped, logged and counted in the next report', async () => {
    const ticks = manualTicker();
    const recorder = recordingSink();
    const logs: string[] = [];
    let active = 0;
    let maxActive = 0;
    const pending: ReturnType<typeof deferred<Plan>>[] = [];
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => 0,
      sinks: [recorder.sink],
      log: (m) => logs.push(m),
      run: async () => {
        active += 1;
        maxActive = Math.max(maxActive, active);
        const run = deferred<Plan>();
        pending.push(run);
        try {
          return await run.promise;
        } finally {
          active -= 1;
        }
      },
    });
    loop.start();
    ticks.fire(new Date('2024-05-01T10:00:00Z'));
    ticks.fire(new Date('2024-05-01T10:00:01Z'));
    ticks.fire(new Date('2024-05-01T10:00:02Z'));
    expect(pending).toHaveLength(1);
    expect(loop.running).toBe(true);
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatch(
      /skipped the run due at 2024-05-01T10:00:01\.000Z: the run started at .* is still in progress/,
    );
    pending[0]!.resolve(plan());
    await recorder.reportCount(1);
    expect(recorder.reports[0]!.skipped_ticks).toBe(0);
    await loop.whenIdle();
    ticks.fire(new Date('2024-05-01T10:00:03Z'));
    expect(pending).toHaveLength(2);
    pending[1]!.resolve(plan());
    await recorder.reportCount(2);
    expect(recorder.reports[1]!.skipped_ticks).toBe(2);
    expect(maxActive).toBe(1);
    await loop.stop();
  });

  it('counts a slow sink as part of the run', async () => {
    const ticks = manualTicker();
    const slow = deferred<void>();
    const delivered: DriftReport[] = [];
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => 0,
      run: async () => plan(),
      log: () => undefined,
      sinks: [
        {
          name: 'slow webhook',
          deliver: async (r) => {
            await slow.promise;
            delivered.push(r);
          },
        },
      ],
    });
    loop.start();
    ticks.fire();
    await new Promise((resolve) => setImmediate(resolve));
    ticks.fire();
    expect(loop.running).toBe(true);
    slow.resolve();
    await loop.stop();
    expect(delivered).toHaveLength(1);
  });

  it('stop() stops the ticks and waits for the run in progress', async () => {
    const ticks = manualTicker();
    const recorder = recordingSink();
    const run = deferred<Plan>();
    let runs = 0;
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => 0,
      run: () => {
        runs += 1;
        return run.promise;
      },
      sinks: [recorder.sink],
      log: () => undefined,
    });
    loop.start();
    ticks.fire();
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ticks.stopped).toBe(true);
    expect(stopped).toBe(false);
    ticks.fire();
    run.resolve(plan([mtuChange]));
    await stopping;
    expect(recorder.reports.map((r) => r.status)).toEqual(['drift']);
    expect(runs).toBe(1);
  });

  it('does not report a run that fails once stop() was called (the CLI cancels it), and logs it', async () => {
    const ticks = manualTicker();
    const recorder = recordingSink();
    const run = deferred<Plan>();
    const logged: string[] = [];
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => 0,
      run: () => run.promise,
      sinks: [recorder.sink],
      log: (message) => logged.push(message),
    });
    loop.start();
    ticks.fire();
    const stopping = loop.stop();
    run.reject(new Error("cannot read the server's state: This operation was aborted."));
    await stopping;
    expect(recorder.reports).toEqual([]);
    expect(loop.runs).toBe(0);
    expect(logged).toEqual(['drift: the run in progress was cancelled by the stop; it is not reported']);
  });

  it('keeps delivering to the other sinks when one fails, and logs the failure', async () => {
    const ticks = manualTicker();
    const recorder = recordingSink();
    const logs: string[] = [];
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => 0,
      run: async () => plan(),
      log: (m) => logs.push(m),
      sinks: [
        {
          name: 'report file /nope/report.json',
          deliver: async () => {
            throw new Error('ENOENT: no such file or directory');
          },
        },
        recorder.sink,
      ],
    });
    loop.start();
    ticks.fire();
    await recorder.reportCount(1);
    expect(logs).toEqual(['drift: report file /nope/report.json: ENOENT: no such file or directory']);
    await loop.stop();
  });

  it('hands the run a context so a failed report still names the server and files', async () => {
    const ticks = manualTicker();
    const recorder = recordingSink();
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => 0,
      sinks: [recorder.sink],
      log: () => undefined,
      describeError: (e) => redactSecrets((e as Error).message, ['nf_secret_token']),
      run: async (context: DriftRunContext) => {
        context.server = 'http://127.0.0.1:9';
        context.sources = ['desired/'];
        throw new Error('401 for token nf_secret_token');
      },
    });
    loop.start();
    ticks.fire();
    await recorder.reportCount(1);
    expect(recorder.reports[0]).toMatchObject({
      status: 'failed',
      server: 'http://127.0.0.1:9',
      sources: ['desired/'],
      error: '401 for token (redacted)',
    });
    await loop.stop();
  });
});

describe('drift loop: after each run', () => {
  it('calls afterRun once per run, after the report is delivered, even when the run failed', async () => {
    const ticks = manualTicker();
    const events: string[] = [];
    let failNext = false;
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => 0,
      run: async () => {
        events.push('run');
        if (failNext) throw new Error('server down');
        return plan();
      },
      sinks: [{ name: 'recorder', deliver: async (r) => void events.push(`deliver ${r.status}`) }],
      log: () => undefined,
      afterRun: () => void events.push('after'),
    });
    loop.start();
    ticks.fire();
    await loop.whenIdle();
    failNext = true;
    ticks.fire();
    await loop.whenIdle();
    expect(events).toEqual(['run', 'deliver clean', 'after', 'run', 'deliver failed', 'after']);
    await loop.stop();
  });

  it('logs an afterRun that throws and keeps the schedule going', async () => {
    const ticks = manualTicker();
    const recorder = recordingSink();
    const logs: string[] = [];
    const loop = new DriftLoop({
      ticker: ticks.ticker,
      now: () => 0,
      run: async () => plan(),
      sinks: [recorder.sink],
      log: (m) => logs.push(m),
      afterRun: () => {
        throw new Error('no collector');
      },
    });
    loop.start();
    ticks.fire();
    await loop.whenIdle();
    ticks.fire();
    await loop.whenIdle();
    expect(recorder.reports).toHaveLength(2);
    expect(loop.runs).toBe(2);
    expect(logs).toEqual(['drift: after the run: no collector', 'drift: after the run: no collector']);
    await loop.stop();
  });
});

describe('drift report', () => {
  it('never carries a secret value, even when a change forgot to mark it sensitive', () => {
    const secretChange: Change = {
      id: 'device:a@example.com/laptop',
      kind: 'device',
      action: 'update',
      key: 'a@example.com/laptop',
      label: 'device a@example.com/laptop',
      phase: 2,
      fingerprint: 'f',
      fields: [
        { field: 'preshared_key', before: 'old-psk-value', after: 'new-psk-value' },
        { field: 'password', before: null, after: 'pw', sensitive: true },
      ],
      body: { preshared_key: 'new-psk-value' },
    };
    const report = reportFromPlan(plan([secretChange]), { startedAt: 0, finishedAt: 1, skippedTicks: 0 });
    const text = JSON.stringify(report);
    expect(text).not.toContain('psk-value');
    expect(text).not.toContain('"pw"');
    expect(report.changes[0]!.fields.every((f) => f.sensitive)).toBe(true);
    expect(report.changes[0]).not.toHaveProperty('body');
  });
});
