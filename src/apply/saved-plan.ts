/** Reading a saved plan (`netform plan -o`): the document must be one this netform can apply exactly. */
import { readFileSync } from 'node:fs';
import { planDigest } from '../plan/digest.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, type Plan } from '../plan/types.js';

export class SavedPlanError extends Error {
  override readonly name = 'SavedPlanError';
}

const ACTIONS = new Set(['create', 'update', 'delete', 'replace']);
const KINDS = new Set(['user', 'device', 'rule', 'configuration']);

export function readSavedPlan(path: string): Plan {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SavedPlanError(
      `${path}: cannot read the saved plan (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SavedPlanError(
      `${path}: not a saved plan (not JSON). To apply desired-state files, pass them with -f: netform apply -f ${path}`,
    );
  }
  const plan = doc as Partial<Plan>;
  if (typeof doc !== 'object' || doc === null || plan.format !== PLAN_FORMAT) {
    throw new SavedPlanError(`${path}: not a saved plan (its "format" is not "${PLAN_FORMAT}")`);
  }
  if (plan.format_version !== PLAN_FORMAT_VERSION) {
    throw new SavedPlanError(
      `${path}: plan format version ${String(plan.format_version)} is not supported by this netform (it reads version ${PLAN_FORMAT_VERSION}); make the plan again`,
    );
  }
  if (typeof plan.digest !== 'string') {
    throw new SavedPlanError(
      `${path}: the saved plan has no digest, so it cannot be told apart from a plan edited by hand; make it again with netform plan -f PATH -o PLANFILE`,
    );
  }
  if (plan.digest !== planDigest(plan)) {
    throw new SavedPlanError(
      `${path}: the saved plan was modified after netform plan wrote it (its digest does not match); nothing was changed. Make it again with netform plan -f PATH -o PLANFILE`,
    );
  }
  if (
    !Array.isArray(plan.changes) ||
    typeof plan.server !== 'string' ||
    !Array.isArray(plan.limits) ||
    typeof plan.summary?.cascade !== 'number'
  ) {
    throw new SavedPlanError(`${path}: the saved plan is incomplete (changes, server, summary or limits missing)`);
  }
  plan.changes.forEach((change, i) => {
    const ok =
      typeof change === 'object' &&
      change !== null &&
      typeof change.id === 'string' &&
      KINDS.has(change.kind) &&
      ACTIONS.has(change.action) &&
      typeof change.key === 'string' &&
      typeof change.label === 'string' &&
      typeof change.phase === 'number' &&
      Array.isArray(change.fields) &&
      (change.cascade === undefined ||
        (Array.isArray(change.cascade) && change.cascade.every((item) => typeof item?.label === 'string'))) &&
      (change.action === 'create' || typeof change.liveId === 'string');
    if (!ok) throw new SavedPlanError(`${path}: change ${i + 1} of the saved plan is malformed`);
  });
  return plan as Plan;
}
