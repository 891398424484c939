/** The desired state as operations read it: loaded and checked, or an expected failure listing every problem. */
import { loadDesiredState, type LoadOptions, type LoadResult } from '../desired/index.js';
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
    throw new OpError(
      'desired-state',
      `the desired state has errors:\n${loaded.diagnostics.map((d) => `  ${formatDiagnostic(d)}`).join('\n')}`,
    );
  }
  events.phase?.('load', elapsedSince(started));
  return loaded.state;
}

/**
 * Where the desired state's `{ env: NAME }` secrets and `-f -` are read from: a command line run's
 * environment and stdin (src/cli/io.ts); by default the process's.
 */
export type DesiredInput = Pick<LoadOptions, 'env' | 'stdin'>;

/** Loads as loadDesiredState does, with the input's environment and stdin. */
export function loaderFor(input: DesiredInput = {}, options: LoadOptions = {}): (path: string) => Promise<LoadResult> {
  return (path) => loadDesiredState(path, { ...options, ...input });
}

/** A `-f` path as messages show it (`stdin` for `-`). */
export { displayPath } from '../desired/index.js';
