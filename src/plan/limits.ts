/**
 * Safety limits on one apply (spec/netform.md section 4). Without `settings.limits`, a plan may
 * delete at most 25% of the live objects (users, devices and rules together; cascades count) and
 * update at most 50% of them, and always at least 5 deletions and 10 updates so that a small
 * server can still be worked on. So one bad commit (a deleted file, a wrong glob with prune on)
 * cannot delete most of a server without someone saying so with --allow-deletes.
 * Limits written in the files apply exactly as written (a percentage rounds down).
 */
import type { Limit } from '../model/state.js';
import type { LimitCheck } from './types.js';

export const DEFAULT_LIMITS = {
  delete: { percent: 25, atLeast: 5 },
  update: { percent: 50, atLeast: 10 },
} as const;

export function checkLimit(
  kind: 'delete' | 'update',
  planned: number,
  liveCount: number,
  configured: Limit | undefined,
  override: number | undefined,
): LimitCheck {
  let allowed: number;
  let source: string;
  if (override !== undefined) {
    allowed = override;
    source = `--allow-${kind}s ${override}`;
  } else if (configured) {
    allowed = configured.kind === 'count' ? configured.value : Math.floor((configured.value * liveCount) / 100);
    source = configured.kind === 'count' ? String(configured.value) : `${configured.value}%`;
  } else {
    const d = DEFAULT_LIMITS[kind];
    allowed = Math.max(d.atLeast, Math.floor((d.percent * liveCount) / 100));
    source = `default (${d.percent}%, at least ${d.atLeast})`;
  }
  return { kind, planned, allowed, source, exceeded: planned > allowed };
}
