/**
 * Reading a saved plan (`netform plan -o`): the document must be one this netform can apply
 * exactly, sealed under the key of this run (src/plan/seal.ts), and its secrets must still be the
 * ones it was made with.
 */
import { DESIRED_STATE_MAX_BYTES, FileReadError, readBoundedFileSync, sizeLimit } from '../model/files.js';
import { describeSecretRef, type SecretRef } from '../model/secret.js';
import { CANONICAL_MAX_DEPTH, CanonicalJsonError, findProtoMember } from '../plan/canonical.js';
import { checkSeal, PLAN_KEY_ENV, sameHmac, type PlanKey, type PlanKeySource } from '../plan/seal.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, type Plan } from '../plan/types.js';

export class SavedPlanError extends Error {
  override readonly name = 'SavedPlanError';
}

const ACTIONS = new Set(['create', 'update', 'delete', 'replace']);
const KINDS = new Set(['user', 'device', 'rule', 'configuration']);
const SECRET_FIELDS = new Set(['password', 'preshared_key']);
/** A saved plan is read whole: at most as large as the desired state it can be made from. */
const SAVED_PLAN_LIMIT = sizeLimit(DESIRED_STATE_MAX_BYTES, 'a saved plan');
const AGAIN = 'make it again with netform plan -f PATH -o PLANFILE';

/**
 * The saved plan at `path`, checked: JSON, this format and version, no `__proto__` member, sealed
 * under `key` (PlanKey.from: NETFORM_PLAN_KEY, or the token of this run), and well formed. Every
 * refusal is a SavedPlanError whose message says why and what to do; nothing is trusted before the
 * seal is checked, and nothing the file holds is printed.
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
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SavedPlanError(
      `${path}: not a saved plan (not JSON). To apply desired-state files, pass them with -f: netform apply -f ${path}`,
    );
  }
  const plan = doc as Partial<Plan>;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || plan.format !== PLAN_FORMAT) {
    throw new SavedPlanError(`${path}: not a saved plan (its "format" is not "${PLAN_FORMAT}")`);
  }
  checkVersion(path, plan.format_version);
  const proto = findProtoMember(doc);
  if (proto !== null)
    throw new SavedPlanError(
      `${path}: the saved plan has a member named __proto__ (in ${proto}), which netform never writes; it was edited by hand. Nothing was changed; ${AGAIN}`,
    );
  checkSealOf(path, doc as Record<string, unknown>, key);
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
      (change.action === 'create' || typeof change.liveId === 'string') &&
      (change.secrets === undefined ||
        (Array.isArray(change.secrets) &&
          change.secrets.every(
            (s) =>
              typeof s === 'object' &&
              s !== null &&
              SECRET_FIELDS.has(s.field) &&
              typeof s.ref === 'object' &&
              s.ref !== null &&
              typeof s.hmac === 'string',
          )));
    if (!ok) throw new SavedPlanError(`${path}: change ${i + 1} of the saved plan is malformed`);
  });
  return plan as Plan;
}

function checkVersion(path: string, version: unknown): void {
  if (version === PLAN_FORMAT_VERSION) return;
  if (typeof version === 'number' && Number.isInteger(version) && version >= 1 && version < PLAN_FORMAT_VERSION)
    throw new SavedPlanError(
      `${path}: the saved plan was made by an earlier netform (plan format version ${version}; this netform reads version ${PLAN_FORMAT_VERSION}, which is sealed): plan again, then apply the new plan. Nothing was changed`,
    );
  const shown = typeof version === 'number' && Number.isSafeInteger(version) ? String(version) : '(not a number)';
  throw new SavedPlanError(
    `${path}: plan format version ${shown} is not supported by this netform (it reads version ${PLAN_FORMAT_VERSION}); make the plan again`,
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

/** A secret as apply reads it again: its value, or why it cannot be read (safe to print). */
export type SecretReading = { value: string } | { problem: string };

export interface SavedPlanSecrets {
  /** The value of each secret reference of the plan that was read and matches: apply sends these. */
  values: Map<SecretRef, string>;
  /** Secrets that cannot be read here (apply refuses, exit 1). */
  unreadable: string[];
  /** Secrets whose value differs from the one the plan was made with (stale, exit 4). */
  changed: string[];
}

/**
 * Reads every secret a saved plan will send (with `read`: within the repository apply runs in) and
 * compares each with the HMAC the plan holds. A secret that changed since the plan makes its change
 * stale, as a changed live object does; the values that match are the ones to send, read once.
 */
export function readSavedPlanSecrets(
  plan: Plan,
  key: PlanKey,
  read: (ref: SecretRef) => SecretReading,
): SavedPlanSecrets {
  const result: SavedPlanSecrets = { values: new Map(), unreadable: [], changed: [] };
  for (const change of plan.changes) {
    const { label } = change;
    for (const secret of change.secrets ?? []) {
      const reading = read(secret.ref);
      if ('problem' in reading) {
        result.unreadable.push(`${label}: ${reading.problem}`);
        continue;
      }
      if (!sameHmac(secret.hmac, key.secretHmac(change.id, secret.field, reading.value))) {
        result.changed.push(
          `${label}: its ${secret.field} (${describeSecretRef(secret.ref)}) changed since the plan was made`,
        );
        continue;
      }
      result.values.set(secret.ref, reading.value);
    }
  }
  return result;
}
