/**
 * The state after apply: what the server will hold once a plan is applied, as the access
 * evaluator reads it (docs/rule-semantics.md §9). It is the managed part as the files declare it
 * plus every live object apply leaves in place: kept because prune is off, protected, left out by
 * a guard or `--target`, or outside `manage`. Plan's tests and access changes, apply's refusal,
 * drift's "apply would" and `--after-apply` all evaluate this one state. Pure.
 *
 * Built from the plan's changes (what it deletes, replaces and creates, cascades included) over
 * the live state, so it follows the planner whatever its stages; each rule carries where it comes
 * from (`left` for a live rule apply does not touch and no file declares).
 */
import { deviceKeyOfOwnerKey, ruleKeyOfOwnerKey, userKey } from '../model/keys.js';
import type { PortType, RuleAction } from '../model/types.js';
import type { DesiredDevice, DesiredRule, DesiredState, LiveState } from '../model/state.js';
import type { Change, UndeclaredItem } from '../plan/types.js';
import type { KeptReason } from '../plan/notes.js';
import { indexLiveState } from '../plan/live-index.js';
import { buildScope, type Scope } from '../plan/scope.js';
import {
  accessSettingsOf,
  asStored,
  type AccessDevice,
  type AccessModel,
  type AccessRule,
  type AccessUser,
} from './model.js';

/**
 * The three states an access answer can be evaluated on: the declared rules alone (`files`), the
 * server as it is (`live`), and the server as apply would leave it (`after-apply`, this file).
 */
export type EvaluatedState = 'files' | 'live' | 'after-apply';

/**
 * Why apply leaves a live rule that no file declares in place:
 * - `kept`: inside the managed scope, kept by the plan (`reason`: prune is off, protected, a guard,
 *   `--target`); the repository could delete it.
 * - `outside-rules`: a global rule whose destination does not lie inside `manage.rules`;
 * - `outside-users`: a rule of a user outside `manage.users`.
 * The two `outside-` kinds are objects this repository cannot change.
 */
export type LeftKind = 'kept' | 'outside-rules' | 'outside-users';

export interface LeftInPlace {
  kind: LeftKind;
  /** For `kept`: the plan's reason (UndeclaredItem.reason), or that `--target` left its deletion out. */
  reason?: KeptReason;
}

/** A rule of the state after apply: declared by the files (`left` absent) or left in place. */
export interface AfterApplyRule extends AccessRule {
  left?: LeftInPlace;
}

/**
 * Objects later features name as known (`acknowledged:`) or let go (`forget:`): such a rule is
 * still evaluated; an acknowledged one is not listed as deciding packets, a forgotten one is listed
 * as forgotten and never counts as access drift. Both default to none.
 */
export interface LeftObjectPolicy {
  acknowledged(rule: AfterApplyRule): boolean;
  forgotten(rule: AfterApplyRule): boolean;
}

export const NO_LEFT_OBJECT_POLICY: LeftObjectPolicy = { acknowledged: () => false, forgotten: () => false };

export interface StateAfterApply {
  /** Every user (with its devices) and every rule the server holds after apply, with the files' settings. */
  model: Omit<AccessModel, 'rules'> & { rules: AfterApplyRule[] };
  /** Whether a user (email in normal form) is inside `manage.users`. */
  managesUser(key: string): boolean;
  /** `manage.rules` as given (null: every global rule is managed). */
  managedBlocks: string[] | null;
  /** The model with only the users inside `manage.users`: what the repository's `tests:` evaluate. */
  repositoryModel(): AccessModel;
  /** The rules apply leaves in place and no file declares. */
  leftRules(): AfterApplyRule[];
}

/** What the state after apply is computed from: a plan (its changes and undeclared items), the live state it was made against, the files. */
export interface AfterApplyInput {
  changes: readonly Change[];
  undeclared?: readonly UndeclaredItem[];
  live: LiveState;
  desired: DesiredState;
}

/**
 * The states already built for a live state: a plan judges the state after apply, and its access
 * delta, a reviewed apply's intersection and the `now` side of every comparison ask for the same
 * inputs again. Inputs are the same when they are the same objects (the desired state, and each
 * change and undeclared item, in order); the states are read, never changed, by every caller. A
 * few per live state, held no longer than it is.
 */
const built = new WeakMap<LiveState, { input: AfterApplyInput; state: StateAfterApply }[]>();
const KEPT_PER_LIVE_STATE = 4;

