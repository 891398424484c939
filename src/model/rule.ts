/** Field rules of rules, and the overlap rule (docs/api-v0.md section 6). */
import { addError, hasErrors, type Checked, type FieldErrors } from './errors.js';
import { has, isBlank, isText, type Mode, type RawInput } from './fields.js';
import { Messages } from './messages.js';
import { parseCidrOrAddress, rangesIntersect, type IpFamily, type ParsedCidr } from './net.js';
import { formatPortRange, parsePortRange, portRangesIntersect, reachesPortLimit, type PortRange } from './ports.js';
import { PORT_TYPES, RULE_ACTIONS, type PortType, type RuleAction } from './types.js';

export interface RuleInput {
  action?: RuleAction;
  destination?: string;
  port_type?: PortType | null;
  /** Normalised to `"lo - hi"`. */
  port_range?: string | null;
  user_id?: string | null;
}

/** What checkRuleInput needs to know of the rule an update changes. */
export interface StoredRulePorts {
  /** As stored, `"lo - hi"`. */
  port_range: string | null;
}

/**
 * Checks a `rule` body. On create `destination` is required and `action` defaults to `drop`;
 * `""` is the default too, on create and on update (as 0.7.36, whose cast turns `""` into the
 * field's default). A port range reaching 65535 is refused, as 0.7.36 refuses it, except on an
 * update that sends back the range `stored` already holds (rules stored before netform refused
 * it stay updatable). The pairing of port_type and port_range is checked on the whole rule by
 * checkRulePorts, since an update may send only one of them.
 */
export function checkRuleInput(input: RawInput, mode: Mode, stored?: StoredRulePorts): Checked<RuleInput> {
  const errors: FieldErrors = {};
  const value: RuleInput = {};

  if (mode === 'create' || has(input, 'destination')) {
    const d = input.destination;
    if (isBlank(d)) addError(errors, 'destination', Messages.blank);
    else if (!isText(d) || parseCidrOrAddress(d) === null) addError(errors, 'destination', Messages.invalid);
    else value.destination = (d as string).trim();
  }

  if (has(input, 'action')) {
    const a = input.action;
    if (a === '') value.action = 'drop';
    else if (isBlank(a)) addError(errors, 'action', Messages.blank);
    else if (typeof a === 'string' && (RULE_ACTIONS as readonly string[]).includes(a)) value.action = a as RuleAction;
    else addError(errors, 'action', Messages.invalid);
  } else if (mode === 'create') {
    value.action = 'drop';
  }

  if (has(input, 'port_type')) {
    const t = input.port_type;
    if (isBlank(t)) value.port_type = null;
    else if (typeof t === 'string' && (PORT_TYPES as readonly string[]).includes(t)) value.port_type = t as PortType;
    else addError(errors, 'port_type', Messages.invalid);
  }

  if (has(input, 'port_range')) {
    const r = input.port_range;
    if (isBlank(r)) value.port_range = null;
    else if (typeof r === 'string' && !isText(r)) addError(errors, 'port_range', Messages.invalid);
    else {
      const parsed = parsePortRange(r);
      if (!parsed.ok) addError(errors, 'port_range', parsed.message);
      else {
        const text = formatPortRange(parsed.range);
        if (reachesPortLimit(parsed.range) && text !== stored?.port_range)
          addError(errors, 'port_range', Messages.portRange);
        else value.port_range = text;
      }
    }
  }

  if (has(input, 'user_id')) {
    const u = input.user_id;
    if (isBlank(u)) value.user_id = null;
    else if (!isText(u)) addError(errors, 'user_id', Messages.invalid);
    else value.user_id = u.trim();
  }

  return hasErrors(errors) ? { ok: false, errors, partial: value } : { ok: true, value };
}

/** port_type and port_range go together: either one without the other is blank on the missing one. */
export function checkRulePorts(rule: { port_type: PortType | null; port_range: string | null }): FieldErrors {
  const errors: FieldErrors = {};
  if (rule.port_type !== null && rule.port_range === null) addError(errors, 'port_range', Messages.blank);
  if (rule.port_range !== null && rule.port_type === null) addError(errors, 'port_type', Messages.blank);
  return errors;
}

