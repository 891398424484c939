/** The plan's outcome in words (the facts are src/plan/outcome.ts's): never "matches" unless it is. */
import type { OutcomeItem, PlanOutcome } from '../plan/types.js';
import { outcomeText } from './plan-outcome.js';

/**
 * The line a plan without changes ends with: "matches" only when it does. Pending and kept plans
 * say what is left. A plan saved by an older version has no outcome: it matches when it has no changes.
 */
export function noChangesLine(outcome: PlanOutcome | undefined): string {
  if (outcome === undefined || outcome.status === 'matches') return 'No changes: the server matches the desired state.';
  if (outcome.status === 'pending') {
    return `No changes planned, but the server does not match the desired state: ${describe(outcome.pending, true)}.`;
  }
  return `No changes, but not everything matches: ${describe([...outcome.kept, ...outcome.not_checked])}.`;
}

function describe(items: readonly OutcomeItem[], pending = false): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item.reason, (counts.get(item.reason) ?? 0) + 1);
  const n = (reason: string) => counts.get(reason) ?? 0;
  const parts: string[] = [];
  const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  if (n('guard')) parts.push(`${plural(n('guard'), 'change', 'changes')} cancelled by a guard (see the warnings)`);
  if (n('target')) {
    const left = items.filter((i) => i.reason === 'target').map((i) => outcomeText(i.text));
    parts.push(left.join(', '));
  }
  const undeclared = items.filter((i) => i.reason === 'undeclared').length;
  if (undeclared && pending)
    parts.push(`${plural(undeclared, 'object is', 'objects are')} on the server but in no file (see Undeclared)`);
  else if (undeclared) parts.push(plural(undeclared, 'undeclared object kept', 'undeclared objects kept'));
  if (n('protected')) parts.push(`${plural(n('protected'), 'user', 'users')} kept (protected)`);
  if (n('ignored')) {
    // Named: which field of which object, so that the line alone says what to look at.
    const named = items
      .filter((i) => i.reason === 'ignored')
      .map((i) => [i.id, i.field].filter((part) => part !== undefined).join(' '))
      .filter((name) => name !== '');
    const which = named.length > 0 ? ` (${named.join(', ')})` : '';
    parts.push(`${plural(n('ignored'), 'field differs', 'fields differ')} under ignore_changes, not managed${which}`);
  }
  if (n('acknowledged')) {
    // Named: which objects, so that a plan (which has no "What differs") says what is kept.
    const named = items.filter((i) => i.reason === 'acknowledged').map((i) => i.id ?? '');
    parts.push(
      `${plural(n('acknowledged'), 'difference', 'differences')} acknowledged until a date (${named.join(', ')})`,
    );
  }
  if (n('not_checked')) parts.push(`${plural(n('not_checked'), 'field', 'fields')} not checked`);
  if (n('deciding') && pending)
    parts.push(
      `${plural(n('deciding'), 'live rule in no file decides', 'live rules in no file decide')} packets inside the managed blocks (see Outside the files)`,
    );
  else if (n('deciding')) {
    // Kept deciding items are users outside manage.users (by their own rules) or forgotten rules.
    const forgotten = items.filter((i) => i.reason === 'deciding' && i.id?.startsWith('rule:')).length;
    const outside = n('deciding') - forgotten;
    if (outside)
      parts.push(
        `${plural(outside, "user outside this repository's users reaches", "users outside this repository's users reach")} inside the managed blocks`,
      );
    if (forgotten)
      parts.push(
        `${plural(forgotten, 'forgotten rule decides', 'forgotten rules decide')} packets inside the managed blocks`,
      );
  }
  return parts.join('; ');
}
