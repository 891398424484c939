/**
 * An apply in words: its summary (what was done, what failed and why, what was not attempted),
 * why nothing was written (refused, stale, cancelled), and what an interrupt says.
 */
import pc from 'picocolors';
import type { ApplySummary, ChangeStatus } from '../apply/executor.js';
import type { StaleCause } from '../ops/apply.js';
import type { PlanAgeCheck } from '../plan/age.js';
import type { ExpiredSincePlan } from '../plan/expiries.js';
import type { LimitCheck, Plan } from '../plan/types.js';
import { blockedExpiriesLine } from './expiry.js';
import { resultWhy } from './ops-apply.js';
import { limitLine, type RenderOptions } from './plan.js';
import { seconds } from './progress.js';
import { inertText } from './escape.js';
import { withheldCount } from './reviewed.js';
import { SYMBOL } from './symbols.js';

/**
 * A line per result, then the count line. `logged`: the results whose outcome line the progress
 * already wrote (without a terminal), left out here so that each write is logged once.
 */
export function renderApplySummary(
  summary: ApplySummary,
  options: RenderOptions & { logged?: ReadonlySet<string> },
): string {
  const c = pc.createColors(options.color);
  const paint: Record<ChangeStatus, (s: string) => string> = { done: c.green, failed: c.red, not_attempted: c.yellow };
  const word: Record<ChangeStatus, string> = { done: 'done', failed: 'FAILED', not_attempted: 'not attempted' };
  const out: string[] = [];
  for (const r of summary.results) {
    if (options.logged?.has(r.id)) continue;
    const why = resultWhy(r);
    const line = inertText(`${word[r.status].padEnd(13)} ${SYMBOL[r.action]} ${r.label}${why ? `: ${why}` : ''}`);
    out.push(paint[r.status](line));
  }
  if (out.length > 0) out.push('');
  out.push(c.bold(applySummaryLine(summary)));
  return `${out.join('\n')}\n`;
}

export function applySummaryLine(summary: ApplySummary): string {
  return `Apply: ${summary.done} done, ${summary.failed} failed, ${summary.notAttempted} not attempted.`;
}

/**
 * Why nothing was written: the plan is over a safety limit, or has `nowManaged` changes that exist
 * only because the files leave a field out (refused like a limit unless --allow-now-managed).
 */
export function refusedText(
  overLimit: readonly LimitCheck[],
  nowManaged = 0,
  plan?: Pick<Plan, 'changes' | 'limits'>,
): string {
  const blocked = plan ? blockedExpiriesLine(plan) : undefined;
  const lines = [
    ...overLimit.map((l) => inertText(limitLine(l))),
    ...(blocked ? [blocked] : []),
    ...(nowManaged > 0 ? [nowManagedLine(nowManaged)] : []),
  ];
  return `Refused: the plan is over a safety limit. Nothing was changed.\n${lines.map((line) => `  - ${line}`).join('\n')}\n`;
}

/** `apply -f` without a reviewed plan: the safety-limit line refusing `count` now-managed changes (src/plan/defaults.ts). */
export function nowManagedLine(count: number): string {
  return (
    `${count} change${count === 1 ? '' : 's'} exist${count === 1 ? 's' : ''} only because the files leave a field out, which now means its default ` +
    '(marked "now managed", listed first): write the field in the files (its value, or the default), name it in ignore_changes, ' +
    'or pass --allow-now-managed to make these changes. ' +
    'This guard is for repositories written before managed defaults (version: 1): once the left-out fields are reviewed, ' +
    'write `version: 2` in every file and it no longer applies'
  );
}

const STALE_CAUSE: Record<StaleCause, string> = {
  server: 'the server changed',
  secret: 'a secret it sends changed',
  both: 'the server and a secret it sends changed',
  expired: 'what it grants expired',
};

/** Why nothing was written: what the saved plan touches changed since it was made. */
export function staleText(stale: ReadonlyArray<string | ExpiredSincePlan>, cause: StaleCause = 'server'): string {
  return `The saved plan is stale: ${STALE_CAUSE[cause]} since it was made. Nothing was changed.\n${stale.map((s) => `  - ${inertText(staleItemText(s))}`).join('\n')}\nRun netform plan again.\n`;
}

