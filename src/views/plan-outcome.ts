/**
 * What each item of a plan's outcome says (the codes are src/plan/types.ts OutcomeWords): an item
 * read from a saved plan, or made by another layer, is already words and is shown as it is.
 */
import type { OutcomeItem, OutcomeText, PlanOutcome, WordedOutcome } from '../plan/types.js';
import { guardedText } from './plan-warnings.js';

export function outcomeText(text: OutcomeText): string {
  if (typeof text === 'string') return text;
  switch (text.code) {
    case 'protected':
      return `${text.label}: kept (protected)`;
    case 'undeclared':
      return `${text.admin ? `${text.label} (an admin)` : text.label} is on the server but in no file`;
    case 'guarded':
      return guardedText(text.action, text.label, text.why);
    case 'target_left':
      return `${text.count} change${text.count === 1 ? '' : 's'} left out by --target`;
    case 'role_ignored':
      return `${text.label}: role is ${text.role} on the server, not managed (ignore_changes)`;
    case 'field_ignored':
      return `device ${text.key}: ${text.field} is ${JSON.stringify(text.value)} on the server, not managed (ignore_changes)`;
    case 'acknowledged': {
      const shown = text.whole ? ':' : ` is ${JSON.stringify(text.value)} on the server,`;
      return `${text.name}${shown} acknowledged until ${text.until} (${text.reason})`;
    }
  }
}

/** An outcome item with its words, the item's members in their order. */
export function wordedOutcomeItem(item: OutcomeItem): OutcomeItem & { text: string } {
  return typeof item.text === 'string'
    ? (item as OutcomeItem & { text: string })
    : { ...item, text: outcomeText(item.text) };
}

/** The outcome with every item in words: what JSON shows and a saved plan holds. */
export function wordedOutcome(outcome: PlanOutcome): WordedOutcome {
  return {
    ...outcome,
    pending: outcome.pending.map(wordedOutcomeItem),
    kept: outcome.kept.map(wordedOutcomeItem),
    not_checked: outcome.not_checked.map(wordedOutcomeItem),
  };
}
