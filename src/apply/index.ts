/** Executing plans: the executor, and the check that a saved plan still holds. */
export {
  applyPlan,
  applySummary,
  type ApplyOptions,
  type ApplyProgress,
  type ApplySummary,
  type ChangeResult,
  type ChangeStatus,
} from './executor.js';
export { ServerGoneBreaker } from './breaker.js';
export { findStaleChanges } from './freshness.js';
export {
  readSavedPlan,
  readSavedPlanSecrets,
  SavedPlanError,
  type SavedPlanSecrets,
  type SecretReading,
} from './saved-plan.js';
