/**
 * Drift on a cron schedule: one report per run, to the caller's writer as a JSON line, a report
 * file and a webhook, until the signal aborts. Never writes to the server. Apart from drift.ts
 * (one check), so that a single check does not load cron, the sinks and their HTTP client.
 */
import { DesiredStateReuse } from '../desired/reuse.js';
import { systemClock, type ScheduleClock } from '../drift/clock.js';
import { cronTicker } from '../drift/cron.js';
import { DriftLoop, type DriftRunContext, type ReportSink } from '../drift/loop.js';
import { collectGarbage } from '../drift/memory.js';
import { redactSecrets } from '../drift/report.js';
import { jsonLinesSink, reportFileSink, webhookSink, type WebhookOptions } from '../drift/sinks.js';
import type { Plan, WordedPlan } from '../plan/types.js';
import { inEffect, loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { checkDrift } from './drift.js';
import type { OpEvents } from './events.js';
import type { Connector } from './session.js';

export interface DriftScheduleRequest {
  file: string;
  /** Where the files' secrets are read from. */
  input?: DesiredInput;
  connect: Connector;
  /** A cron expression (a leading sixth field is seconds), checked by the caller. */
  every: string;
  timezone?: string;
  /** The time the schedule keeps (its ticks, the reports' times). Default: the system clock. */
  clock?: ScheduleClock;
  /** Also check once right away. */
  runAtStart?: boolean;
  /** Where each report goes, as one JSON line. */
  write: (text: string) => void;
  /** Keep the latest report in this file (replaced atomically). */
  reportFile?: string;
  /** POST a report when the status or the set of differences changes (with `always`, every drifted run too). */
  webhook?: Pick<WebhookOptions, 'url' | 'always' | 'userAgent' | 'text'>;
  /** Values cut out of every message: the token, the webhook URL. */
  secrets: string[];
  /** A failed run's error in words for the log (the command line's view); default its message. */
  describe?: (error: unknown) => string;
  /** A plan with its notes in words (src/views/notes.ts wordedPlan), as the reports' JSON shows them. */
  wordPlan: (plan: Plan) => WordedPlan;
}

export interface DriftScheduleEvents extends OpEvents {
  /** Diagnostics for people, never the reports themselves. */
  log(message: string): void;
  /** A run's plan is made (before its report is delivered). */
  checked?(plan: Plan): void;
}

export interface DriftSchedule {
  /** The server checked (no credentials). */
  server: string;
  nextRun: Date | null;
  /** Whether a run is in progress. */
  readonly running: boolean;
  /** Runs completed so far. */
  readonly runs: number;
  /** Resolves once the schedule has stopped (the signal aborted) and the run in progress has ended. */
  stopped: Promise<void>;
}

/**
 * Starts the schedule. Settings that can never work (files with errors, no usable server) are
 * refused now, not reported as failed runs forever after. When the signal aborts, the run in
 * progress stops reading at once and no new run starts.
 */
export async function startDriftSchedule(
  request: DriftScheduleRequest,
  events: DriftScheduleEvents,
  signal: AbortSignal,
): Promise<DriftSchedule> {
  const { log } = events;
  await loadDesired(request.file, {}, loaderFor(request.input));
  const probe = await request.connect.open();
  const server = probe.url;
  await probe.close();

  const { secrets } = request;
  const sinks: ReportSink[] = [jsonLinesSink(request.write)];
  if (request.reportFile) sinks.push(reportFileSink(request.reportFile));
  if (request.webhook) sinks.push(webhookSink({ ...request.webhook, secrets, log }));

  const clock = request.clock ?? systemClock;
  const ticker = cronTicker(request.every, { timezone: request.timezone, clock, log });
  // Aborted when the schedule stops: the run in progress stops reading at once.
  const runs = new AbortController();
  // Files read at every run: while they (and the secrets they name) are unchanged, the state read
  // last time is used again instead of parsing and checking them anew.
  const reuse = new DesiredStateReuse();
  const loop = new DriftLoop({
    ticker,
    now: () => clock.now(),
    sinks,
    log,
    describeError: (error) =>
      redactSecrets(request.describe?.(error) ?? (error instanceof Error ? error.message : String(error)), secrets),
    // Connecting again at each run picks up a renewed --token-file without a restart.
    run: async (context: DriftRunContext) => {
      context.sources = [request.file];
      context.server = server;
      // The files may be reused; their expiries are judged again at each run's own clock.
      const load = inEffect((path: string) => reuse.load(path, { env: request.input?.env }), request.input?.clock);
      const { plan } = await checkDrift({ file: request.file, connect: request.connect, load }, events, runs.signal);
      events.checked?.(plan);
      return request.wordPlan(plan);
    },
    // What a run leaves behind is freed while the process waits for the next one (see memory.ts).
    afterRun: () => {
      collectGarbage();
      clock.runEnded?.();
    },
  });

  loop.start();
  if (request.runAtStart) loop.tick();
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      runs.abort();
      void loop.stop().then(resolve);
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  return {
    server,
    nextRun: ticker.nextRun(),
    get running() {
      return loop.running;
    },
    get runs() {
      return loop.runs;
    },
    stopped,
  };
}
