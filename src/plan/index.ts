/** Planning: the pure diff, the plan document, limits, fingerprints and the saved-plan check. */
export { planChanges, PlanError, PHASE, type PlanOptions } from './planner.js';
export { fingerprintOf } from './fingerprint.js';
export {
  configuredAllowances,
  DEFAULT_LIMITS,
  evaluateLimits,
  plannedCount,
  summarize,
  type LimitAllowance,
  type LimitOverrides,
} from './limits.js';
export { indexLiveState, liveRuleKey, ruleLabel, type LiveIndex } from './live-index.js';
export * from './types.js';
