/**
 * The access changes of a plan: the live rules before, the live rules with the plan's rule
 * changes applied after (read from the plan's changes by natural key, so this follows the
 * planner whatever its stages), each rule as the server stores it. Pure.
 */
import { userKey } from '../model/keys.js';
import type { DesiredState, LiveState } from '../model/state.js';
import type { PortType, RuleAction } from '../model/types.js';
import type { Plan } from '../plan/types.js';
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
  const before = accessModelOfLive(live).rules;
  const { portRules } = accessSettingsOf(desired);
  const removed = new Set<string>();
  const added: AccessRule[] = [];
  const deletedUsers = new Set<string>();
  for (const change of plan.changes) {
    if (change.kind === 'user' && change.action === 'delete') deletedUsers.add(userKey(change.key));
    for (const item of change.cascade ?? []) if (item.kind === 'rule') removed.add(item.liveId);
    if (change.kind !== 'rule') continue;
    if (change.liveId !== undefined && change.action !== 'create') removed.add(change.liveId);
    if (change.action !== 'delete') {
      // Created as the server stores it: without ports when port_rules is false (spec §5.1.1).
      const rule = ruleOfKey(change.key);
      if (rule) added.push(asStored(rule, portRules));
    }
  }
  const after = [...before.filter((r) => r.id === undefined || !removed.has(r.id)), ...added];
  const users = live.users.map((u) => userKey(u.email)).filter((key) => !deletedUsers.has(key));
  // Live rules with ports stay out of the ruleset when port_rules is false (spec §5.1.2).
  const changes = computeAccessChanges({ before, after, users, portRules });
  return boundAccessChanges(changes, limits);
}
