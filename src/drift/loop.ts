/**
 * The scheduled drift loop, free of timers, clocks and I/O of its own: the ticker, the clock, the
 * run and the sinks come in as parameters, so tests drive it tick by tick.
 *
 * - Runs never overlap: a tick that arrives while a run (sinks included) is still going is
 *   skipped, logged, and counted in the next report's `skipped_ticks`.
 * - A run that throws becomes a `failed` report; the loop keeps going.
 * - A sink that fails is logged; the other sinks still get the report.
 * - stop() stops the ticks and resolves once the run in progress (if any) has finished. A run
 *   that fails once stop() was called (the CLI cancels it) is logged, not reported.
 * - afterRun, when given, is called once each run's report is delivered.
 */
import type { WordedPlan } from '../plan/types.js';
import { reportFromFailure, reportFromPlan, type DriftReport } from './report.js';

/** Calls back on every scheduled time until stopped. */
export interface Ticker {
  start(onTick: (scheduledAt: Date) => void): void;
  stop(): void | Promise<void>;
}

/** Where a report goes. A sink reports its own trouble by throwing; the loop logs it. */
export interface ReportSink {
  name: string;
  deliver(report: DriftReport): Promise<void>;
}

export interface DriftRunContext {
  /** Filled in by the run as soon as it knows them, so a failed report still says what it was about. */
  server: string | null;
  sources: string[];
}

export interface DriftLoopOptions {
  ticker: Ticker;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** One drift check: read the files, fetch the live state, plan. Never writes to the server. */
  run: (context: DriftRunContext) => Promise<WordedPlan>;
  sinks: ReportSink[];
  /** Diagnostics for people (stderr in the CLI), never the reports themselves. */
  log: (message: string) => void;
  /** Turns a run's error into the report's message (redacting what must not leak). */
  describeError?: (error: unknown) => string;
  /** Called once a run's report is delivered, before the loop is idle again (the CLI collects garbage). */
  afterRun?: () => void;
}

export class DriftLoop {
  readonly #options: DriftLoopOptions;
  #current: Promise<void> | null = null;
  #currentStartedAt = 0;
  #skippedTicks = 0;
  #runs = 0;
  #started = false;
  #stopping: Promise<void> | null = null;

  constructor(options: DriftLoopOptions) {
    this.#options = options;
  }

  /** Runs completed so far (reports handed to the sinks). */
  get runs(): number {
    return this.#runs;
  }

  get running(): boolean {
    return this.#current !== null;
  }

  /** Resolves once no run is in progress. */
  async whenIdle(): Promise<void> {
    while (this.#current) await this.#current;
  }

  start(): void {
    if (this.#started) throw new Error('the drift loop is already started');
    this.#started = true;
    this.#options.ticker.start((scheduledAt) => this.tick(scheduledAt));
  }

  /** Stops the schedule; resolves after the run in progress (if any) has finished reporting. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#options.ticker.stop();
      await this.whenIdle();
    })();
    return this.#stopping;
  }

  /**
   * A scheduled time has come: start a run unless one is in progress (then the tick is skipped).
   * Also used to run once right away, through the same guard.
   */
  tick(scheduledAt: Date = new Date(this.#options.now())): void {
    if (this.#stopping) return;
    if (this.#current) {
      this.#skippedTicks += 1;
      const since = new Date(this.#currentStartedAt).toISOString();
      this.#options.log(
        `drift: skipped the run due at ${scheduledAt.toISOString()}: the run started at ${since} is still in progress`,
      );
      return;
    }
    this.#current = this.#runOnce().finally(() => {
      this.#current = null;
    });
  }

  async #runOnce(): Promise<void> {
    const { now, run, sinks, log } = this.#options;
    const startedAt = now();
    this.#currentStartedAt = startedAt;
    const skippedTicks = this.#skippedTicks;
    this.#skippedTicks = 0;
    const context: DriftRunContext = { server: null, sources: [] };
    let report: DriftReport;
    try {
      const plan = await run(context);
      report = reportFromPlan(plan, { startedAt, finishedAt: now(), skippedTicks });
    } catch (error) {
      if (this.#stopping) {
        // Stopping cancels the run in progress: its failure says nothing about the server.
        log(`drift: the run in progress was cancelled by the stop; it is not reported`);
        return;
      }
      report = reportFromFailure(this.#describe(error), context, { startedAt, finishedAt: now(), skippedTicks });
    }
    for (const sink of sinks) {
      try {
        await sink.deliver(report);
      } catch (error) {
        log(`drift: ${sink.name}: ${this.#describe(error)}`);
      }
    }
    this.#runs += 1;
    try {
      this.#options.afterRun?.();
    } catch (error) {
      log(`drift: after the run: ${this.#describe(error)}`);
    }
  }

  #describe(error: unknown): string {
    if (this.#options.describeError) return this.#options.describeError(error);
    return error instanceof Error ? error.message : String(error);
  }
}
