/**
 * The saved-plan file (docs/saved-plans.md; schemas/plan.schema.json): the one place that writes
 * a saved plan (`netform plan -o`, and `plan --format json`), sealed, and that reads one back. Reading trusts nothing before the seal
 * is checked (seal.ts), and nothing after it that the schema does not allow: a plan is returned
 * only when it is JSON, of format `netform.plan` in a version this netform reads, sealed under
 * the key of this run, unedited, and of the saved-plan schema.
 */
import { DESIRED_STATE_MAX_BYTES, FileReadError, readBoundedFileSync, sizeLimit } from '../model/files.js';
import { inertWorkflowCommands } from '../model/inert.js';
import { CANONICAL_MAX_DEPTH, CanonicalJsonError, findProtoMember } from './canonical.js';
import { planSchemaProblem } from './plan-schema.js';
import { checkSeal, PLAN_KEY_ENV, sealedDocument, type PlanKey, type PlanKeySource } from './seal.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, PLAN_FORMAT_VERSIONS_READ, type Plan } from './types.js';

export class SavedPlanError extends Error {
  override readonly name = 'SavedPlanError';
}

/**
 * The saved plan of `plan` as JSON text (what `plan -o` writes and `plan --format json` prints):
 * its secrets as reference and HMAC, sealed with `key` (seal.ts).
 */
export function savedPlanJson(plan: Plan, key: PlanKey): string {
  // A value holding a workflow command is written with a JSON escape: the same value, inert in a log.
  return `${inertWorkflowCommands(JSON.stringify(sealedDocument(plan, key), null, 2), { lineStarts: false })}\n`;
}

/** A saved plan is read whole: at most as large as the desired state it can be made from. */
const SAVED_PLAN_LIMIT = sizeLimit(DESIRED_STATE_MAX_BYTES, 'a saved plan');
const AGAIN = 'make it again with netform plan -f PATH -o PLANFILE';
const READ = PLAN_FORMAT_VERSIONS_READ.join(' and ');

/**
 * The saved plan at `path`, checked, in this order: JSON, format, a version this netform reads,
 * no `__proto__` member, sealed under `key` (PlanKey.from: NETFORM_PLAN_KEY, or the token of this
 * run), then the saved-plan schema. Every refusal is a SavedPlanError whose message says why and
 * what to do; nothing the file holds is printed.
 */
export function readSavedPlan(path: string, key: PlanKey): Plan {
  let text: string;
  try {
    text = readBoundedFileSync(path, SAVED_PLAN_LIMIT).toString('utf8');
  } catch (error) {
    if (!(error instanceof FileReadError)) throw error;
    throw new SavedPlanError(
      error.rule ? `${path}: ${error.message}` : `${path}: cannot read the saved plan (${error.message})`,
    );
  }
  return parseSavedPlan(text, path, key);
}

/** A saved plan's text, checked as readSavedPlan checks it; `path` names it in messages. */
export function parseSavedPlan(text: string, path: string, key: PlanKey): Plan {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SavedPlanError(
      `${path}: not a saved plan (not JSON). To apply desired-state files, pass them with -f: netform apply -f ${path}`,
    );
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || (doc as Plan).format !== PLAN_FORMAT)
    throw new SavedPlanError(`${path}: not a saved plan (its "format" is not "${PLAN_FORMAT}")`);
  checkVersion(path, (doc as Plan).format_version);
  const proto = findProtoMember(doc);
  if (proto !== null)
    throw new SavedPlanError(
      `${path}: the saved plan has a member named __proto__ (in ${proto}), which netform never writes; it was edited by hand. Nothing was changed; ${AGAIN}`,
    );
  checkSealOf(path, doc as Record<string, unknown>, key);
  const problem = planSchemaProblem(doc, true);
  if (problem)
    throw new SavedPlanError(
      `${path}: the saved plan does not have the shape of plan format version ${(doc as Plan).format_version} (${problem.at || 'the document'}: ${problem.message}). Nothing was changed; ${AGAIN}`,
    );
  return doc as Plan;
}

function checkVersion(path: string, version: unknown): void {
  if ((PLAN_FORMAT_VERSIONS_READ as readonly unknown[]).includes(version)) return;
  const whole = typeof version === 'number' && Number.isSafeInteger(version);
  if (whole && version >= 1 && version < PLAN_FORMAT_VERSIONS_READ[0])
    throw new SavedPlanError(
      `${path}: the saved plan was made by an earlier netform (plan format version ${version}; this netform reads versions ${READ}, which are sealed): plan again, then apply the new plan. Nothing was changed`,
    );
  if (whole && version > PLAN_FORMAT_VERSION)
    throw new SavedPlanError(
      `${path}: the saved plan was made by a newer netform (plan format version ${version}; this netform reads versions ${READ}): upgrade netform to apply it, or make the plan with this netform. Nothing was changed`,
    );
  throw new SavedPlanError(
    `${path}: plan format version ${whole ? String(version) : '(not a whole number)'} is not supported by this netform (it reads versions ${READ}); make the plan again`,
  );
}

const SOURCES: Record<PlanKeySource, string> = {
  NETFORM_PLAN_KEY: PLAN_KEY_ENV,
  token: 'the API token',
  'embedded-token': "the embedded server's token",
};

function checkSealOf(path: string, doc: Record<string, unknown>, key: PlanKey): void {
  let check: ReturnType<typeof checkSeal>;
  try {
    check = checkSeal(doc, key);
  } catch (error) {
    if (!(error instanceof CanonicalJsonError)) throw error;
    const why = error.message.startsWith('nested')
      ? `it is nested deeper than ${CANONICAL_MAX_DEPTH} levels`
      : 'it holds a value JSON cannot hold';
    throw new SavedPlanError(`${path}: not a saved plan netform wrote (${why}). Nothing was changed; ${AGAIN}`);
  }
  if (check === 'sealed') return;
  if (check === 'unsealed')
    throw new SavedPlanError(
      `${path}: the saved plan has no seal, so it cannot be told apart from a plan edited by hand (a drift report's JSON is not a saved plan). Nothing was changed; ${AGAIN}`,
    );
  if (check === 'modified')
    throw new SavedPlanError(
      `${path}: the saved plan was modified after netform plan wrote it (its seal does not match). Nothing was changed; ${AGAIN}`,
    );
  const recorded = (doc.seal_key as { source?: unknown }).source;
  const sealedWith = typeof recorded === 'string' && recorded in SOURCES ? (recorded as PlanKeySource) : null;
  const why =
    sealedWith === null
      ? 'another key'
      : sealedWith === key.source
        ? `another ${SOURCES[sealedWith].replace(/^the /, '')}`
        : `${SOURCES[sealedWith]}, and this run has ${key.source === 'NETFORM_PLAN_KEY' ? `${PLAN_KEY_ENV} set` : `${SOURCES[key.source]} (${PLAN_KEY_ENV} is not set)`}`;
  throw new SavedPlanError(
    `${path}: the saved plan was sealed under another key (it was made with ${why}). Plan and apply must share the API token or ${PLAN_KEY_ENV}: give both the same token, or the same ${PLAN_KEY_ENV} (for example, CI plan and apply jobs with different tokens). Nothing was changed`,
  );
}
