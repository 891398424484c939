/** The overlap sweep: rules of one desired state that the server would refuse as overlapping. */
import { ruleKeyOfOwnerKey } from '../../model/keys.js';
import { Messages } from '../../model/messages.js';
import { ruleText, type ParsedRule } from '../../model/rule.js';
import type { Diagnostic } from '../types.js';
import { findOverlaps, MAX_OVERLAP_REPORTS } from './find-overlaps.js';
import type { RuleEntry } from './fields.js';
import { report, whereIs } from './report.js';

/**
 * Overlapping rules under the server's rule: same owner and action, intersecting destinations,
 * and ports that collide (find-overlaps.ts: each rule reported once, at the later of the pair,
 * at most MAX_OVERLAP_REPORTS named, then how many more). With `portRules` false the entries were
 * parsed without their ports (as such a server stores them), and a pair that only overlaps so
 * says it.
 */
const PORTLESS =
  '; settings.port_rules is false, so the server stores both without their ports, and its exclusion constraint refuses the rule created second';

export function checkRuleOverlaps(rules: RuleEntry[], into: Diagnostic[], portRules = true): void {
  const parsed = rules.filter((entry): entry is RuleEntry & { parsed: ParsedRule } => entry.parsed !== null);
  const { found, more, firstUnnamed } = findOverlaps(parsed, (a, b) => ruleKeyOf(a) === ruleKeyOf(b));
  found.sort((a, b) => a.later.order - b.later.order);
  for (const { later, earlier } of found) {
    const portless = !portRules && (hasPorts(earlier) || hasPorts(later));
    into.push(
      report(
        later,
        'destination',
        `${Messages.overlaps}: ${ruleText(earlier.rule)} at ${whereIs(earlier)} (rules with the same action and the same user, or both global, must not overlap${portless ? PORTLESS : ''})`,
      ),
    );
  }
  if (more > 0 && firstUnnamed)
    into.push(
      report(
        firstUnnamed,
        'destination',
        `${Messages.overlaps}, and so do ${(more - 1).toLocaleString('en')} more rules after the first ${MAX_OVERLAP_REPORTS.toLocaleString('en')} named (validate names at most ${MAX_OVERLAP_REPORTS.toLocaleString('en')} overlapping rules)`,
      ),
    );
}

function hasPorts(entry: RuleEntry): boolean {
  return entry.rule.port_type !== null || entry.rule.port_range !== null;
}

export function ruleKeyOf(entry: RuleEntry): string {
  // owner.key is userKey of the email already.
  return ruleKeyOfOwnerKey(entry.owner?.key ?? null, entry.rule);
}
