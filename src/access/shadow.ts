/**
 * Rules that never decide anything: every packet they match is matched first by rules of the
 * same scope in an earlier stage (docs/rule-semantics.md §2.1: port-accept, port-drop, portless-accept,
 * portless-drop), such as a drop inside an accept of the same scope and port class. A user's rules
 * are evaluated before the global ones for that user's devices only, so a global rule is judged
 * against global rules (it still decides for users without own rules there).
 */
import type { DesiredState } from '../model/state.js';
import type { Diagnostic } from '../desired/types.js';
import { RuleIndex } from './changes.js';
import { ruleLocation } from '../model/rule.js';
import { describeRule } from '../views/model-rule.js';
import { accessModelOfDesired, compileRule, STAGES, type AccessModel, type CompiledRule } from './model.js';

const MAX_PORT = 65535;

export interface ShadowedRule {
  rule: CompiledRule;
  /** The earlier rules that together match everything it matches. */
  by: CompiledRule[];
}

/** Whether the earlier rules `earlier` match every packet `rule` matches. */
function covered(rule: CompiledRule, earlier: CompiledRule[]): boolean {
  const classes: ('tcp' | 'udp' | 'other')[] = rule.portType === null ? ['tcp', 'udp', 'other'] : [rule.portType];
  for (const cls of classes) {
    const relevant = earlier.filter((e) => e.portType === null || e.portType === cls);
    const p0 = cls === 'other' ? 0 : rule.low;
    const p1 = cls === 'other' ? 0 : rule.high;
    // Address breakpoints inside the rule's block; each elementary interval must be covered in all its ports.
    const points = new Set<bigint>([rule.start]);
    for (const e of relevant) {
      if (e.start > rule.start && e.start <= rule.end) points.add(e.start);
      if (e.end >= rule.start && e.end < rule.end) points.add(e.end + 1n);
    }
    for (const x of points) {
      const active = relevant.filter((e) => e.start <= x && x <= e.end);
      if (cls === 'other') {
        if (!active.some((e) => e.portType === null)) return false;
        continue;
      }
      const ranges = active
        .map((e) => [e.portType === null ? 0 : e.low, e.portType === null ? MAX_PORT : e.high] as const)
        .sort((a, b) => a[0] - b[0]);
      let next = p0;
      for (const [lo, hi] of ranges) {
        if (lo > next) break;
        if (hi >= next) next = hi + 1;
        if (next > p1) break;
      }
      if (next <= p1) return false;
    }
  }
  return true;
}

/** The shadowed rules of a desired state (port rules are left out when settings.port_rules is false). */
export function findShadowedRules(state: DesiredState): ShadowedRule[] {
  return findShadowedRulesOfModel(accessModelOfDesired(state));
}

/** The shadowed rules of an access model, declared or live (port rules left out when its port_rules is false). */
export function findShadowedRulesOfModel(model: AccessModel): ShadowedRule[] {
  const byOwner = new Map<string | null, CompiledRule[]>();
  for (const rule of model.rules) {
    const compiled = compileRule(rule);
    if (!compiled || (compiled.portType !== null && !model.settings.portRules)) continue;
    let list = byOwner.get(rule.owner);
    if (!list) byOwner.set(rule.owner, (list = []));
    list.push(compiled);
  }
  const found: ShadowedRule[] = [];
  for (const rules of byOwner.values()) {
    // Only a rule of a later stage than another of its scope can be shadowed: most users' few
    // rules are all of one stage, and need no index.
    const first = rules[0]!.stage;
    if (rules.every((r) => r.stage === first)) continue;
    // An index per stage, so that a large global scope is searched by address, not scanned.
    const indexes = STAGES.map((_, stage) => new RuleIndex(rules.filter((r) => r.stage === stage)));
    for (const rule of rules) {
      const candidates = new Set<CompiledRule>();
      for (let stage = 0; stage < rule.stage; stage++)
        indexes[stage]!.query(rule.family, rule.start, rule.end, candidates);
      if (candidates.size === 0) continue;
      const earlier = [...candidates];
      if (covered(rule, earlier)) found.push({ rule, by: earlier });
    }
  }
  return found;
}

/** Shadowed rules as `validate` warnings, each naming the rule and the rules that shadow it. */
export function shadowedRuleWarnings(state: DesiredState): Diagnostic[] {
  return findShadowedRules(state).map(({ rule, by }) => {
    const names = by
      .slice(0, 3)
      .map(
        (e) =>
          `${describeRule(e.rule)}${ruleLocation(e.rule) ? ` at ${ruleLocation(e.rule)}` : ''} (${STAGES[e.stage]})`,
      );
    const more = by.length > 3 ? ` and ${by.length - 3} more` : '';
    const source = rule.rule.source;
    return {
      ...(source ? { file: source.file, line: source.line, column: source.column, path: source.path } : {}),
      message:
        `rule ${describeRule(rule.rule)} never decides anything: ${names.join(', ')}${more} ${by.length === 1 ? 'matches' : 'match'} ` +
        `every packet it matches and ${by.length === 1 ? 'is' : 'are'} evaluated first (${STAGES[rule.stage]} comes after)`,
    };
  });
}
