/**
 * Expiries in words (src/desired/expiry.ts, src/plan/expiries.ts): what a safety limit blocked,
 * what `apply --expired-only` left pending, what `validate` and `review` say about them.
 */
import type { Change, Plan } from '../plan/types.js';
import { inertText } from './escape.js';

/** At most this many expiries named in one line; the rest are counted. */
const NAMED = 20;

function named(items: readonly string[]): string {
  const shown = items.slice(0, NAMED).join(', ');
  return items.length > NAMED ? `${shown}, and ${items.length - NAMED} more` : shown;
}

/** The changes of the plan an expiry causes. */
function expiryChanges(plan: Pick<Plan, 'changes'>): Change[] {
  return plan.changes.filter((change) => change.expired !== undefined);
}

/** `device alice@example.com/laptop (expired 2026-12-31)`. */
function expiredWords(change: Change): string {
  const what = change.kind === 'user' && change.action === 'update' ? `role admin of ${change.key}` : change.label;
  return `${what} (expired ${change.expired})`;
}

/** Under a safety limit's refusal: the expiries it blocked, or nothing when none are in the plan. */
export function blockedExpiriesLine(plan: Pick<Plan, 'changes' | 'limits'>): string | undefined {
  if (!plan.limits.some((l) => l.exceeded)) return undefined;
  const changes = expiryChanges(plan);
  if (changes.length === 0) return undefined;
  return inertText(
    `the limit also blocks ${changes.length} expir${changes.length === 1 ? 'y' : 'ies'}: ${named(changes.map(expiredWords))} (still on the server; pass --allow-deletes N to apply them)`,
  );
}

/** `apply --expired-only`: what else the plan has, which was not written (exit 2). */
export function otherPendingText(labels: readonly string[]): string {
  return `--expired-only: ${labels.length} other change${labels.length === 1 ? ' is' : 's are'} pending and ${labels.length === 1 ? 'was' : 'were'} not written: ${inertText(named([...labels]))} (netform plan shows ${labels.length === 1 ? 'it' : 'them'})\n`;
}
