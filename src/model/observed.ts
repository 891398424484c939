/**
 * What drift saw, for one planned change: the object is on the server only (apply would delete
 * it), in the files only (apply would create it), or in both and differs (update, replace).
 */
export type Observed = 'live_only' | 'declared_only' | 'differs';

export function observedOf(action: 'create' | 'update' | 'delete' | 'replace'): Observed {
  if (action === 'delete') return 'live_only';
  if (action === 'create') return 'declared_only';
  return 'differs';
}
