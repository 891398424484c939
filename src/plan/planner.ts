/**
 * planChanges: the pure diff of a desired state against a live state (docs/netform.md
 * sections 2 and 4). No state file: live objects are matched to declared ones by natural key.
 * Linear in the number of objects: every lookup goes through maps built once.
 *
 * The plan is made in stages, each doing one thing to a shared PlanContext (context.ts), in the
 * order of STAGES below: matching (users, devices), renames, rules, deletions (absent, expired
 * rules, prune), guards, conflicts (unique values: free before take, or a plan error), ordering,
 * tunnel capacity, configuration, expiries, effective values, rename hints; then what no file
 * declares (undeclared) and the plan document. A new kind of change adds a stage to STAGES.
 */
import type { DesiredState, LiveState } from '../model/state.js';
import { planConfiguration } from './configuration.js';
import { checkTunnelCapacity } from './capacity.js';
import { resolveUniqueValues } from './conflicts.js';
import { PHASE, PlanContext, PlanError, type PlanOptions } from './context.js';
import { planAbsent, planPrune } from './deletions.js';
import { markExpiries, planExpiredRules } from './expiries.js';
import { planDocument } from './document.js';
import { checkTokenUser, guardUserRemovals } from './guards.js';
import { matchDeclaredUsers, planDevices, planUsers } from './matching.js';
import { makeRoomForNewDevices } from './ordering.js';
import { hintUserRenames, matchRenamedUsers } from './renames.js';
import { planRules } from './rules.js';
import { effectiveValues } from './effective.js';
import { findUndeclared } from './undeclared.js';
import type { Plan } from './types.js';

export { PlanError, type PlanOptions } from './context.js';

type Stage = (ctx: PlanContext) => void;

/** `configuration:` against `/v0/configuration` (its own module): one `~ configuration`, with the users. */
function planConfigurationStage(ctx: PlanContext): void {
  const change = planConfiguration(ctx.desired.configuration, ctx.live.configuration, PHASE.users);
  if (change) ctx.add(change);
}

/** The effective values the plan moves without naming them (effective.ts), on the changes that move them. */
function effectiveValuesStage(ctx: PlanContext): void {
  const moved = effectiveValues({
    changes: [...ctx.changes.values()],
    devices: ctx.live.devices,
    keyOf: (device) => ctx.index.deviceKeyOf.get(device)!,
    configuration: ctx.live.configuration,
  });
  for (const [id, values] of moved) ctx.changes.get(id)!.effective = values;
}

/** The stages in the order they run; later stages see what earlier ones planned. */
const STAGES: readonly Stage[] = [
  matchDeclaredUsers,
  matchRenamedUsers,
  planUsers,
  planDevices,
  planRules,
  planAbsent,
  planExpiredRules,
  planPrune,
  checkTokenUser,
  guardUserRemovals, // before conflicts: only deletions that survive the guards may free a value
  resolveUniqueValues,
  makeRoomForNewDevices,
  checkTunnelCapacity, // after conflicts and guards: only the deletions that stay free addresses
  planConfigurationStage,
  markExpiries, // after the guards: only the deletions and demotions that stay
  effectiveValuesStage,
  hintUserRenames, // last: its hint joins the problems when there are any
];

/** The stages run on a fresh context; a PlanError when they found problems. */
function planStages(desired: DesiredState, live: LiveState, options: PlanOptions): PlanContext {
  const ctx = new PlanContext(desired, live, options);
  for (const stage of STAGES) stage(ctx);
  if (ctx.problems.length > 0) throw new PlanError(ctx.problems);
  return ctx;
}

export function planChanges(desired: DesiredState, live: LiveState, options: PlanOptions): Plan {
  const ctx = planStages(desired, live, options);
  return planDocument(ctx, findUndeclared(ctx));
}

/**
 * Whether `desired` can be planned against `live`: the PlanError planChanges would throw, without
 * the plan document (for a caller that needs only the refusal, as adopt checks its own edits).
 */
export function checkPlannable(desired: DesiredState, live: LiveState, options: PlanOptions): void {
  planStages(desired, live, options);
}
