/**
 * `netform drift` once, in words: what was seen (on the server only, in the files only, different),
 * then the plan that would undo it under "To undo it, apply would:". JSON is the plan document
 * (unsealed) with `observed` on each change and `undeclared` and `not_checked` always listed.
 * Every value from a server or a file is escaped for where it is written.
 */
import pc from 'picocolors';
import { observedOf } from '../model/observed.js';
import type { Change, FieldChange, Plan, UndeclaredItem } from '../plan/types.js';
import { inertText, markdownCode, markdownText } from './escape.js';
import { keptReasonText } from './notes.js';
import { outcomeText } from './plan-outcome.js';
import { MARKDOWN_MAX_CHARS, renderPlan, type RenderOptions } from './plan.js';
import type { PlanFormat } from './plan-formats.js';
import { isSecretField } from './symbols.js';

/** The hidden line a drift comment starts with (not the plan's: CI updates its plan comment by it). */
export const DRIFT_MARKDOWN_MARKER = '<!-- netform-drift -->';

/** What observation sentences need of a change (a plan's change or a drift report's). */
export interface SeenChange {
  action: Change['action'];
  label: string;
  fields: readonly FieldChange[];
  /** The expiry (as written) that causes this deletion or demotion. */
  expired?: string;
}

type Escape = (value: string) => string;

const LIVE_ONLY =
  'is on the server but in no file (added outside netform, or removed from the files and not yet applied)';

function value(v: unknown): string {
  if (v === null || v === undefined) return '(none)';
  if (typeof v === 'object' && '$ref' in v) return `(id of ${String((v as { $ref: unknown }).$ref)})`;
  return JSON.stringify(v);
}

/**
 * What was seen, one sentence per line: `user mallory@… is on the server but in no file (…)`,
 * `rule … is in the files but not on the server`, `device …: mtu is 1420 on the server, the files
 * say 1380`. Secret fields never show a value. `esc` escapes each value (labels, field values).
 */
export function observationLines(change: SeenChange, esc: Escape): string[] {
  const label = esc(change.label);
  const observed = observedOf(change.action);
  if (change.expired !== undefined) {
    const when = esc(change.expired);
    if (change.action === 'delete') return [`${label} expired ${when} but still on the server`];
    return [`${label}: role admin expired ${when} but still on the server`];
  }
  if (observed === 'live_only') return [`${label} ${LIVE_ONLY}`];
  if (observed === 'declared_only') return [`${label} is in the files but not on the server`];
  if (change.fields.length === 0) return [`${label} differs from the files`];
  return change.fields.map((f) =>
    isSecretField(f)
      ? `${label}: ${esc(f.field)} differs from the files (a secret: its value is not shown)`
      : `${label}: ${esc(f.field)} is ${esc(value(f.before))} on the server, the files say ${esc(value(f.after))}`,
  );
}

/** An undeclared object the plan keeps (one it deletes is a change already): seen on the server only. */
function keptLine(item: UndeclaredItem, esc: Escape, words: Escape): string {
  return `${esc(item.label)} ${LIVE_ONLY}; apply keeps it (${words(keptReasonText(item.reason))})`;
}

/** `esc` escapes values from the server or the files (code spans in markdown); `words`, netform's own reasons. */
function seenLines(plan: Plan, esc: Escape, words: Escape = esc): string[] {
  return [
    ...plan.changes.flatMap((c) => observationLines(c, esc)),
    ...(plan.undeclared ?? []).filter((i) => i.fate === 'keep').map((i) => keptLine(i, esc, words)),
    // Differences an `acknowledged:` entry keeps until its date: seen, and left alone (exit 0).
    ...(plan.outcome?.kept ?? []).filter((i) => i.reason === 'acknowledged').map((i) => words(outcomeText(i.text))),
  ];
}

/** Above the plan: what apply would do about what was seen (nothing, when all of it is kept). */
function undoHeading(plan: Plan): string {
  return plan.changes.length > 0 ? 'To undo it, apply would:' : 'Apply would change nothing:';
}

/** Markdown: at most this many lines of what was seen; the plan below has the rest. */
const SEEN_SHOWN = 50;

export function renderDrift(plan: Plan, format: PlanFormat, options: RenderOptions): string {
  if (format === 'json') {
    const doc: Plan = {
      ...plan,
      changes: plan.changes.map((c) => ({ ...c, observed: observedOf(c.action) })),
      undeclared: plan.undeclared ?? [],
      not_checked: plan.not_checked ?? [],
    };
    return renderPlan(doc, 'json', options);
  }
  if (format === 'markdown') {
    // Labels and values in code spans sized to them, as the plan's markdown shows them.
    const seen = seenLines(plan, markdownCode, markdownText);
    const shown = seen.slice(0, SEEN_SHOWN).map((line) => `- ${line}`);
    if (seen.length > SEEN_SHOWN) shown.push(`- … and ${seen.length - SEEN_SHOWN} more (see the plan below)`);
    const head = [
      DRIFT_MARKDOWN_MARKER,
      '### netform drift',
      '',
      `Server: ${markdownCode(plan.server)}`,
      '',
      ...(shown.length ? ['**What differs**', '', ...shown, '', `**${undoHeading(plan)}**`, ''] : []),
    ].join('\n');
    const maxChars = (options.maxChars ?? MARKDOWN_MAX_CHARS) - head.length - 1;
    // The plan's comment without its marker and heading.
    const body = renderPlan(plan, 'markdown', { ...options, maxChars, driftAccess: true })
      .split('\n')
      .slice(3)
      .join('\n');
    return `${head}\n${body}`;
  }
  const c = pc.createColors(options.color);
  const out = [
    c.bold(`netform drift on ${inertText(plan.server)}`) +
      (plan.sources.length ? c.dim(` (from ${inertText(plan.sources.join(', '))})`) : ''),
    '',
  ];
  const seen = seenLines(plan, inertText);
  if (seen.length) out.push(c.bold('What differs:'), ...seen.map((l) => `  ${l}`), '', c.bold(undoHeading(plan)));
  // The plan's text without its heading; its summary stays the last line.
  const body = renderPlan(plan, 'text', { ...options, driftAccess: true })
    .split('\n')
    .slice(2)
    .join('\n');
  return `${out.join('\n')}\n${body}`;
}
