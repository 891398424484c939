/**
 * The live state indexed by natural key, built once in linear time so that planning and the
 * saved-plan check never scan a collection per object.
 */
import { deviceKeyOfOwnerKey, normalizeDestination, ruleKey, userKey } from '../model/keys.js';
import { normalizePortRange } from '../model/ports.js';
import type { LiveState } from '../model/state.js';
import type { ApiDevice, ApiRule, ApiUser, PortType } from '../model/types.js';

export interface LiveIndex {
  /** The live object of a key (the first one, when the server holds several: see `duplicates`). */
  usersByKey: Map<string, ApiUser>;
  usersById: Map<string, ApiUser>;
  devicesByKey: Map<string, ApiDevice>;
  devicesById: Map<string, ApiDevice>;
  devicesByUserId: Map<string, ApiDevice[]>;
  rulesByKey: Map<string, ApiRule>;
  /** Keys (`user:<key>`, `device:<key>`, `rule:<key>`) that several live objects share, with all of them. */
  duplicates: Map<string, (ApiUser | ApiDevice | ApiRule)[]>;
  rulesById: Map<string, ApiRule>;
  /** Rules bound to a user, by user id. */
  rulesByUserId: Map<string, ApiRule[]>;
  deviceKeyOf: Map<ApiDevice, string>;
  ruleKeyOf: Map<ApiRule, string>;
  /** Owner email of a rule (null for a global rule); an unknown owner shows as `#<id>`. */
  ruleOwnerOf(rule: ApiRule): string | null;
  deviceOwnerOf(device: ApiDevice): string;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** One object per key; a second one with the same key is recorded under `duplicates`, never dropped. */
function indexByKey<V extends ApiUser | ApiDevice | ApiRule>(
  map: Map<string, V>,
  duplicates: LiveIndex['duplicates'],
  kind: string,
  key: string,
  value: V,
): void {
  const first = map.get(key);
  if (first === undefined) {
    map.set(key, value);
    return;
  }
  const list = duplicates.get(`${kind}:${key}`);
  if (list) list.push(value);
  else duplicates.set(`${kind}:${key}`, [first, value]);
}

/**
 * The index of each live state's lists, built once: the planner, `--target`, the state after apply
 * and the saved-plan check read the same lists (the same arrays, whatever object holds them: a
 * state with its configuration added is a copy). A live state's lists are never changed once read.
 */
const indexes = new WeakMap<
  LiveState['rules'],
  { users: LiveState['users']; devices: LiveState['devices']; index: LiveIndex }
>();

export function indexLiveState(live: LiveState): LiveIndex {
  const known = indexes.get(live.rules);
  if (known && known.users === live.users && known.devices === live.devices) return known.index;
  const index = buildLiveIndex(live);
  indexes.set(live.rules, { users: live.users, devices: live.devices, index });
  return index;
}

function buildLiveIndex(live: LiveState): LiveIndex {
  const duplicates: LiveIndex['duplicates'] = new Map();
  const usersByKey = new Map<string, ApiUser>();
  const usersById = new Map<string, ApiUser>();
  for (const user of live.users) {
    indexByKey(usersByKey, duplicates, 'user', userKey(user.email), user);
    usersById.set(user.id, user);
  }
  const deviceOwnerOf = (device: ApiDevice) => usersById.get(device.user_id)?.email ?? `#${device.user_id}`;
  const ruleOwnerOf = (rule: ApiRule) =>
    rule.user_id === null ? null : (usersById.get(rule.user_id)?.email ?? `#${rule.user_id}`);
  // Each owner's key once, not once per device and rule.
  const ownerKeys = new Map<string, string>();
  const ownerKeyOf = (userId: string, email: string): string => {
    let key = ownerKeys.get(userId);
    if (key === undefined) ownerKeys.set(userId, (key = userKey(email)));
    return key;
  };

  const devicesByKey = new Map<string, ApiDevice>();
  const devicesByUserId = new Map<string, ApiDevice[]>();
  const deviceKeyOf = new Map<ApiDevice, string>();
  const devicesById = new Map<string, ApiDevice>();
  for (const device of live.devices) {
    devicesById.set(device.id, device);
    const key = deviceKeyOfOwnerKey(ownerKeyOf(device.user_id, deviceOwnerOf(device)), device.name);
    deviceKeyOf.set(device, key);
    indexByKey(devicesByKey, duplicates, 'device', key, device);
    push(devicesByUserId, device.user_id, device);
  }

  const rulesByKey = new Map<string, ApiRule>();
  const rulesByUserId = new Map<string, ApiRule[]>();
  const ruleKeyOf = new Map<ApiRule, string>();
  const rulesById = new Map<string, ApiRule>();
  for (const rule of live.rules) {
    rulesById.set(rule.id, rule);
    const key = liveRuleKey(rule, ruleOwnerOf(rule));
    ruleKeyOf.set(rule, key);
    indexByKey(rulesByKey, duplicates, 'rule', key, rule);
    if (rule.user_id !== null) push(rulesByUserId, rule.user_id, rule);
  }
  return {
    usersByKey,
    usersById,
    devicesByKey,
    devicesById,
    devicesByUserId,
    rulesByKey,
    duplicates,
    rulesById,
    rulesByUserId,
    deviceKeyOf,
    ruleKeyOf,
    ruleOwnerOf,
    deviceOwnerOf,
  };
}

export function liveRuleKey(
  rule: Pick<ApiRule, 'action' | 'destination' | 'port_type' | 'port_range'>,
  ownerEmail: string | null,
): string {
  return ruleKey({
    ownerEmail,
    action: rule.action,
    destination: rule.destination,
    port_type: rule.port_type,
    port_range: rule.port_range,
  });
}

/** `accept 10.1.0.0/16 tcp 443 (alice@example.com)`: a rule as people read it. */
export function ruleLabel(
  rule: { action: string; destination: string; port_type: PortType | null; port_range: string | null },
  ownerEmail: string | null,
): string {
  const range = normalizePortRange(rule.port_range);
  const [low, high] = range ? range.split(' - ') : [];
  const ports = rule.port_type || range ? ` ${rule.port_type ?? '?'} ${low === high ? low : `${low}-${high}`}` : '';
  return `${rule.action} ${normalizeDestination(rule.destination)}${ports} (${ownerEmail ?? 'global'})`;
}

/** The live object of a kind with an id, if the server has it. */
export function liveObjectById(
  index: LiveIndex,
  kind: 'user' | 'device' | 'rule',
  id: string,
): ApiUser | ApiDevice | ApiRule | undefined {
  return kind === 'user'
    ? index.usersById.get(id)
    : kind === 'device'
      ? index.devicesById.get(id)
      : index.rulesById.get(id);
}