/**
 * A rule as the server stores it: a 0.7.36 server whose kernel cannot filter ports
 * (`settings.port_rules: false`) stores every rule without its ports (docs/rule-semantics.md
 * §5.1.1), so that is the form its overlap constraint sees.
 */
export function storedForm<T extends { port_type: PortType | null; port_range: string | null }>(
  rule: T,
  portRules: boolean,
): T {
  return portRules || (rule.port_type === null && rule.port_range === null)
    ? rule
    : { ...rule, port_type: null, port_range: null };
}

/** What the overlap rule looks at. `owner` is whatever identifies the bound user (id or email); null for global. */
export interface RuleShape {
  action: RuleAction;
  destination: string;
  port_type: PortType | null;
  port_range: string | null;
  owner: string | null;
}

/** A rule parsed once for repeated overlap checks. */
export interface ParsedRule {
  action: RuleAction;
  owner: string | null;
  destination: ParsedCidr;
  port_type: PortType | null;
  ports: PortRange | null;
}

export function parseRule(rule: RuleShape): ParsedRule | null {
  const destination = parseCidrOrAddress(rule.destination);
  if (!destination) return null;
  let ports: PortRange | null = null;
  if (rule.port_range !== null) {
    const parsed = parsePortRange(rule.port_range);
    if (!parsed.ok) return null;
    ports = parsed.range;
  }
  return { action: rule.action, owner: rule.owner, destination, port_type: rule.port_type, ports };
}

/**
 * What two rules must share to overlap: binding, action, address family, and port group. Rules of
 * different groups never overlap; within a group, rulesOverlap decides by destination and ports.
 * The offline checks, the planner and the stores (which index and constrain rules by it) group
 * rules by it.
 */
export interface OverlapGroup {
  /** Whatever identifies the bound user (id or email key); '' for a rule of every user. */
  owner: string;
  action: RuleAction;
  family: IpFamily;
  /** '' without ports (such rules only overlap each other), else the port type. */
  ports: string;
  /** The four as one text, for maps. */
  key: string;
}

export function overlapGroup(
  rule: Pick<ParsedRule, 'action' | 'owner' | 'port_type' | 'ports'> & { destination: { family: IpFamily } },
): OverlapGroup {
  const owner = rule.owner ?? '';
  const ports = rule.ports === null ? '' : (rule.port_type ?? '');
  const family = rule.destination.family;
  return { owner, action: rule.action, family, ports, key: `${owner}|${rule.action}|${family}|${ports}` };
}

/**
 * Two rules overlap when they have the same action and binding, their destinations intersect,
 * and either both have no ports or both have the same port_type with intersecting ranges.
 */
export function rulesOverlap(a: ParsedRule, b: ParsedRule): boolean {
  if (a.action !== b.action || a.owner !== b.owner) return false;
  if (!rangesIntersect(a.destination, b.destination)) return false;
  if (a.ports === null && b.ports === null) return true;
  if (a.ports === null || b.ports === null) return false;
  return a.port_type === b.port_type && portRangesIntersect(a.ports, b.ports);
}

/** `accept 10.0.0.0/8 tcp 22`: a rule's action, destination and ports, as messages name it. */
export function ruleText(rule: {
  action: string;
  destination: string;
  port_type: string | null;
  port_range: string | null;
}): string {
  return [rule.action, rule.destination, rule.port_type, rule.port_range].filter((p) => p !== null).join(' ');
}

/** Where a rule comes from: `file:line` of a declared one, `id ID` of a live one. */
export function ruleLocation(rule: { source?: { file: string; line: number }; id?: string }): string | undefined {
  if (rule.source) return `${rule.source.file}:${rule.source.line}`;
  if (rule.id) return `id ${rule.id}`;
  return undefined;
}
