/**
 * Stop requests, the one place a command listens for them: from io.stops, which for the process
 * are SIGTERM, SIGINT, and (for the long-running commands, `serve` and `drift --every`) the
 * parent process going away (process.ts). The first request aborts an AbortSignal, which the
 * operations take; the command decides what a later one does (a second Ctrl-C: exit at once).
 */
import type { CliIo, StopReason } from './io.js';

export type { StopReason } from './io.js';

export interface StopWatch {
  /** Aborted at the first stop request, with the StopReason as its reason. */
  signal: AbortSignal;
  /** Starts listening, for a watch made with `armed: false`. */
  arm(): void;
  /** Stops listening (the command is over). */
  dispose(): void;
}

export interface StopOptions {
  /** Also stop when the parent process goes away. Default true. */
  parent?: boolean;
  /**
   * Listen from now on. Default true. `apply` arms its watch when the writes start: before that
   * a signal ends the process as usual (nothing was written).
   */
  armed?: boolean;
}

/**
 * Calls `onStop` at each stop request: the first with `first` true, later ones (a second Ctrl-C)
 * with `first` false, so a command can stop gently first and at once the second time.
 */
export function watchStopRequests(
  io: Pick<CliIo, 'stops'>,
  onStop: (reason: StopReason, first: boolean) => void,
  options: StopOptions = {},
): StopWatch {
  const controller = new AbortController();
  const request = (reason: StopReason) => {
    const first = !controller.signal.aborted;
    if (first) controller.abort(reason);
    onStop(reason, first);
  };
  let unsubscribe: (() => void) | undefined;
  const arm = () => {
    unsubscribe ??= io.stops.subscribe(request, { parent: options.parent !== false });
  };
  if (options.armed !== false) arm();
  return {
    signal: controller.signal,
    arm,
    dispose() {
      unsubscribe?.();
    },
  };
}
