/** A rule in words, as plans, checks, reviews and migrate's notes name it (the rule's own text is src/model/rule.ts's ruleText). */
import { ruleLocation, ruleText } from '../model/rule.js';

/**
 * `accept 10.0.0.0/8 tcp 22 (alice@example.com)`: a rule with its owner (`global` for none), and,
 * for a rule a server without port-rule support stores portless, the ports it was declared with.
 */
export function describeRule(
  rule: Parameters<typeof ruleText>[0] & {
    owner: string | null;
    declaredPorts?: { port_type: string; port_range: string | null };
  },
): string {
  const owner = rule.owner === null ? 'global' : rule.owner;
  const declared = rule.declaredPorts
    ? `; declared ${rule.declaredPorts.port_type} ${rule.declaredPorts.port_range ?? ''}, stored without ports as settings.port_rules is false`
    : '';
  return `${ruleText(rule)} (${owner}${declared})`;
}

/**
 * `accept 10.0.0.0/8 (alice@example.com) at desired/a.yaml:12, user portless-accept`: the rule
 * that decided a packet, where it is, and the scope and stage it decided in (the access
 * evaluator's Match). Here so that the plan document (Plan.tests) and the views word it alike.
 */
export function describeMatch(match: {
  rule: Parameters<typeof describeRule>[0] & Parameters<typeof ruleLocation>[0];
  scope: string;
  stage: string;
}): string {
  const where = ruleLocation(match.rule);
  return `${describeRule(match.rule)}${where ? ` at ${where}` : ''}, ${match.scope} ${match.stage}`;
}
