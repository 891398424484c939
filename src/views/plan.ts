/**
 * Renderers of a Plan: a human diff (text), a pull-request comment (markdown) carrying a hidden
 * marker so CI can find and update its own comment, and the unsealed JSON report. A saved plan
 * (sealed) is written by src/plan/planfile.ts. Pure functions of the plan. No secret value can appear: the plan holds none, and
 * sensitive fields are printed as a fixed text whatever they carry.
 */
import pc from 'picocolors';
import { SENSITIVE, type SecretRef } from '../model/secret.js';
import { SENSITIVE_CHANGED, SENSITIVE_RESENT } from './model-secret.js';
import type { AccessChanges } from '../access/changes.js';
import type { Change, FieldChange, LimitCheck, Plan, ResolvedChange, UndeclaredItem } from '../plan/types.js';
import { accessMarkdown, accessText, DRIFT_ACCESS_TITLE, driftAccessLines, driftAccessText } from './access.js';
import { inertText, jsonDocument, markdownCode, markdownFence, markdownText } from './escape.js';
import {
  failuresMarkdown,
  failuresText,
  notCheckedLines,
  notCheckedMarkdown,
  notCheckedSummary,
  testsLine,
} from './plan-review.js';
import { approvalsMarkdown, approvalsText } from './approvals.js';
import { effectiveLines } from './effective.js';
import { blockedExpiriesLine } from './expiry.js';
import { keptReasonText, noteText, wordedPlan } from './notes.js';
import { baseNoteText } from './ops-plan.js';
import { noChangesLine } from './outcome.js';
import { limitSourceText } from './plan-limits.js';
import { outcomeText } from './plan-outcome.js';
import { warningText } from './plan-warnings.js';
import type { PlanFormat } from './plan-formats.js';
import { isSecretField, SYMBOL } from './symbols.js';
import { withheldDeletionText } from './withheld.js';

/** The hidden line a plan comment starts with; CI looks for it to update the comment in place. */
export const MARKDOWN_MARKER = '<!-- netform-plan -->';

export interface RenderOptions {
  /** ANSI colours: only on a terminal, never with NO_COLOR (the caller decides). */
  color: boolean;
  /** Markdown: the most characters the comment may have. Default 60,000 (GitHub refuses over 65,536). */
  maxChars?: number;
  /** Markdown: where the full plan is, said when changes had to be left out (a CI run's artifacts). */
  fullPlanAt?: string;
  /** Text: the last line of a plan without changes, when "No changes" would not be true (changes withheld). */
  noChangesLine?: string;
  /** Text and markdown: word the access changes as drift does (the exposure now, then what apply would do). */
  driftAccess?: boolean;
}

export const MARKDOWN_MAX_CHARS = 60_000;

type Colors = ReturnType<typeof pc.createColors>;

/**
 * The plan in words: text, markdown, or JSON as a report (drift's; a plan whose access test
 * fails), without seal or secret HMACs, which apply refuses. A saved plan, sealed, is
 * src/plan/planfile.ts's to write.
 */
export function renderPlan(plan: Plan, format: PlanFormat, options: RenderOptions): string {
  if (format === 'json') {
    const { seal: _seal, seal_key: _sealKey, ...unsealed } = wordedPlan(plan);
    return jsonDocument(unsealed);
  }
  if (format === 'markdown') return renderMarkdown(plan, options);
  return renderText(plan, pc.createColors(options.color), options.noChangesLine, options.driftAccess);
}

/** `1 to create, 2 to update, 0 to replace, 3 to delete (+4 with their user)`. */
export function summaryLine(plan: Plan): string {
  const s = plan.summary;
  // "Matches" only when the plan's outcome says so (src/plan/outcome.ts), and never when a field was not compared.
  if (plan.changes.length === 0) {
    const outcome = noChangesLine(plan.outcome);
    const uncompared = notCheckedSummary(plan);
    // Only unchecked fields keep it from matching: say what was not checked; else the outcome's words.
    const onlyUnchecked = !plan.outcome || (plan.outcome.pending.length === 0 && plan.outcome.kept.length === 0);
    return inertText(uncompared && onlyUnchecked ? uncompared : outcome);
  }
  const cascade = s.cascade ? ` (+${s.cascade} with their user)` : '';
  return `Plan: ${s.create} to create, ${s.update} to update, ${s.replace} to replace, ${s.delete} to delete${cascade}.`;
}

/**
 * `Undeclared: 3 live objects inside manage that no file declares: 1 deleted (prune), 2 kept.`,
 * or null when there are none.
 */