function sameItems<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
  if (a === b) return true;
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** The state the server is in once `changes` are applied to `live` (built once for the same inputs). */
export function stateAfterApply(input: AfterApplyInput): StateAfterApply {
  let states = built.get(input.live);
  if (!states) built.set(input.live, (states = []));
  for (const entry of states) {
    const seen = entry.input;
    if (
      seen.desired === input.desired &&
      sameItems(seen.changes, input.changes) &&
      sameItems(seen.undeclared, input.undeclared)
    )
      return entry.state;
  }
  const state = buildStateAfterApply(input, liveRulesAsTheyAre(states, input.desired));
  // The inputs are copied: a caller's array may grow after this call.
  states.unshift({
    input: {
      live: input.live,
      desired: input.desired,
      changes: [...input.changes],
      undeclared: input.undeclared && [...input.undeclared],
    },
    state,
  });
  if (states.length > KEPT_PER_LIVE_STATE) states.pop();
  return state;
}

/**
 * The rules of the state with no changes (the server as it is) already built for this desired
 * state, one per live rule in the live list's order: a later state shares those objects for the
 * live rules it leaves as they are, instead of building each again.
 */
function liveRulesAsTheyAre(
  states: readonly { input: AfterApplyInput; state: StateAfterApply }[],
  desired: DesiredState,
): readonly AfterApplyRule[] | undefined {
  const now = states.find(
    ({ input }) => input.desired === desired && input.changes.length === 0 && !input.undeclared?.length,
  );
  return now?.state.model.rules;
}

function buildStateAfterApply(input: AfterApplyInput, asTheyAre?: readonly AfterApplyRule[]): StateAfterApply {
  const { live, desired } = input;
  const settings = accessSettingsOf(desired);
  const scope = buildScope(desired.settings);
  const removed = removedIds(input.changes);
  const declared = declaredIndex(desired);
  // Each live rule's key as the planner built it (the same text: owner key, action, destination, ports).
  const liveRuleKeys = indexLiveState(live).ruleKeyOf;

  const users = new Map<string, AccessUser>();
  const emailOfId = new Map<string, string>();
  const deletedUsers = new Set<string>();
  for (const change of input.changes)
    if (change.kind === 'user' && change.action === 'delete') deletedUsers.add(userKey(change.key));
  for (const user of live.users) {
    const key = userKey(user.email);
    emailOfId.set(user.id, key);
    if (deletedUsers.has(key)) continue;
    const access: AccessUser = { key, email: user.email, devices: [] };
    if (user.disabled_at) access.noTunnel = `user ${user.email} is disabled (its devices have no WireGuard peer)`;
    users.set(key, access);
  }
  const updates = new Map<string, Change>();
  for (const change of input.changes)
    if (change.kind === 'device' && change.action === 'update' && change.liveId) updates.set(change.liveId, change);
  for (const device of live.devices) {
    if (removed.has(device.id)) continue;
    const owner = emailOfId.get(device.user_id);
    const user = owner === undefined ? undefined : users.get(owner);
    if (!user) continue;
    const update = updates.get(device.id);
    const renamed = update ? declared.devices.get(update.key) : undefined;
    user.devices.push(
      renamed
        ? { ...pinnedOf(renamed), name: renamed.name, ...pinnedOr(renamed, device) }
        : { name: device.name, ipv4: device.ipv4, ipv6: device.ipv6 },
    );
  }
  for (const change of input.changes) {
    if (change.kind === 'user' && change.action === 'create') {
      const key = userKey(change.key);
      const user = declared.users.get(key);
      if (user && !users.has(key)) users.set(key, { key, email: user, devices: [] });
    }
  }
  for (const change of input.changes) {
    if (change.kind !== 'device' || (change.action !== 'create' && change.action !== 'replace')) continue;
    const device = declared.devices.get(change.key);
    const owner = users.get(change.key.slice(0, change.key.lastIndexOf('/')));
    if (device && owner) owner.devices.push({ name: device.name, ...pinnedOf(device) });
  }

  const rules: AfterApplyRule[] = [];
  const keptById = new Map<string, UndeclaredItem>();
  for (const item of input.undeclared ?? []) keptById.set(item.liveId, item);
  for (let i = 0; i < live.rules.length; i++) {
    const rule = live.rules[i]!;
    if (removed.has(rule.id)) continue;
    // A rule neither removed nor kept by the plan is as it is now: the same owner, key, source and scope.
    const same = asTheyAre?.[i];
    if (
      same !== undefined &&
      same.id === rule.id &&
      !keptById.has(rule.id) &&
      (rule.user_id === null || !keptById.has(rule.user_id))
    ) {
      rules.push(same);
      continue;
    }
    const owner = rule.user_id === null ? null : (emailOfId.get(rule.user_id) ?? `#${rule.user_id}`);
    const access: AfterApplyRule = {
      owner,
      action: rule.action,
      destination: rule.destination,
      port_type: rule.port_type,
      port_range: rule.port_range,
      id: rule.id,
    };
    const key =
      rule.user_id === null || emailOfId.has(rule.user_id) ? liveRuleKeys.get(rule)! : ruleKeyOfOwnerKey(owner, rule);
    const source = declared.rules.get(key);
    const left = leftOf(rule, owner, scope, keptById);
    if (left) access.left = left;
    else if (source?.source) access.source = source.source;
    rules.push(access);
  }
  for (const change of input.changes) {
    if (change.kind !== 'rule' || change.action === 'delete') continue;
    const rule = ruleOfKey(change.key);
    if (!rule) continue;
    const source = declared.rules.get(change.key)?.source;
    // Created as the server stores it: without ports when port_rules is false (docs/rule-semantics.md §5.1.1).
    rules.push(asStored(source ? { ...rule, source } : rule, settings.portRules));
  }

  const model = { users, rules, settings };
  const managesUser = (key: string): boolean => scope.managesUser(key);
  return {
    model,
    managesUser,
    managedBlocks: desired.settings.manage.rules,
    repositoryModel: () => ({
      users: new Map([...users].filter(([key]) => managesUser(key))),
      rules,
      settings,
    }),
    leftRules: () => rules.filter((r) => r.left !== undefined),
  };
}

