/**
 * The saved-plan file (docs/saved-plans.md; schemas/plan.schema.json): the one place that writes
 * a saved plan (`netform plan -o`, and `plan --format json`), sealed, and that reads one back. Reading trusts nothing before the seal
 * is checked (seal.ts), and nothing after it that the schema does not allow: a plan is returned
 * only when it is JSON, of format `netform.plan` in a version this netform reads, sealed under
 * the key of this run, unedited, and of the saved-plan schema.
 */
import { DESIRED_STATE_MAX_BYTES, FileReadError, readBoundedFileSync, sizeLimit } from '../model/files.js';
import { inertWorkflowCommands } from '../model/inert.js';
import { fileProblemText } from '../views/model-files.js';
import { CANONICAL_MAX_DEPTH, CanonicalJsonError, findProtoMember } from './canonical.js';
import { planSchemaProblem } from './plan-schema.js';
import { checkSeal, sealedDocument, type PlanKey, type PlanKeySource } from './seal.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, PLAN_FORMAT_VERSIONS_READ, type Plan, type WordedPlan } from './types.js';

/**
 * Why a saved plan is refused, as a code and the values its sentence needs (src/views/saved-plan.ts
 * words it). `path` names the file; nothing the file holds is kept.
 */
export type SavedPlanRefusal = { path: string } & (
  | { code: 'unreadable'; problem: string; rule: boolean }
  | { code: 'not_json' }
  | { code: 'not_plan_format'; format: string }
  /** `at`: the path of the member (`changes[0].body`), `''` at the top level. */
  | { code: 'proto_member'; at: string }
  | { code: 'schema'; version: unknown; at: string; problem: string }
  | { code: 'earlier_version' | 'newer_version'; version: number; read: readonly number[] }
  | { code: 'unsupported_version'; version: number | null; read: readonly number[] }
  | { code: 'not_canonical'; nested: boolean; depth: number }
  | { code: 'unsealed' }
  | { code: 'modified' }
  | { code: 'other_key'; sealedWith: PlanKeySource | null; keySource: PlanKeySource }
);

export class SavedPlanError extends Error {
  override readonly name = 'SavedPlanError';
  constructor(readonly refusal: SavedPlanRefusal) {
    super(`${refusal.path}: ${refusal.code}`);
  }
}

/**
 * The saved plan of `plan` as JSON text (what `plan -o` writes and `plan --format json` prints):
 * its secrets as reference and HMAC, sealed with `key` (seal.ts). Its notes are words (the views'
 * wordedPlan), so that the format stays the one earlier versions wrote and read.
 */
export function savedPlanJson(plan: WordedPlan, key: PlanKey): string {
  // A value holding a workflow command is written with a JSON escape: the same value, inert in a log.
  return `${inertWorkflowCommands(JSON.stringify(sealedDocument(plan, key), null, 2), { lineStarts: false })}\n`;
}

/** A saved plan is read whole: at most as large as the desired state it can be made from. */
const SAVED_PLAN_LIMIT = sizeLimit(DESIRED_STATE_MAX_BYTES, 'saved_plan');
const READ = [...PLAN_FORMAT_VERSIONS_READ];

/**
 * The saved plan at `path`, checked, in this order: JSON, format, a version this netform reads,
 * no `__proto__` member, sealed under `key` (PlanKey.from: NETFORM_PLAN_KEY, or the token of this
 * run), then the saved-plan schema. Every refusal is a SavedPlanError whose message says why and
 * what to do; nothing the file holds is printed.
 */
export function readSavedPlan(path: string, key: PlanKey): WordedPlan {
  let text: string;
  try {
    text = readBoundedFileSync(path, SAVED_PLAN_LIMIT).toString('utf8');
  } catch (error) {
    if (!(error instanceof FileReadError)) throw error;
    throw new SavedPlanError({ path, code: 'unreadable', problem: fileProblemText(error.problem), rule: error.rule });
  }
  return parseSavedPlan(text, path, key);
}

/** A saved plan's text, checked as readSavedPlan checks it; `path` names it in messages. */
export function parseSavedPlan(text: string, path: string, key: PlanKey): WordedPlan {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SavedPlanError({ path, code: 'not_json' });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || (doc as Plan).format !== PLAN_FORMAT)
    throw new SavedPlanError({ path, code: 'not_plan_format', format: PLAN_FORMAT });
  checkVersion(path, (doc as Plan).format_version);
  const proto = findProtoMember(doc);
  if (proto !== null) throw new SavedPlanError({ path, code: 'proto_member', at: proto });
  checkSealOf(path, doc as Record<string, unknown>, key);
  const problem = planSchemaProblem(doc, true);
  if (problem)
    throw new SavedPlanError({
      path,
      code: 'schema',
      version: (doc as Plan).format_version,
      at: problem.at,
      problem: problem.message,
    });
  return doc as WordedPlan;
}

function checkVersion(path: string, version: unknown): void {
  if ((PLAN_FORMAT_VERSIONS_READ as readonly unknown[]).includes(version)) return;
  const whole = typeof version === 'number' && Number.isSafeInteger(version);
  if (whole && version >= 1 && version < PLAN_FORMAT_VERSIONS_READ[0])
    throw new SavedPlanError({ path, code: 'earlier_version', version, read: READ });
  if (whole && version > PLAN_FORMAT_VERSION)
    throw new SavedPlanError({ path, code: 'newer_version', version, read: READ });
  throw new SavedPlanError({ path, code: 'unsupported_version', version: whole ? version : null, read: READ });
}

const KEY_SOURCES: ReadonlySet<string> = new Set<PlanKeySource>(['NETFORM_PLAN_KEY', 'token', 'embedded-token']);

function checkSealOf(path: string, doc: Record<string, unknown>, key: PlanKey): void {
  let check: ReturnType<typeof checkSeal>;
  try {
    check = checkSeal(doc, key);
  } catch (error) {
    if (!(error instanceof CanonicalJsonError)) throw error;
    const nested = error.problem.code === 'nested';
    throw new SavedPlanError({ path, code: 'not_canonical', nested, depth: CANONICAL_MAX_DEPTH });
  }
  if (check === 'sealed') return;
  if (check === 'unsealed' || check === 'modified') throw new SavedPlanError({ path, code: check });
  const recorded = (doc.seal_key as { source?: unknown }).source;
  const sealedWith = typeof recorded === 'string' && KEY_SOURCES.has(recorded) ? (recorded as PlanKeySource) : null;
  throw new SavedPlanError({ path, code: 'other_key', sealedWith, keySource: key.source });
}