export function undeclaredLine(plan: Plan): string | null {
  const items = plan.undeclared ?? [];
  if (items.length === 0) return null;
  const deleted = items.filter((i) => i.fate === 'delete').length;
  const kept = items.length - deleted;
  const fates = [
    deleted ? `${deleted} deleted (prune is on)` : '',
    kept ? `${kept} kept${plan.settings?.prune ? '' : ' (prune is off)'}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  const objects = items.length === 1 ? '1 live object' : `${items.length} live objects`;
  return `Undeclared: ${objects} inside the managed scope that no file declares: ${fates}.`;
}

function undeclaredEntry(item: UndeclaredItem): string {
  return inertText(
    `${item.fate === 'delete' ? '-' : '='} ${item.label}  (${item.fate === 'delete' ? 'deleted' : 'kept'}: ${item.withheld ? withheldDeletionText(item.withheld) : keptReasonText(item.reason)})`,
  );
}

export function exceededLimits(plan: Plan): LimitCheck[] {
  return plan.limits.filter((l) => l.exceeded);
}

export function limitLine(limit: LimitCheck): string {
  const what = limit.kind === 'delete' ? 'deletions (cascades included)' : 'updates (replacements included)';
  const flag = limit.kind === 'delete' ? '--allow-deletes' : '--allow-updates';
  return inertText(
    `${limit.planned} ${what} exceed the limit of ${limit.allowed} (${limitSourceText(limit.source)}); pass ${flag} ${limit.planned} to allow this run`,
  );
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '(none)';
  if (typeof value === 'object' && value !== null && '$ref' in value)
    return `(id of ${String((value as { $ref: unknown }).$ref).replace(/^user:/, 'user ')})`;
  return JSON.stringify(value);
}

/** How a secret not pinned at plan time is read at apply: `environment variable KIM_PASSWORD`. */
function unpinnedSource(ref: SecretRef): string {
  if ('env' in ref) return `environment variable ${ref.env}`;
  if ('tfvar' in ref) return `Terraform variable ${ref.tfvar} (environment variable TF_VAR_${ref.tfvar})`;
  return `file ${ref.file}`;
}

function fieldLine(change: Change | ResolvedChange, field: FieldChange): string {
  if (isSecretField(field)) {
    // Not read where the plan was made: read where it is applied, and shown as not pinned.
    const unpinned =
      'secrets' in change ? change.secrets?.find((s) => s.field === field.field && s.pinned === false) : undefined;
    if (unpinned) return `${field.field} from ${unpinnedSource(unpinned.ref)}, read at apply: not pinned`;
    if (field.resent === true) return `${field.field}: ${SENSITIVE_RESENT}`;
    return `${field.field}: ${change.action === 'create' ? SENSITIVE : SENSITIVE_CHANGED}`;
  }
  if (change.action === 'create') return `${field.field}: ${formatValue(field.after)}`;
  return `${field.field}: ${formatValue(field.before)} -> ${formatValue(field.after)}`;
}

/** A change's head line and detail lines, inert (labels, keys and values come from servers and files). */
export function changeLines(change: Change | ResolvedChange): { head: string; details: string[] } {
  const { label } = change;
  const details = change.fields.map((f) => inertText(fieldLine(change, f)));
  details.push(...effectiveLines(change));
  for (const item of change.cascade ?? []) details.push(inertText(`- ${item.label} (goes with the user)`));
  const words = noteText(change.note);
  const note = words ? `  (${words})` : '';
  return { head: inertText(`${SYMBOL[change.action]} ${label}${note}`), details };
}

/** A part of a plan shown under its own heading: with `--base`, this pull request's changes, then the base's. */
interface Section {
  title: string;
  changes: (Change | ResolvedChange)[];
  /** Said when the section has no change (left out when undefined). */
  empty?: string;
  access?: AccessChanges;
  accessTitle?: string;
  /** Grants made by hand that the section's changes write into the files. */
  ratifies?: string[];
}

/** The title of a plan's access changes: the state they lead to, and from which. */
export const ACCESS_AFTER_APPLY = 'Access changes after apply (compared with the server now)';

/**
 * A grant made by hand that the base's plan would undo and this pull request keeps (it writes it
 * into the files): a role kept, a device or an accept rule no longer deleted.
 */
function ratified(change: ResolvedChange): string[] {
  if (change.kind === 'user' && change.action === 'update') {
    const role = change.fields.find((f) => f.field === 'role');
    return role && typeof role.before === 'string' && role.before !== 'unprivileged'
      ? [`${change.key} is ${role.before}`]
      : [];
  }
  if (change.action !== 'delete') return [];
  if (change.kind === 'device') return [`${change.label} stays connected`];
  if (change.kind === 'rule' && change.key.split('|')[1] === 'accept') return [`${change.label} stays`];
  if (change.kind === 'user') return [`${change.label} stays`];
  return [];
}

/** `ratifies: user grace@… is admin (made by hand on the server)`: a hand-made grant this pull request writes into its files. */
function ratifiesLines(section: Section): string[] {
  return (section.ratifies ?? []).map((what) => `ratifies: ${what} (made by hand on the server)`);
}

/**
 * Live objects in no file that decide packets inside the managed blocks (Plan.deciding, worded by
 * the outcome): those that count as drift, then those listed only.
 */
export function outsideLines(plan: Plan): string[] {
  const outcome = plan.outcome;
  if (!outcome) return [];
  return [...outcome.pending, ...outcome.kept].filter((i) => i.reason === 'deciding').map((i) => outcomeText(i.text));
}

const OUTSIDE_TITLE = 'Outside the files, deciding packets inside the managed blocks';

/** `plan --base`: the pull request's changes, those already on the base, and those it undoes. */
function sectionsOf(plan: Plan): Section[] {
  if (!plan.base)
    return [{ title: 'Changes', changes: plan.changes, access: plan.access, accessTitle: ACCESS_AFTER_APPLY }];
  const ref = plan.base.ref;
  const ofOrigin = (origin: 'pr' | 'base') => plan.changes.filter((c) => (c.origin ?? 'pr') === origin);
  const sections: Section[] = [
    {
      title: "This pull request's changes",
      changes: ofOrigin('pr'),
      empty: `none: merging it changes nothing that ${ref}'s files would not`,
      access: plan.base.access_pr,
      accessTitle: 'Access changes of this pull request (after apply)',
      ratifies: (plan.resolved_by_pr ?? []).flatMap(ratified),
    },
  ];
  const already = ofOrigin('base');
  if (already.length > 0)
    sections.push({
      title: `Also applied on merge: already in ${ref}'s plan (drift, or merged and not yet applied)`,
      changes: already,
      access: plan.base.access_base,
      accessTitle: `Access changes already in ${ref}'s plan (after apply)`,
    });
  const undone = plan.resolved_by_pr ?? [];
  if (undone.length > 0)
    sections.push({
      title: `Undone by this pull request: in ${ref}'s plan, not made on merge`,
      changes: undone,
    });
  return sections;
}

