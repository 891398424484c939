/** The overlap sweep: rules of one desired state that the server would refuse as overlapping. */
import { ruleKeyOfOwnerKey } from '../../model/keys.js';
import { Messages } from '../../model/messages.js';
import { overlapGroup, rulesOverlap, ruleText } from '../../model/rule.js';
import type { Diagnostic } from '../types.js';
import type { RuleEntry } from './fields.js';
import { report, whereIs } from './report.js';

/**
 * Overlapping rules under the server's rule: same owner and action, intersecting destinations,
 * and ports that collide. Rules are grouped by what must be equal (overlapGroup) and swept in
 * address order, so that only pairs whose destinations intersect are compared.
 */
export function checkRuleOverlaps(rules: RuleEntry[], into: Diagnostic[]): void {
  const groups = new Map<string, RuleEntry[]>();
  for (const entry of rules) {
    if (!entry.parsed) continue;
    const group = overlapGroup(entry.parsed).key;
    const list = groups.get(group) ?? [];
    list.push(entry);
    groups.set(group, list);
  }
  for (const list of groups.values()) {
    list.sort((a, b) =>
      a.parsed!.destination.start < b.parsed!.destination.start
        ? -1
        : a.parsed!.destination.start > b.parsed!.destination.start
          ? 1
          : a.order - b.order,
    );
    for (let i = 0; i < list.length; i++) {
      const a = list[i]!;
      for (let j = i + 1; j < list.length && list[j]!.parsed!.destination.start <= a.parsed!.destination.end; j++) {
        const b = list[j]!;
        if (!rulesOverlap(a.parsed!, b.parsed!)) continue;
        const [earlier, later] = a.order < b.order ? [a, b] : [b, a];
        if (ruleKeyOf(earlier) === ruleKeyOf(later)) continue; // reported as a duplicate
        into.push(
          report(
            later,
            'destination',
            `${Messages.overlaps}: ${ruleText(earlier.rule)} at ${whereIs(earlier)} (rules with the same action and the same user, or both global, must not overlap)`,
          ),
        );
      }
    }
  }
}

export function ruleKeyOf(entry: RuleEntry): string {
  // owner.key is userKey of the email already.
  return ruleKeyOfOwnerKey(entry.owner?.key ?? null, entry.rule);
}
