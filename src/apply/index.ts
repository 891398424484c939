/** Executing plans: the executor, and the check that a saved plan still holds. */
export {
  applyPlan,
  applySummary,
  type ApplyOptions,
  type ApplyProgress,
  type ApplySummary,
  type ChangeResult,
  type WriteStop,
} from './executor.js';
export { ServerGoneBreaker } from './breaker.js';
export { findStaleChanges } from './freshness.js';
export { readSavedPlanSecrets } from './saved-plan.js';