/** `Compared with origin/main (0123abc): 2 changes by this pull request, 1 already there, 1 undone.` */
function baseLine(plan: Plan, code: (text: string) => string): string {
  const base = plan.base!;
  const count = (n: number) => (n === 1 ? '1 change' : `${n} changes`);
  const prCount = plan.changes.filter((c) => (c.origin ?? 'pr') === 'pr').length;
  const already = plan.changes.length - prCount;
  const commit = base.commit ? ` (${code(base.commit.slice(0, 12))})` : '';
  return (
    `Compared with ${code(base.ref)}${commit}: ${count(prCount)} by this pull request, ` +
    `${count(already)} also applied on merge (already in its plan), ${count(plan.resolved_by_pr?.length ?? 0)} undone.`
  );
}

function renderText(plan: Plan, c: Colors, noChangesLine?: string, driftAccess = false): string {
  const paint: Record<Change['action'], (s: string) => string> = {
    create: c.green,
    update: c.yellow,
    delete: c.red,
    replace: c.magenta,
  };
  const out: string[] = [];
  out.push(
    c.bold(`netform plan for ${inertText(plan.server)}`) +
      (plan.sources.length ? c.dim(` (from ${inertText(plan.sources.join(', '))})`) : ''),
  );
  out.push('');
  // Failing access tests open the plan: they are what stops it from being applied.
  for (const line of failuresText(plan.tests)) out.push(line === '' ? '' : c.red(line));
  const changeText = (change: Change | ResolvedChange) => {
    const { head, details } = changeLines(change);
    out.push(`  ${paint[change.action](head)}`);
    for (const d of details) out.push(`      ${d.startsWith('- ') ? c.red(d) : d}`);
  };
  const sections = sectionsOf(plan);
  out.push(...approvalsText(plan));
  if (plan.base) {
    out.push(baseLine(plan, inertText));
    if (plan.base.note) out.push(c.yellow(`  ! ${inertText(baseNoteText(plan.base.note))}`));
    out.push('');
    for (const section of sections) {
      out.push(c.bold(`${inertText(section.title)}:`));
      const ratifies = ratifiesLines(section).map((line) => `  ${c.yellow(inertText(line))}`);
      if (section.changes.length === 0 && section.empty && ratifies.length === 0)
        out.push(`  (${inertText(section.empty)})`);
      section.changes.forEach(changeText);
      // A ratification is an access change of the pull request: listed first under that title.
      const access = accessText(section.access, section.accessTitle);
      if (ratifies.length > 0 && access.length === 0)
        access.push(`${inertText(section.accessTitle ?? 'Access changes')}:`, '');
      access.splice(1, 0, ...ratifies);
      out.push('', ...access);
    }
  } else {
    plan.changes.forEach(changeText);
    if (plan.changes.length > 0) out.push('');
  }
  const undeclared = plan.undeclared ?? [];
  if (undeclared.length > 0) {
    out.push(c.bold('Undeclared (live, inside the managed scope, declared in no file):'));
    for (const item of undeclared) out.push(`  ${(item.fate === 'delete' ? c.red : c.cyan)(undeclaredEntry(item))}`);
    out.push('');
  }
  const outside = outsideLines(plan);
  if (outside.length > 0) {
    out.push(c.bold(`${OUTSIDE_TITLE}:`));
    for (const line of outside) out.push(c.red(`  ! ${inertText(line)}`));
    out.push('');
  }
  if (!plan.base) out.push(...(driftAccess ? driftAccessText(plan) : accessText(plan.access, ACCESS_AFTER_APPLY)));
  const notChecked = notCheckedLines(plan);
  if (notChecked.length > 0) out.push(c.yellow('Not checked:'), ...notChecked.map((l) => c.yellow(`  ${l}`)), '');
  if (plan.warnings.length > 0) {
    out.push(c.yellow('Warnings:'));
    for (const w of plan.warnings) out.push(c.yellow(`  ! ${inertText(warningText(w))}`));
    out.push('');
  }
  for (const limit of exceededLimits(plan)) out.push(c.red(c.bold(`Over a safety limit: ${limitLine(limit)}`)));
  const blocked = blockedExpiriesLine(plan);
  if (blocked) out.push(c.red(`  ${blocked}`));
  // The plan's summary stays the last line (scripts read it); the undeclared line goes just above.
  const undeclaredSummary = undeclaredLine(plan);
  if (undeclaredSummary) out.push(undeclaredSummary);
  const tests = testsLine(plan.tests);
  if (tests) out.push(plan.tests!.failed > 0 ? c.red(tests) : tests);
  out.push(c.bold(plan.changes.length === 0 && noChangesLine ? noChangesLine : summaryLine(plan)));
  return `${out.join('\n')}\n`;
}

