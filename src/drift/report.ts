/**
 * The drift report: one per run, printed as one JSON line and handed to the sinks (report file,
 * webhook). A plain, versioned object built from the Plan, with no secret value: sensitive fields
 * only ever say that they changed.
 */
import { SENSITIVE_CHANGED } from '../views/model-secret.js';
import { isPending, planOutcome } from '../plan/outcome.js';
import type {
  Change,
  FieldChange,
  Plan,
  PlanSummary,
  UndeclaredItem,
  WordedOutcome,
  WordedPlan,
} from '../plan/types.js';
import { isSecretField } from '../model/secret.js';
import { notCheckedLine } from '../views/model-secret.js';
import { observedOf, type Observed } from '../model/observed.js';

export const DRIFT_REPORT_FORMAT = 'netform.drift';
export const DRIFT_REPORT_FORMAT_VERSION = 1;

export type DriftStatus = 'clean' | 'drift' | 'failed';

/** A change of the plan, without what only apply needs (bodies, secrets, fingerprints). */
export type DriftChange = Pick<Change, 'id' | 'kind' | 'action' | 'key' | 'label' | 'fields' | 'note' | 'expired'> & {
  /** What was seen: on the server only, in the files only, or in both and different (src/model/observed.ts). */
  observed: Observed;
};

/** A live object inside the managed scope that no file declares; `fate` is what apply would do with it. */
export type DriftUndeclared = Pick<UndeclaredItem, 'kind' | 'key' | 'label' | 'fate' | 'reason'>;

/** The plan's summary; a failed run has no plan, and no `cascade` count. */
export type DriftCounts = Omit<PlanSummary, 'cascade'> & { cascade?: number };

export interface DriftReport {
  format: typeof DRIFT_REPORT_FORMAT;
  format_version: typeof DRIFT_REPORT_FORMAT_VERSION;
  /** When the run started, ISO 8601 UTC. */
  time: string;
  duration_ms: number;
  status: DriftStatus;
  /** The server checked (no credentials); null when the run failed before knowing it. */
  server: string | null;
  /** The desired-state paths read for this run. */
  sources: string[];
  counts: DriftCounts;
  changes: DriftChange[];
  warnings: string[];
  /**
   * What the plan amounts to (src/plan/outcome.ts): `pending` lists why a run without changes is
   * drift, `kept` and `not_checked` why a clean one does not match in every field. Absent on failure.
   */
  outcome?: WordedOutcome;
  /** Scheduled ticks skipped since the previous run because that run was still in progress. */
  skipped_ticks: number;
  /** Why the run failed (status `failed` only). */
  error?: string;
  /** Live objects inside the managed scope that no file declares (empty when none, or on failure). */
  undeclared: DriftUndeclared[];
  /**
   * Fields not compared because their secret cannot be read here (never reported as matching), as
   * `not checked: preshared key of alice@example.com/laptop (…)`; empty when all were compared.
   */
  not_checked: string[];
}

export function emptyCounts(): DriftCounts {
  return { create: 0, update: 0, delete: 0, replace: 0 };
}

/** `drift` when the plan has changes or is pending (src/plan/outcome.ts), else `clean`. */
export function driftStatusOf(plan: Plan): 'clean' | 'drift' {
  return isPending(plan) ? 'drift' : 'clean';
}

export interface ReportTiming {
  startedAt: number;
  finishedAt: number;
  skippedTicks: number;
}

export function reportFromPlan(plan: WordedPlan, timing: ReportTiming): DriftReport {
  return {
    ...reportBase(timing),
    status: driftStatusOf(plan),
    server: plan.server,
    sources: [...plan.sources],
    counts: { ...plan.summary },
    changes: plan.changes.map((change) => ({
      id: change.id,
      kind: change.kind,
      action: change.action,
      key: change.key,
      label: change.label,
      fields: change.fields.map(redactField),
      ...(change.note ? { note: change.note } : {}),
      ...(change.expired !== undefined ? { expired: change.expired } : {}),
      observed: observedOf(change.action),
    })),
    warnings: [...plan.warnings],
    undeclared: (plan.undeclared ?? []).map(({ kind, key, label, fate, reason }) => ({
      kind,
      key,
      label,
      fate,
      reason,
    })),
    not_checked: (plan.not_checked ?? []).map(notCheckedLine),
    outcome: planOutcome(plan) as WordedOutcome,
  };
}

export function reportFromFailure(
  message: string,
  context: { server: string | null; sources: string[] },
  timing: ReportTiming,
): DriftReport {
  return {
    ...reportBase(timing),
    status: 'failed',
    server: context.server,
    sources: [...context.sources],
    counts: emptyCounts(),
    changes: [],
    warnings: [],
    undeclared: [],
    not_checked: [],
    error: message,
  };
}

function reportBase(timing: ReportTiming) {
  return {
    format: DRIFT_REPORT_FORMAT,
    format_version: DRIFT_REPORT_FORMAT_VERSION,
    time: new Date(timing.startedAt).toISOString(),
    duration_ms: Math.max(0, Math.round(timing.finishedAt - timing.startedAt)),
    skipped_ticks: timing.skippedTicks,
  } as const;
}

function redactField(change: FieldChange): FieldChange {
  if (isSecretField(change)) {
    return { field: change.field, before: SENSITIVE_CHANGED, after: SENSITIVE_CHANGED, sensitive: true };
  }
  return { field: change.field, before: change.before, after: change.after };
}

/** Removes every occurrence of the given secrets (a token, a webhook URL) from a message. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('(redacted)');
  }
  return out;
}

/**
 * What a webhook needs to decide whether to tell anyone: the status and, on drift, the set of
 * differences (each change with its fields). Two reports with the same signature say the same.
 */
export function driftSignature(report: DriftReport): string {
  if (report.status !== 'drift') return report.status;
  const changes = report.changes
    .map((c) => JSON.stringify([c.id, c.action, c.fields.map((f) => [f.field, f.before, f.after])]))
    .sort();
  const pending = (report.outcome?.pending ?? [])
    .map((item) => JSON.stringify([item.reason, item.id ?? item.text]))
    .sort();
  return `drift:${[...changes, ...pending].join('\n')}`;
}
