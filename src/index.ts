/**
 * netform as a library: the same pieces the CLI is made of, for scripts that want a plan as data.
 * The workflows (plan against a server, apply, drift, access tests, export, show, validate) are
 * the operations of src/ops; the pure pieces below them stay exported as they were.
 * (The CDKTF constructs are a separate entry point: `netform/cdktf`.)
 */
export * from './model/index.js';
export {
  loadDesiredState,
  checkDesiredState,
  resolveSecret,
  type Diagnostic,
  type LoadOptions,
  type LoadResult,
} from './desired/index.js';
export { ApiClient, ApiError, fetchLiveState, type ApiClientOptions } from './client/index.js';
export { planChanges, PlanError, type PlanOptions } from './plan/index.js';
export type { Change, ChangeAction, FieldChange, LimitCheck, Plan, PlanSummary, ResourceKind } from './plan/types.js';
export { renderPlan } from './views/plan.js';
export type { PlanFormat } from './views/plan-formats.js';
export { formatDiagnostic } from './views/diagnostics.js';
/**
 * Errors in words, as the command line prints them: an OpError's code and values, an ApiError's
 * facts (pass `describeError: apiErrorText` to ApiClient for its messages to name netform's flags),
 * a SavedPlanError's refusal.
 */
export { failureText, opErrorText } from './views/op-errors.js';
export { apiErrorText, retryLine } from './views/api-error.js';
export { savedPlanRefusalText } from './views/saved-plan.js';
export {
  applyPlan,
  findStaleChanges,
  readSavedPlanSecrets,
  type ApplyOptions,
  type ApplySummary,
} from './apply/index.js';
/** A saved plan's JSON text (sealed), and reading a saved plan back (docs/saved-plans.md). */
export { savedPlanJson, readSavedPlan, SavedPlanError } from './plan/planfile.js';
/** The key that seals saved plans and that readSavedPlan checks them with. */
export { PlanKey, PlanKeyError } from './plan/seal.js';
export * from './ops/index.js';
/**
 * The command line as a function: `run(argv, io)` runs `netform ARGV` with the streams,
 * environment and folder of `io` and resolves with the exit code; `memoryIo()` makes an io whose
 * streams are strings (README, "The command line as a function").
 */
export { run } from './cli/run.js';
export {
  memoryIo,
  Secrets,
  type CliIo,
  type Env,
  type MemoryIo,
  type MemoryIoOptions,
  type StopReason,
  type StopSource,
} from './cli/io.js';