/**
 * A pull-request comment within `maxChars` whatever the plan's size: the summary, server and limits
 * first, then whole changes while they fit, a closed code block, and a line saying how many
 * changes are not shown and where the full plan is.
 */
function renderMarkdown(plan: Plan, options: RenderOptions): string {
  const maxChars = options.maxChars ?? MARKDOWN_MAX_CHARS;
  const blockOf = (change: Change | ResolvedChange) => {
    const { head, details } = changeLines(change);
    // A diff block colours lines by their first character: `-/+` reads as a deletion there, so it gets `!`.
    const lines = [change.action === 'replace' ? `! ${head}` : head];
    for (const d of details)
      lines.push(`${change.action === 'delete' ? '-' : change.action === 'create' ? '+' : ' '}     ${d}`);
    return lines.join('\n');
  };
  const out: string[] = [MARKDOWN_MARKER, `### netform plan`, ''];
  out.push(...failuresMarkdown(plan.tests));
  out.push(`**${summaryLine(plan)}**`, '');
  const tests = testsLine(plan.tests);
  if (tests) out.push(tests, '');
  out.push(...notCheckedMarkdown(plan));
  if (plan.base) {
    out.push(baseLine(plan, markdownCode), '');
    if (plan.base.note) out.push('> [!NOTE]', `> ${markdownText(baseNoteText(plan.base.note))}`, '');
  }
  out.push(...approvalsMarkdown(plan));
  const undeclaredSummary = undeclaredLine(plan);
  if (undeclaredSummary) out.push(undeclaredSummary, '');
  out.push(
    `Server: ${markdownCode(plan.server)}${plan.sources.length ? ` · from ${plan.sources.map(markdownCode).join(', ')}` : ''}`,
    '',
  );
  for (const limit of exceededLimits(plan)) out.push(`> [!CAUTION]`, `> Over a safety limit: ${limitLine(limit)}`, '');
  const blocked = blockedExpiriesLine(plan);
  if (blocked) out.push(`> [!CAUTION]`, `> ${markdownText(blocked)}`, '');
  const head = out.join('\n');
  // Room kept for the closing fence, the "not shown" line and the warnings' heading.
  const reserve = 1_000 + (options.fullPlanAt?.length ?? 0);
  // Access changes are what a reviewer most needs: their sections are laid out first, with at most a
  // third of the comment, and the changes fill what is left.
  const sections = sectionsOf(plan);
  const accessShare = Math.floor(maxChars / 3 / Math.max(1, sections.filter((s) => s.access).length));
  const laidOut = sections.map((section) => ({
    ...section,
    blocks: section.changes.map(blockOf),
    accessLines:
      options.driftAccess && !plan.base
        ? accessMarkdown(section.access, accessShare, DRIFT_ACCESS_TITLE, driftAccessLines(plan))
        : accessMarkdown(section.access, accessShare, section.accessTitle),
  }));
  const accessChars = laidOut.reduce(
    (n, s) => n + (s.accessLines.length > 0 ? s.accessLines.join('\n').length + 1 : 0),
    0,
  );
  let budget = maxChars - head.length - reserve - accessChars;
  let full = true;
  let hidden = 0;
  const total = laidOut.reduce((n, s) => n + s.blocks.length, 0);
  const tail: string[] = [];
  for (const section of laidOut) {
    const shown: string[] = [];
    for (const block of section.blocks) {
      if (!full || block.length + 1 > budget) {
        full = false;
        break;
      }
      shown.push(block);
      budget -= block.length + 1;
    }
    hidden += section.blocks.length - shown.length;
    if (section.blocks.length > 0) {
      const fence = markdownFence(shown.join('\n'));
      tail.push(
        `<details open><summary>${markdownText(section.title)}</summary>`,
        '',
        `${fence}diff`,
        ...shown,
        fence,
        '',
        '</details>',
        '',
      );
    } else if (plan.base && section.empty && !section.ratifies?.length) {
      tail.push(`**${markdownText(section.title)}**: ${markdownText(section.empty)}.`, '');
    }
    const ratifies = ratifiesLines(section);
    if (ratifies.length > 0)
      tail.push(
        `**${markdownText(section.accessTitle ?? 'Access changes')}**`,
        '',
        ...ratifies.map((line) => `- ${markdownCode(line)}`),
        '',
      );
    // Without --base the access changes come after the undeclared objects, as they always did.
    if (plan.base) tail.push(...section.accessLines);
  }
  if (hidden > 0) {
    const where = options.fullPlanAt ? `The full plan: ${options.fullPlanAt}` : 'Run `netform plan` for the full plan';
    tail.push(
      `**${hidden} of ${total} changes are not shown** (a comment holds at most ${maxChars.toLocaleString('en-US')} characters). ${where}.`,
      '',
    );
  }
  if ((plan.undeclared ?? []).length > 0) {
    const entries: string[] = [];
    for (const entry of plan.undeclared!.map(undeclaredEntry)) {
      const line = entry.startsWith('=') ? ` ${entry.slice(1)}` : entry;
      if (line.length + 1 > budget) break;
      entries.push(line);
      budget -= line.length + 1;
    }
    const left = plan.undeclared!.length - entries.length;
    const undeclaredFence = markdownFence(entries.join('\n'));
    tail.push('<details open><summary>Undeclared (live, inside the managed scope, declared in no file)</summary>', '');
    tail.push(`${undeclaredFence}diff`, ...entries, undeclaredFence, '', '</details>', '');
    if (left > 0) tail.push(`**${left} more undeclared object(s) are not shown.**`, '');
  }
  const outside = outsideLines(plan);
  if (outside.length > 0)
    tail.push('> [!WARNING]', `> ${OUTSIDE_TITLE}:`, ...outside.map((line) => `> - ${markdownCode(line)}`), '');
  if (!plan.base) for (const item of laidOut[0]!.accessLines) tail.push(item);
  if (plan.warnings.length > 0) {
    const warnings: string[] = [];
    for (const w of plan.warnings) {
      // In a code span: a warning quotes labels and values from the server and the files.
      const line = `- ${markdownCode(warningText(w))}`;
      if (line.length + 1 > budget) break;
      warnings.push(line);
      budget -= line.length + 1;
    }
    const left = plan.warnings.length - warnings.length;
    tail.push('**Warnings**', '', ...warnings, ...(left > 0 ? [`- … and ${left} more warning(s), not shown`] : []), '');
  }
  return `${head}\n${tail.join('\n')}`;
}
