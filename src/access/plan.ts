/**
 * The access changes of a plan: the live rules before, the live rules with the plan's rule
 * changes applied after (read from the plan's changes by natural key, so this follows the
 * planner whatever its stages). Pure.
 */
import { userKey } from '../model/keys.js';
import type { DesiredState, LiveState } from '../model/state.js';
import type { PortType, RuleAction } from '../model/types.js';
import type { Plan } from '../plan/types.js';
import { boundAccessChanges, computeAccessChanges, type AccessChangeLimits, type AccessChanges } from './changes.js';
import { accessModelOfLive, accessSettingsOf, type AccessRule } from './model.js';

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
  const removed = new Set<string>();
  const added: AccessRule[] = [];
  const deletedUsers = new Set<string>();
  for (const change of plan.changes) {
    if (change.kind === 'user' && change.action === 'delete') deletedUsers.add(userKey(change.key));
    for (const item of change.cascade ?? []) if (item.kind === 'rule') removed.add(item.liveId);
    if (change.kind !== 'rule') continue;
    if (change.liveId !== undefined && change.action !== 'create') removed.add(change.liveId);
    if (change.action !== 'delete') {
      const rule = ruleOfKey(change.key);
      if (rule) added.push(rule);
    }
  }
  const after = [...before.filter((r) => r.id === undefined || !removed.has(r.id)), ...added];
  const users = live.users.map((u) => userKey(u.email)).filter((key) => !deletedUsers.has(key));
  const changes = computeAccessChanges({ before, after, users, portRules: accessSettingsOf(desired).portRules });
  return boundAccessChanges(changes, limits);
}