/** Live ids the changes delete or replace, cascades included. */
function removedIds(changes: readonly Change[]): Set<string> {
  const removed = new Set<string>();
  for (const change of changes) {
    for (const item of change.cascade ?? []) removed.add(item.liveId);
    if (change.liveId !== undefined && (change.action === 'delete' || change.action === 'replace'))
      removed.add(change.liveId);
  }
  return removed;
}

interface DeclaredIndex {
  /** User key to its email as declared. */
  users: Map<string, string>;
  devices: Map<string, DesiredDevice>;
  rules: Map<string, DesiredRule>;
}

/** Each desired state's index, built once (a plan builds two states after apply or more on one desired state). */
const declaredIndexes = new WeakMap<DesiredState, DeclaredIndex>();

function declaredIndex(desired: DesiredState): DeclaredIndex {
  let index = declaredIndexes.get(desired);
  if (!index) declaredIndexes.set(desired, (index = buildDeclaredIndex(desired)));
  return index;
}

function buildDeclaredIndex(desired: DesiredState): DeclaredIndex {
  const index: DeclaredIndex = { users: new Map(), devices: new Map(), rules: new Map() };
  for (const user of desired.users) {
    const key = userKey(user.email);
    index.users.set(key, user.email);
    for (const device of user.devices) index.devices.set(deviceKeyOfOwnerKey(key, device.name), device);
    for (const rule of user.rules) index.rules.set(ruleKeyOfOwnerKey(key, rule), rule);
  }
  for (const rule of desired.rules) index.rules.set(ruleKeyOfOwnerKey(null, rule), rule);
  return index;
}

/**
 * Why a live rule that stays is left in place, or undefined when the files declare it. A rule in
 * scope that the plan neither deletes nor lists as undeclared is one a declaration claimed.
 */
function leftOf(
  rule: { id: string; user_id: string | null; destination: string },
  owner: string | null,
  scope: Scope,
  undeclared: Map<string, UndeclaredItem>,
): LeftInPlace | undefined {
  const item = undeclared.get(rule.id) ?? (rule.user_id === null ? undefined : undeclared.get(rule.user_id));
  // An undeclared object the plan deletes that is still here was left out by --target.
  if (item) return { kind: 'kept', reason: item.fate === 'keep' ? item.reason : { code: 'target' } };
  if (owner === null) return scope.managesGlobalRule(rule.destination) ? undefined : { kind: 'outside-rules' };
  if (!scope.managesUser(owner)) return { kind: 'outside-users' };
  return undefined;
}

function pinnedOf(device: DesiredDevice): Partial<AccessDevice> {
  const out: Partial<AccessDevice> = {};
  const { ipv4, ipv6 } = device.fields as { ipv4?: string | null; ipv6?: string | null };
  if (typeof ipv4 === 'string' && ipv4 !== '') out.ipv4 = ipv4;
  if (typeof ipv6 === 'string' && ipv6 !== '') out.ipv6 = ipv6;
  return out;
}

/** A declared device's pinned addresses, else the live device's. */
function pinnedOr(device: DesiredDevice, live: { ipv4: string | null; ipv6: string | null }): Partial<AccessDevice> {
  const pinned = pinnedOf(device);
  return { ipv4: pinned.ipv4 ?? live.ipv4, ipv6: pinned.ipv6 ?? live.ipv6 };
}

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
