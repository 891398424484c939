/** A drift report in words. */
import type { PlanOutcome } from '../plan/types.js';
import { webhookLines, webhookName, webhookText, type WebhookFormat } from './escape.js';
import { observationLines, type SeenChange } from './drift-render.js';
import { wordedPlan } from './notes.js';
import { outcomeText } from './plan-outcome.js';
import { failureText } from './op-errors.js';
import { noChangesLine } from './outcome.js';

type DriftStatus = 'clean' | 'drift' | 'failed';

/** What a drift schedule words through the views: a failed run's error, and each run's plan for its report. */
export const SCHEDULE_WORDS = { describe: failureText, wordPlan: wordedPlan };

/** What the words need of a drift report (src/drift/report.ts DriftReport, which drift hands in). */
export interface DriftOutcome {
  status: DriftStatus;
  server: string | null;
  error?: string;
  changes: readonly SeenChange[];
  /** `not checked: preshared key of …` lines: fields whose secret cannot be read here. */
  not_checked?: readonly string[];
  /** What the plan amounts to (src/plan/outcome.ts); absent on failure. */
  outcome?: PlanOutcome;
}

/**
 * A short summary for people (what a chat webhook shows): `netform drift on URL: 2 differences: ...`.
 * Values from the server, the files or an error are written for the chat's `format` (escape.ts
 * WebhookFormat): names and values in code spans, sentences escaped, an error's own line breaks real.
 */
export function driftText(
  report: DriftOutcome,
  previous: DriftStatus | null = null,
  shown = 5,
  format: WebhookFormat = 'slack',
): string {
  const text = (value: string): string => webhookText(value, format);
  const where = report.server === null ? 'the server' : text(report.server);
  if (report.status === 'failed')
    return `netform drift on ${where}: the check failed: ${webhookLines(report.error ?? 'unknown error', format)}`;
  if (report.status === 'clean' && report.not_checked?.length) {
    // Never "matches" when a field was not compared: a clean drift says what it could not check.
    return `netform drift on ${where}: no differences in what was compared; ${report.not_checked.map(text).join('; ')}`;
  }
  if (report.status === 'clean') {
    // "Matches" only when the outcome says so (src/plan/outcome.ts).
    const back = previous === 'drift' || previous === 'failed';
    if (report.outcome !== undefined && report.outcome.status !== 'matches')
      return `netform drift on ${where}: ${back ? 'back to clean' : 'clean'}: ${text(noChangesLine(report.outcome))}`;
    return back
      ? `netform drift on ${where}: back to clean: the server matches the desired state`
      : `netform drift on ${where}: clean`;
  }
  // What was seen, not what apply would do: "user … is on the server but in no file (…)"; then what
  // keeps the server from matching with nothing planned for it (an undeclared admin or rule, a guard,
  // --target), named here: a chat message has no Undeclared section or warnings to point at.
  const pending = (report.outcome?.pending ?? []).map((item) => text(outcomeText(item.text)));
  const seen = [
    ...report.changes.map((c) => observationLines(c, (value) => webhookName(value, format)).join('; ')),
    ...pending,
  ];
  const more = seen.length > shown ? `, and ${seen.length - shown} more` : '';
  const listed = `${seen.slice(0, shown).join('; ')}${more}`;
  if (report.changes.length === 0 && pending.length > 0)
    return `netform drift on ${where}: No changes planned, but the server does not match the desired state: ${listed}.`;
  if (report.changes.length === 0 && report.outcome)
    return `netform drift on ${where}: ${text(noChangesLine(report.outcome))}`;
  const n = seen.length;
  return `netform drift on ${where}: ${n} difference${n === 1 ? '' : 's'} from the desired state: ${listed}`;
}