/** One reason a saved plan is stale: words as they came, or a grant expired since the plan was made. */
function staleItemText(item: string | ExpiredSincePlan): string {
  return typeof item === 'string' ? item : `${item.label}: expired ${item.expires} since the plan was made`;
}

/** After the writes of `apply --reviewed`: what was withheld, and why the exit code is 5. */
export function withheldLine(count: number, approvalsMissing = false): string {
  const one = count === 1;
  const why = approvalsMissing
    ? `that the reviewed plan does not show as ${one ? 'it is' : 'they are'} now, or that ${one ? 'needs' : 'need'} an approval not given`
    : `that the reviewed plan does not show as ${one ? 'it is' : 'they are'} now`;
  return (
    `Withheld ${withheldCount(count)} ${why} (listed above): none of ${one ? 'it was' : 'them were'} written. ` +
    'Review them (netform plan -f PATH shows them), then apply them in a run a maintainer approves.\n'
  );
}

/** `apply --reviewed` when nothing the files plan now is in the reviewed plan. */
export const NOTHING_REVIEWED = 'Nothing to apply: no change of the plan is in the reviewed plan as it is now.';

export function confirmQuestion(changes: number, server: string): string {
  return `\nApply these ${changes} change(s) to ${server}? Only "yes" applies: `;
}

export const CANCELLED = 'Apply cancelled. Nothing was changed.\n';

/** The first interrupt: the writes in flight get `graceMs`. */
export function stoppingLine(signal: string, graceMs: number, inFlight: number): string {
  return `${signal}: starting no new writes; waiting up to ${seconds(graceMs)} for the ${inFlight} in flight (send it again to exit at once)\n`;
}

/** The second interrupt. */
export function exitingNowLine(signal: string): string {
  return `${signal} again: exiting now. Writes in flight may or may not have happened; netform plan shows where the server is.\n`;
}

/** Before the writes: secrets the plan did not pin where it was made (a variable unset there), read now. */
export function unpinnedLine(count: number): string {
  return `${count} secret${count === 1 ? ' was' : 's were'} not pinned at review: read now, and sent as read\n`;
}

/** The server went away: no new writes. */
export function haltedLine(reason: string): string {
  return `${reason}: starting no new writes\n`;
}

/** After the summary: an interrupted apply, or one that left changes undone. */
export function unfinishedLine(summary: ApplySummary, interruptedBy: string | null): string {
  return interruptedBy
    ? `Interrupted by ${interruptedBy}. ${applySummaryLine(summary)} Running apply again finishes what is left.\n`
    : `${applySummaryLine(summary)} Running apply again retries what is left.\n`;
}

/** `9 days`, `13 hours`, `25 minutes`, `40 seconds`: the largest whole unit. */
export function roughDuration(ms: number): string {
  const units: [string, number][] = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [name, size] of units) {
    const n = Math.floor(ms / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? '' : 's'}`;
  }
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${s} second${s === 1 ? '' : 's'}`;
}

/** Why a saved plan is too old to apply (`apply PLANFILE`), and what to do. */
export function planTooOldMessage(path: string, check: PlanAgeCheck): string {
  const why =
    check.status === 'expired'
      ? `was made ${roughDuration(check.ageMs)} ago, more than --plan-max-age (${roughDuration(check.maxAgeMs)})`
      : 'has no creation date netform can read, so its age is unknown';
  return `${inertText(path)}: the saved plan ${why}; nothing was changed. Make it again with netform plan -f PATH -o PLANFILE (or pass --plan-max-age with a longer duration, 0 for none)`;
}

/** `apply --reviewed` with an old reviewed plan: only a warning (it filters a fresh plan, it is not applied as such). */
export function reviewedPlanOldWarning(path: string, check: PlanAgeCheck): string {
  const age =
    check.status === 'expired'
      ? `was made ${roughDuration(check.ageMs)} ago, more than --plan-max-age (${roughDuration(check.maxAgeMs)})`
      : 'has no creation date netform can read';
  return `warning: the reviewed plan ${inertText(path)} ${age}; what it shows may no longer be what its reviewers saw\n`;
}
