/** How a safety limit was set, in words (the default is src/plan/limits.ts's code). */
import type { LimitCheck } from '../plan/types.js';

/** `10%`, `25`, `--allow-deletes 40` as written; the default as `default (25%, at least 5)`. */
export function limitSourceText(source: LimitCheck['source']): string {
  return typeof source === 'string' ? source : `default (${source.percent}%, at least ${source.atLeast})`;
}
