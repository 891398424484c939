/**
 * The access changes of a plan: the live rules before, the live rules with the plan's rule
 * changes applied after (read from the plan's changes by natural key, so this follows the
 * planner whatever its stages), each rule as the server stores it. Pure.
 */
import { userKey } from '../model/keys.js';
import type { DesiredState, LiveState } from '../model/state.js';
import type { PortType, RuleAction } from '../model/types.js';
import type { Change, Plan } from '../plan/types.js';
import { boundAccessChanges, computeAccessChanges, type AccessChangeLimits, type AccessChanges } from './changes.js';
import { accessModelOfLive, accessSettingsOf, asStored, type AccessRule } from './model.js';

/** A rule's natural key (src/model/keys.ts ruleKey: `owner|action|destination|ports`) back to its fields. */
export function ruleOfKey(key: string): AccessRule | null {
  const [owner, action, destination, ports] = key.split('|');
  if (
    owner === undefined ||
    destination === undefined ||
    ports === undefined ||
    (action !== 'accept' && action !== 'drop')
  )
    return null;
  let port_type: PortType | null = null;
  let port_range: string | null = null;
  if (ports !== 'any') {
    const colon = ports.indexOf(':');
    port_type = ports.slice(0, colon) as PortType;
    port_range = ports.slice(colon + 1);
  }
  return { owner: owner === '*' ? null : owner, action: action as RuleAction, destination, port_type, port_range };
}

/** What the plan does to every user's access; bounded for display. */
export function planAccessChanges(
  plan: Plan,
  live: LiveState,
  desired: DesiredState,
  limits?: AccessChangeLimits,
): AccessChanges {
  return accessChangesAfter(live, desired, [], plan.changes, limits);
}

/**
 * What the changes `then` do to every user's access once the changes `first` are made (changes of
 * plans made against `live`): a plan's effect in two parts, such as a pull request's own changes
 * after those already on its base (src/plan/base.ts). Bounded for display.
 */
export function accessChangesAfter(
  live: LiveState,
  desired: DesiredState,
  first: readonly Change[],
  then: readonly Change[],
  limits?: AccessChangeLimits,
): AccessChanges {
  const rules = accessModelOfLive(live).rules;
  const users = live.users.map((u) => userKey(u.email));
  const { portRules } = accessSettingsOf(desired);
  const before = first.length === 0 ? { rules, users } : withChanges(rules, users, first, portRules);
  const after = withChanges(rules, users, [...first, ...then], portRules);
  // Live rules with ports stay out of the ruleset when port_rules is false (docs/rule-semantics.md §5.1.2).
  const changes = computeAccessChanges({ before: before.rules, after: after.rules, users: after.users, portRules });
  return boundAccessChanges(changes, limits);
}

/** The live rules with the changes' rule changes made (by natural key), and the users they leave. */
function withChanges(
  rules: AccessRule[],
  users: string[],
  changes: readonly Change[],
  portRules: boolean,
): { rules: AccessRule[]; users: string[] } {
  const removed = new Set<string>();
  const added: AccessRule[] = [];
  const deletedUsers = new Set<string>();
  for (const change of changes) {
    if (change.kind === 'user' && change.action === 'delete') deletedUsers.add(userKey(change.key));
    for (const item of change.cascade ?? []) if (item.kind === 'rule') removed.add(item.liveId);
    if (change.kind !== 'rule') continue;
    if (change.liveId !== undefined && change.action !== 'create') removed.add(change.liveId);
    if (change.action !== 'delete') {
      // Created as the server stores it: without ports when port_rules is false (docs/rule-semantics.md §5.1.1).
      const rule = ruleOfKey(change.key);
      if (rule) added.push(asStored(rule, portRules));
    }
  }
  return {
    rules: [...rules.filter((r) => r.id === undefined || !removed.has(r.id)), ...added],
    users: users.filter((key) => !deletedUsers.has(key)),
  };
}
