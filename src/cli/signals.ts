/**
 * Stop requests, the one place a command listens for them: from io.stops, which for the process
 * are SIGTERM, SIGINT, and (for the long-running commands, `serve` and `drift --every`, when they
 * follow their parent) the parent process going away (process.ts). The first request aborts an
 * AbortSignal, which the operations take; the command decides what a later one does (a second
 * Ctrl-C: exit at once).
 *
 * The parent is watched for `npx netform …`: npx does not pass SIGTERM or SIGINT on to netform,
 * so a supervisor that signals the process it started (npx) left netform running as an orphan.
 * Only for a process npx started (followsParent), or given --exit-with-parent: a server started
 * with `nohup … &` or `setsid`, or by a start script that backgrounds it, or by a service manager,
 * is adopted on purpose.
 */
import type { CliIo, StopReason } from './io.js';

export type { StopReason } from './io.js';

/**
 * Whether npx (`npm exec`) started this process: npm marks its children's environment
 * (`npm_command=exec`, `npm_lifecycle_event=npx`). `npm run`/`npm start` pass signals on to
 * their script, and a start script may background the server on purpose: not these.
 */
export function startedByNpx(env: CliIo['env']): boolean {
  return env.npm_command === 'exec' || env.npm_lifecycle_event === 'npx';
}

export const EXIT_WITH_PARENT =
  'stop when the parent process exits (the default only when started through npx or npm exec; otherwise nohup, setsid, a start script or a service manager keeps it running)';

/** Whether a long-running command stops with its parent: asked for, or started through npx. */
export function followsParent(exitWithParent: boolean | undefined, env: CliIo['env']): boolean {
  return exitWithParent === true || startedByNpx(env);
}

export interface StopWatch {
  /** Aborted at the first stop request, with the StopReason as its reason. */
  signal: AbortSignal;
  /** Starts listening, for a watch made with `armed: false`. */
  arm(): void;
  /** Stops listening (the command is over). */
  dispose(): void;
}

export interface StopOptions {
  /** Also stop when the parent process goes away (followsParent). Default false. */
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
    unsubscribe ??= io.stops.subscribe(request, { parent: options.parent === true });
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
