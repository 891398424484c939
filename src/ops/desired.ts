/** The desired state as operations read it: loaded and checked, or an expected failure listing every problem. */
import { loadDesiredState, type LoadOptions, type LoadResult } from '../desired/index.js';
import { effectiveAt } from '../desired/expiry.js';
import type { DesiredState } from '../model/state.js';
import { formatDiagnostic } from '../model/diagnostic.js';
import { OpError } from './errors.js';
import { elapsedSince, type OpEvents } from './events.js';

/** Reads the desired state; errors name file, line and column. Done before connecting, so bad files touch no server. */
export async function loadDesired(
  file: string,
  events: OpEvents = {},
  load: (path: string) => Promise<LoadResult> = loadDesiredState,
): Promise<DesiredState> {
  const started = performance.now();
  const loaded = await load(file);
  if (!loaded.ok) {
    throw new OpError('desired-state', {
      code: 'desired_state_errors',
      problems: loaded.diagnostics.map(formatDiagnostic),
    });
  }
  events.phase?.('load', elapsedSince(started));
  return loaded.state;
}

/**
 * Where the desired state's `{ env: NAME }` secrets and `-f -` are read from: a command line run's
 * environment and stdin (src/cli/io.ts); by default the process's.
 */
export type DesiredInput = Pick<LoadOptions, 'env' | 'stdin'> & {
  /**
   * The instant expiries are judged at, read at each load (a scheduled drift's every run): the
   * run's clock, or a read-only command's `--now`. Default: the system clock.
   */
  clock?: () => Date;
};

/**
 * Loads as loadDesiredState does, with the input's environment and stdin, and gives the state in
 * effect at the input's clock (src/desired/expiry.ts): every operation plans and evaluates that.
 */
export function loaderFor(input: DesiredInput = {}): (path: string) => Promise<LoadResult> {
  const { clock, ...rest } = input;
  return inEffect((path) => loadDesiredState(path, rest), clock);
}

/** A loader's states as in effect at the clock's instant (expired objects absent, expired roles demoted). */
export function inEffect(
  load: (path: string) => Promise<LoadResult>,
  clock: () => Date = () => new Date(),
): (path: string) => Promise<LoadResult> {
  return async (path) => {
    const result = await load(path);
    return result.ok ? { ...result, state: effectiveAt(result.state, clock()) } : result;
  };
}
