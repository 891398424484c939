/**
 * A full garbage collection, asked for when a scheduled drift run is over. Between runs the
 * process sits idle, yet V8 collects its old generation only when that reaches a limit it sets
 * itself: without this, a `drift --every` process on a 60,000-object fleet swings between 300
 * and 600 MB from run to run (each run leaves its live lists and plan behind), also with ten
 * seconds between runs. With it, the process is back at the size of what it keeps (the reused
 * desired state) after every run, for about 60 ms of CPU while it has nothing else to do.
 *
 * Node exposes the collector only with `--expose-gc`; like jest's leak detector, this turns the
 * flag on at run time and takes the function from a fresh context. When that is refused, or
 * `gc` is not a function, nothing is collected: the loop works as before.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collector: (() => void) | null | undefined;

function obtain(): (() => void) | null {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

/** Collects all garbage now; false when the collector cannot be had. */
export function collectGarbage(): boolean {
  collector ??= obtain();
  if (!collector) return false;
  collector();
  return true;
}
