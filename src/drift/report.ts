/**
 * The drift report: one per run, printed as one JSON line and handed to the sinks (report file,
 * webhook). A plain, versioned object built from the Plan, with no secret value: sensitive fields
 * only ever say that they changed.
 */
import { SENSITIVE_CHANGED } from '../model/secret.js';
import { isPending, noChangesLine, planOutcome } from '../plan/outcome.js';
import type { ChangeAction, FieldChange, Plan, PlanOutcome, PlanSummary, ResourceKind } from '../plan/types.js';
import { webhookText } from '../render/escape.js';

export const DRIFT_REPORT_FORMAT = 'netform.drift';
export const DRIFT_REPORT_FORMAT_VERSION = 1;

export type DriftStatus = 'clean' | 'drift' | 'failed';

export interface DriftChange {
  id: string;
  kind: ResourceKind;
  action: ChangeAction;
  key: string;
  /** How people read the object: `device alice@example.com/laptop`. */
  label?: string;
  fields: FieldChange[];
  note?: string;
}

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
  counts: PlanSummary;
  changes: DriftChange[];
  warnings: string[];
  /**
   * What the plan amounts to (src/plan/outcome.ts): `pending` lists why a run without changes is
   * drift, `kept` and `not_checked` why a clean one does not match in every field. Absent on failure.
   */
  outcome?: PlanOutcome;
  /** Scheduled ticks skipped since the previous run because that run was still in progress. */
  skipped_ticks: number;
  /** Why the run failed (status `failed` only). */
  error?: string;
}

/** Fields whose values are secrets even if a plan forgot to mark them. */
const SECRET_FIELDS = new Set(['password', 'password_confirmation', 'preshared_key', 'token']);

export function emptyCounts(): PlanSummary {
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

export function reportFromPlan(plan: Plan, timing: ReportTiming): DriftReport {
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
      ...(change.label ? { label: change.label } : {}),
      fields: change.fields.map(redactField),
      ...(change.note ? { note: change.note } : {}),
    })),
    warnings: [...plan.warnings],
    outcome: planOutcome(plan),
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
  if (change.sensitive || SECRET_FIELDS.has(change.field)) {
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

/**
 * A short summary for people (what a chat webhook shows): `netform drift on URL: 2 differences: ...`.
 * Values from the server, the files or an error are escaped for chat (markdown, and `<`, `>`, `&`).
 */
export function driftText(report: DriftReport, previous: DriftStatus | null = null, shown = 5): string {
  const where = report.server === null ? 'the server' : webhookText(report.server);
  if (report.status === 'failed')
    return `netform drift on ${where}: the check failed: ${webhookText(report.error ?? 'unknown error')}`;
  if (report.status === 'clean') {
    // "Matches" only when the outcome says so (src/plan/outcome.ts).
    const matches = report.outcome === undefined || report.outcome.status === 'matches';
    const back = previous === 'drift' || previous === 'failed';
    if (!matches)
      return `netform drift on ${where}: ${back ? 'back to clean' : 'clean'}: ${webhookText(noChangesLine(report.outcome!))}`;
    return back
      ? `netform drift on ${where}: back to clean: the server matches the desired state`
      : `netform drift on ${where}: clean`;
  }
  if (report.changes.length === 0 && report.outcome)
    return `netform drift on ${where}: ${webhookText(noChangesLine(report.outcome))}`;
  const labels = report.changes
    .slice(0, shown)
    .map((c) => `${c.action} ${webhookText(c.label ?? `${c.kind} ${c.key}`)}`);
  const more = report.changes.length > shown ? `, and ${report.changes.length - shown} more` : '';
  const n = report.changes.length;
  return `netform drift on ${where}: ${n} difference${n === 1 ? '' : 's'} from the desired state: ${labels.join('; ')}${more}`;
}
