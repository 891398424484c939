/** Planning: the pure diff, the plan document, limits, fingerprints and the saved-plan check. */
export { checkPlannable, planChanges, PlanError, type PlanOptions } from './planner.js';
export * from './types.js';
