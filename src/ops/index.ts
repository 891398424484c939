/**
 * The workflows as a library: each takes a request, an events object and an AbortSignal, and
 * returns data. No printing, no process exit codes; expected failures are OpErrors.
 */
export { OpError, type OpErrorKind } from './errors.js';
export type { OpEvents, Phase } from './events.js';
export {
  connectTo,
  openSession,
  readLiveState,
  EMBEDDED_ADMIN_EMAIL,
  type ClientTuning,
  type Connector,
  type Session,
  type SessionSignals,
  type SessionSpec,
} from './session.js';
export { DEFAULT_EMBEDDED_DB } from './embedded-db.js';
export { loadDesired } from './desired.js';
export { planAgainstServer, type PlanRequest, type PlanResult, type PlanShaping } from './plan.js';
export {
  applyPlanned,
  applySaved,
  type ApplyEvents,
  type ApplyOutcome,
  type PlannedApplyRequest,
  type SavedApplyRequest,
} from './apply.js';
export { readSavedPlanFile } from './saved-plan-file.js';
export { checkDrift, type DriftCheck, type DriftRequest } from './drift.js';
export {
  startDriftSchedule,
  type DriftSchedule,
  type DriftScheduleEvents,
  type DriftScheduleRequest,
} from './drift-schedule.js';
export { explainPacket, runTests, type AccessSource } from './access.js';
export { reachOfUser, whoCanReachTarget } from './reach.js';
export { reviewServer, writeReviewFile, type ReviewRequest } from './review.js';
export { exportServer, shippedSchemaReference, writeExportFiles, type ExportRequest } from './export.js';
export { showLive, type ShowRequest } from './show.js';
export { validateDesired, type Validation } from './validate.js';
