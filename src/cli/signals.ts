/**
 * Stop requests for the long-running commands (`serve`, `drift --every`): SIGTERM, SIGINT, and
 * the parent process going away.
 *
 * The last one is for `npx netform …`: npx does not pass SIGTERM or SIGINT on to netform, so a
 * supervisor that signals the process it started (npx) left netform running as an orphan
 * (newcomer review 2.13). The README says to `exec node_modules/.bin/netform` instead; this is the
 * safety net when that advice was not followed: a process whose parent changes (it was adopted by
 * init or a subreaper) stops as if it had been sent SIGTERM.
 */

export type StopReason = NodeJS.Signals | 'parent exited';

export interface StopWatch {
  /** Aborted at the first stop request, with the StopReason as its reason. */
  signal: AbortSignal;
  /** Stops listening (the command is over). */
  dispose(): void;
}

/** How often the parent is looked at. */
const PARENT_CHECK_MS = 1_000;

/**
 * Calls `onStop` at each stop request: the first with `first` true, later ones (a second Ctrl-C)
 * with `first` false, so a command can stop gently first and at once the second time.
 */
export function watchStopRequests(onStop: (reason: StopReason, first: boolean) => void): StopWatch {
  const controller = new AbortController();
  const request = (reason: StopReason) => {
    const first = !controller.signal.aborted;
    if (first) controller.abort(reason);
    onStop(reason, first);
  };
  const onSignal = (signal: NodeJS.Signals) => request(signal);
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      request('parent exited');
    }
  }, PARENT_CHECK_MS);
  timer.unref();
  return {
    signal: controller.signal,
    dispose() {
      clearInterval(timer);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    },
  };
}
