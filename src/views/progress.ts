/**
 * What a person (or a CI log) sees while apply writes. On a terminal: one live line on stderr.
 * Without one (CI logs, pipes): each write's outcome as a line on stdout the moment it settles
 * (`created user alice@example.com (0.2 s)`), and a running count on stderr at least every
 * `everyMs` (10 s) while writes are going on.
 */
import type { ApplyProgress, ChangeResult } from '../apply/index.js';
import type { Change } from '../plan/types.js';
import { inertText } from './escape.js';
import { resultWhy } from './ops-apply.js';
import { DONE_VERB } from './symbols.js';

export interface ProgressReporter {
  onStart(change: Change): void;
  onSettled(result: ChangeResult, detail: { ms: number }): void;
  onProgress(progress: ApplyProgress): void;
  /** Started but not yet settled, by change id. */
  inFlight(): ReadonlySet<string>;
  /** The changes whose outcome line was already written (without a terminal), by id: the summary leaves them out. */
  logged(): ReadonlySet<string>;
  stop(): void;
}

export interface ProgressOptions {
  total: number;
  /** Whether stderr is a terminal (the live line) or not (a line per write). */
  terminal: boolean;
  /** Running count interval without a terminal. Default 10 s. */
  everyMs?: number;
  /** Where the lines go: the per-write lines (stdout), the live line and the running count (stderr). */
  out: (text: string) => void;
  err: (text: string) => void;
  now?: () => number;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** `created user alice@example.com (0.2 s)`, `FAILED to create ...: why`, `not attempted: ...: why`. */
export function outcomeLine(result: ChangeResult, ms: number): string {
  // The label and the server's message are inert: a line of the log is one line, without escapes.
  const label = inertText(result.label);
  const reason = resultWhy(result);
  const why = reason ? `: ${inertText(reason)}` : '';
  if (result.status === 'done') return `${DONE_VERB[result.action]} ${label} (${seconds(ms)})${why}`;
  if (result.status === 'failed') return `FAILED to ${result.action} ${label} (${seconds(ms)})${why}`;
  return `not attempted: ${result.action} ${label}${why}`;
}

export function progressReporter(options: ProgressOptions): ProgressReporter {
  const { out, err } = options;
  const now = options.now ?? Date.now;
  const started = now();
  const inFlight = new Set<string>();
  let latest: ApplyProgress = { settled: 0, total: options.total, failed: 0 };

  if (options.terminal) {
    let last = 0;
    let shown = false;
    return {
      onStart: (change) => inFlight.add(change.id),
      onSettled: (result) => inFlight.delete(result.id),
      onProgress: (p) => {
        if (options.total < 10) return;
        const t = now();
        if (t - last < 100 && p.settled < p.total) return;
        last = t;
        shown = true;
        err(`\r\x1b[2KApplying: ${p.settled}/${p.total} settled${p.failed ? `, ${p.failed} failed` : ''}`);
      },
      inFlight: () => inFlight,
      logged: () => new Set<string>(),
      stop: () => {
        if (shown) err('\r\x1b[2K');
      },
    };
  }

  const everyMs = options.everyMs ?? 10_000;
  const timer = setInterval(() => {
    const p = latest;
    err(
      `progress: ${p.settled}/${p.total} settled (${p.failed} failed), ${inFlight.size} in flight, ${seconds(now() - started)} elapsed\n`,
    );
  }, everyMs);
  timer.unref();
  const logged = new Set<string>();
  return {
    onStart: (change) => inFlight.add(change.id),
    onSettled: (result, detail) => {
      inFlight.delete(result.id);
      out(`${outcomeLine(result, detail.ms)}\n`);
      logged.add(result.id);
    },
    onProgress: (p) => {
      latest = p;
    },
    inFlight: () => inFlight,
    logged: () => logged,
    stop: () => clearInterval(timer),
  };
}
