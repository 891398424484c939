/**
 * What adopt writes, worked out from a plan of the files against the server: the plan says what
 * differs (an update's fields, a declared object the server lacks, a live object no file declares),
 * and adopt writes the live side of each difference into the files, as small edits
 * (text-edit.ts). It runs in phases, each on a fresh plan of the files as edited so far: renames
 * by hand first (so that the renamed user's own differences are seen on it), then the
 * differences, then the removals (`--remove-deleted`).
 */
import type { Document } from 'yaml';
import {
  USE_DEFAULT_FLAGS,
  WRITABLE_DEVICE_FIELDS,
  isDefaultableField,
  fieldOfFlag,
} from '../../model/device-fields.js';
import { ruleKeyOfOwnerKey, userKey } from '../../model/keys.js';
import type {
  DesiredDevice,
  DesiredRule,
  DesiredState,
  DesiredUser,
  LiveState,
  SourceLocation,
} from '../../model/state.js';
import type { ApiDevice, ApiRule } from '../../model/types.js';
import { indexLiveState, type LiveIndex } from '../../plan/live-index.js';
import { buildScope } from '../../plan/scope.js';
import type { Change, Plan } from '../../plan/types.js';
import { userFileName, GLOBAL_RULES_FILE_NAME } from '../export/files.js';
import { deviceToYaml, ruleToYaml, userToYaml, type Mapping, type Plain } from '../export/mapping.js';
import { acknowledgementsOf, matchesAcknowledgement } from './acknowledged.js';
import { expiredGrant, expiredStillLive, roleExpired } from './expiry.js';
import type { AdoptFiles } from './files.js';
import { isMap, isSeq, newDocumentText, type YAMLMap } from './text-edit.js';
import type { AdoptNote, AdoptSelection, Placement } from './types.js';

export type AdoptPhase = 'rename' | 'adopt' | 'remove';

export interface AdoptOptions {
  selection: AdoptSelection;
  removeDeleted: boolean;
  /** `--into FILE`: the path where new objects go that no declared user holds. */
  into?: string;
  /** The run's instant, for expiries. */
  now: Date;
}

/** mappingFor's answer per desired state: every device of the files is looked at once, not per edit. */
const mappings = new WeakMap<DesiredState, Mapping>();

/** Export's mapping of live values: defaults left out; addresses pinned when the files pin any. */
export function mappingFor(desired: DesiredState): Mapping {
  let mapping = mappings.get(desired);
  if (mapping) return mapping;
  const pinned = desired.users.some((u) =>
    u.devices.some((d) => d.fields.ipv4 !== undefined || d.fields.ipv6 !== undefined),
  );
  mapping = { pinAddresses: pinned, explicitDefaults: false };
  mappings.set(desired, mapping);
  return mapping;
}

/** The device fields in the order a declaration writes them: a new field goes after those before it. */
const DEVICE_ORDER = ['name', 'renamed_from', ...WRITABLE_DEVICE_FIELDS];
const USER_ORDER = ['email', 'renamed_from', 'role'];

function before(order: readonly string[], field: string): string[] {
  const at = order.indexOf(field);
  return at === -1 ? [...order] : order.slice(0, at);
}

/** The declarations of the files by key, with where each stands. */
interface Declared {
  users: Map<string, DesiredUser>;
  devices: Map<string, { device: DesiredDevice; user: DesiredUser }>;
  rules: Map<string, { rule: DesiredRule; user: DesiredUser | null }>;
}

function declaredOf(desired: DesiredState): Declared {
  const declared: Declared = { users: new Map(), devices: new Map(), rules: new Map() };
  for (const user of desired.users) {
    const key = userKey(user.email);
    declared.users.set(key, user);
    for (const device of user.devices) declared.devices.set(`${key}/${device.name.trim()}`, { device, user });
    for (const rule of user.rules) declared.rules.set(ruleKeyOfOwnerKey(key, rule), { rule, user });
  }
  for (const rule of desired.rules) declared.rules.set(ruleKeyOfOwnerKey(null, rule), { rule, user: null });
  return declared;
}

/** A change's object in the files, found by where the loader saw it. */
function sourceOf(change: Pick<Change, 'kind' | 'key'>, declared: Declared): SourceLocation | undefined {
  if (change.kind === 'user') return declared.users.get(change.key)?.source;
  if (change.kind === 'device') return declared.devices.get(change.key)?.device.source;
  if (change.kind === 'rule') return declared.rules.get(change.key)?.rule.source;
  return undefined;
}

/** The owner key of a change id's object: `device:alice@x/laptop` -> `alice@x`; a global rule: null. */
function ownerOf(id: string): string | null {
  const colon = id.indexOf(':');
  const kind = id.slice(0, colon);
  const key = id.slice(colon + 1);
  if (kind === 'user') return key;
  if (kind === 'device') return key.slice(0, key.lastIndexOf('/'));
  if (kind === 'rule') {
    const owner = key.split('|')[0]!;
    return owner === '*' ? null : owner;
  }
  return null;
}

export class AdoptEngine {
  readonly notes: AdoptNote[] = [];
  /** Ids already reported as left (deleted, secret, ...), so that later rounds do not repeat them. */
  readonly #reported = new Set<string>();
  #declared!: Declared;
  #index!: LiveIndex;
  #desired!: DesiredState;
  #live!: LiveState;

  constructor(
    readonly files: AdoptFiles,
    readonly options: AdoptOptions,
  ) {}

  selected(id: string): boolean {
    const { selection } = this.options;
    if (selection.all) return true;
    if (selection.ids.has(id)) return true;
    const owner = ownerOf(id);
    return owner !== null && !id.startsWith('user:') && selection.ids.has(`user:${owner}`);
  }

  /** One phase of edits on the files as they are now, against `plan` of them. Whether anything was edited. */
  run(phase: AdoptPhase, desired: DesiredState, live: LiveState, plan: () => Plan): boolean {
    // A round that edited nothing leaves the next one the same files; the server is read once.
    if (desired !== this.#desired) this.#declared = declaredOf(desired);
    if (live !== this.#live) this.#index = indexLiveState(live);
    this.#desired = desired;
    this.#live = live;
    if (phase === 'rename') this.#renames();
    else if (phase === 'adopt') this.#adopt(plan());
    else this.#removals(plan());
    return this.files.endRound();
  }

  #note(note: AdoptNote): void {
    const id = `${note.kind}:${note.id}:${'field' in note ? note.field : ''}`;
    if (note.kind !== 'updated' && note.kind !== 'added' && this.#reported.has(id)) return;
    this.#reported.add(id);
    this.notes.push(note);
  }

  /** The mapping a declaration stands in, in its file's current text. */
  #mapAt(source: SourceLocation | undefined): { map: YAMLMap; file: string } | null {
    if (!source?.path || !this.files.has(source.file)) return null;
    const map = this.files.editor(source.file).mapAt(source.line, source.column, source.path);
    return map ? { map, file: source.file } : null;
  }

  // --- renames by hand ----------------------------------------------------------------------

  /**
   * A declared user the server lacks, while a live user no file declares holds every one of its
   * declared devices (by public key): renamed by hand. Written as the new email with
   * `renamed_from`. Found before planning: the planner refuses to plan such a state (it would be
   * a delete and a create).
   */
  #renames(): void {
    const declaredKeys = new Set(this.#declared.users.keys());
    for (const user of this.#desired.users) {
      if (user.renamed_from !== undefined) declaredKeys.add(userKey(user.renamed_from));
    }
    const undeclared = this.#live.users.filter((live) => !declaredKeys.has(userKey(live.email)));
    for (const [key, user] of this.#declared.users) {
      if (this.#index.usersByKey.has(key)) continue;
      if (user.renamed_from !== undefined && this.#index.usersByKey.has(userKey(user.renamed_from))) continue;
      const keys = user.devices.map((d) => d.fields.public_key).filter((k): k is string => typeof k === 'string');
      if (keys.length === 0 || keys.length !== user.devices.length) continue;
      const candidates = undeclared.filter((live) => {
        const held = new Set((this.#index.devicesByUserId.get(live.id) ?? []).map((d) => d.public_key));
        return keys.every((k) => held.has(k));
      });
      if (candidates.length !== 1) continue;
      const live = candidates[0]!;
      const oldId = `user:${key}`;
      const newId = `user:${userKey(live.email)}`;
      if (!this.selected(oldId) && !this.selected(newId)) continue;
      if (this.#protected(newId)) continue;
      const at = this.#mapAt(user.source);
      if (!at) continue;
      const editor = this.files.editor(at.file);
      editor.setField(at.map, 'email', live.email);
      editor.setField(at.map, 'renamed_from', user.email, ['email']);
      this.#note({ kind: 'renamed', id: newId, from: user.email, file: at.file });
      this.#acknowledged(oldId, ['*']);
    }
  }

  // --- the differences ----------------------------------------------------------------------

  /** A selected object of a protected user: listed, never written. */
  #protected(id: string): boolean {
    const owner = ownerOf(id);
    if (owner === null || !buildScope(this.#desired.settings).isProtected(owner)) return false;
    this.#note({ kind: 'protected', id });
    return true;
  }

  /**
   * A field whose value carries an anchor (`&name`) that other values may refer to: rewriting it
   * would change them too, so it is listed for a person to edit.
   */
  #anchored(id: string, map: YAMLMap, keys: readonly string[]): boolean {
    for (const key of keys) {
      const anchor = (map.get(key, true) as { anchor?: string } | undefined)?.anchor;
      if (anchor === undefined) continue;
      this.#note({
        kind: 'not-adoptable',
        id,
        what: `its ${key}, whose value is the anchor &${anchor} other values may use: edit it by hand`,
      });
      return true;
    }
    return false;
  }

  #adopt(plan: Plan): void {
    this.#expiredGrants();
    for (const change of plan.changes) {
      if (!this.selected(change.id) || this.#protected(change.id)) continue;
      if (change.kind === 'configuration') this.#updateConfiguration(change);
      else if (change.action === 'update' || change.action === 'replace') {
        if (change.kind === 'user') this.#updateUser(change);
        else if (change.kind === 'device') this.#updateDevice(change);
      } else if (change.action === 'create') {
        const source = sourceOf(change, this.#declared);
        if (!this.options.removeDeleted && source && !this.#coveredByOwner(change, plan) && !this.#gone(source))
          this.#note({ kind: 'deleted', id: change.id, file: source.file });
      }
    }
    for (const item of plan.undeclared ?? []) {
      const id = `${item.kind}:${item.key}`;
      if (!this.selected(id) || this.#protected(id)) continue;
      if (item.kind === 'user') this.#addUser(id, item.liveId);
      else if (item.kind === 'device') this.#addDevice(id, item.liveId);
      else if (item.kind === 'rule') this.#addRule(id, item.liveId);
    }
    for (const item of plan.outcome?.kept ?? []) {
      if (item.reason === 'protected' && item.id && this.selected(item.id))
        this.#note({ kind: 'protected', id: item.id });
    }
  }

  /** A device or rule created along with its user: its user stands for it. */
  #coveredByOwner(change: Change, plan: Plan): boolean {
    if (change.kind === 'user') return false;
    const owner = ownerOf(change.id);
    return owner !== null && plan.changes.some((c) => c.id === `user:${owner}` && c.action === 'create');
  }

  /**
   * The grants expired at the run's instant that the server still holds: the state in effect
   * deletes or demotes them, the files still declare them; listed, never written. An expired
   * user stands for its devices and rules, unless they are named.
   */
  #expiredGrants(): void {
    const { selection } = this.options;
    for (const grant of expiredStillLive(this.#desired, this.#index, this.options.now)) {
      const ids = [grant.id];
      if (grant.user && !selection.all) {
        const owner = ownerOf(grant.id);
        ids.push(...[...selection.ids].filter((id) => id !== grant.id && ownerOf(id) === owner));
      }
      for (const id of ids) {
        if (this.selected(id) && !this.#protected(id)) this.#note({ kind: 'expired', id, since: grant.since });
      }
    }
  }

  /** A declaration the server lacks because its grant expired (and was deleted): nothing differs in effect. */
  #gone(source: SourceLocation): boolean {
    const at = this.#mapAt(source);
    return at !== null && expiredGrant(at.map, [], this.options.now) !== null;
  }

  #expired(id: string, map: YAMLMap, fields: string[]): boolean {
    const since = expiredGrant(map, fields, this.options.now);
    if (since === null) return false;
    this.#note({ kind: 'expired', id, since });
    return true;
  }

  #updateUser(change: Change): void {
    const live = change.liveId ? this.#index.usersById.get(change.liveId) : undefined;
    const at = this.#mapAt(this.#declared.users.get(change.key)?.source);
    if (!live || !at) return;
    // A role already demoted at its role_expires: the expiry was carried out, nothing differs in effect.
    const changed = change.fields.filter(
      (f) => !(f.field === 'role' && live.role !== 'admin' && roleExpired(at.map, this.options.now)),
    );
    if (changed.length === 0) return;
    const fields = changed.map((f) => f.field);
    if (this.#expired(change.id, at.map, fields)) return;
    const editor = this.files.editor(at.file);
    const written: string[] = [];
    for (const field of changed) {
      if (field.sensitive) this.#note({ kind: 'secret', id: change.id, field: field.field });
      else if (field.field === 'role') {
        if (this.#anchored(change.id, at.map, ['role'])) continue;
        editor.setField(at.map, 'role', live.role, before(USER_ORDER, 'role'));
        written.push('role');
      } else this.#note({ kind: 'not-adoptable', id: change.id, what: `its ${field.field}` });
    }
    this.#written(change.id, at.file, written);
  }

  /** The server configuration's fields the files give, set to the live values (a null one is listed). */
  #updateConfiguration(change: Change): void {
    const at = this.#mapAt(this.#desired.configuration?.source);
    if (!at) return;
    const editor = this.files.editor(at.file);
    const written: string[] = [];
    for (const { field, before: live, sensitive } of change.fields) {
      if (sensitive) this.#note({ kind: 'secret', id: change.id, field });
      else if (live === null || live === undefined)
        this.#note({ kind: 'not-adoptable', id: change.id, what: `its ${field}, which the server does not give` });
      else if (!this.#anchored(change.id, at.map, [field])) {
        editor.setField(at.map, field, live);
        written.push(field);
      }
    }
    this.#written(change.id, at.file, written);
  }

  #updateDevice(change: Change): void {
    const live = change.liveId ? this.#index.devicesById.get(change.liveId) : undefined;
    const declared = this.#declared.devices.get(change.key);
    const at = this.#mapAt(declared?.device.source);
    if (!live || !at || !declared) return;
    const owner = this.#mapAt(declared.user.source);
    const fields = change.fields.map((f) => f.field);
    if (this.#expired(change.id, at.map, fields) || (owner && this.#expired(change.id, owner.map, []))) return;
    const editor = this.files.editor(at.file);
    const values = deviceToYaml(live, mappingFor(this.#desired));
    const has = (key: string) => at.map.has(key);
    const written = new Set<string>();
    for (const { field, sensitive } of change.fields) {
      if (sensitive || field === 'preshared_key') {
        this.#note({ kind: 'secret', id: change.id, field });
        continue;
      }
      const group = isDefaultableField(field) ? field : fieldOfFlag(field);
      const flagOf = group === undefined ? undefined : USE_DEFAULT_FLAGS.find(([f]) => f === group)![1];
      if (this.#anchored(change.id, at.map, group && flagOf ? [group, flagOf] : [field])) continue;
      if (field === 'name') {
        editor.setField(at.map, 'name', live.name);
        if (has('renamed_from')) editor.deleteField(at.map, 'renamed_from');
        written.add('name');
        continue;
      }
      if (group === undefined || flagOf === undefined) {
        if (!(WRITABLE_DEVICE_FIELDS as readonly string[]).includes(field)) {
          this.#note({ kind: 'not-adoptable', id: change.id, what: `its ${field}` });
          continue;
        }
        if (values[field] !== undefined) editor.setField(at.map, field, values[field], before(DEVICE_ORDER, field));
        else if (has(field)) editor.deleteField(at.map, field);
        written.add(field);
        continue;
      }
      if (written.has(group)) continue;
      written.add(group);
      const flag = flagOf;
      if (values[group] !== undefined) {
        editor.setField(at.map, group, values[group], before(DEVICE_ORDER, group));
        if (has(flag)) editor.setField(at.map, flag, false);
      } else if (values[flag] === false) {
        editor.setField(at.map, flag, false, before(DEVICE_ORDER, flag));
        if (has(group)) editor.deleteField(at.map, group);
      } else {
        if (has(group)) editor.deleteField(at.map, group);
        if (has(flag)) editor.setField(at.map, flag, true);
      }
    }
    this.#written(change.id, at.file, [...written]);
  }

  #written(id: string, file: string, fields: string[]): void {
    if (fields.length === 0) return;
    this.#note({ kind: 'updated', id, file, fields });
    this.#acknowledged(id, fields);
  }

  // --- new objects --------------------------------------------------------------------------

  /** Where a new object goes that no declared user holds: --into, a file of global rules (rules), export --split's file. */
  #placeNew(kind: 'user' | 'rule', name: string): { file: string; placement: Placement; create?: string } {
    const { into } = this.options;
    if (into !== undefined) {
      const display = this.files.displayOf(into);
      return this.files.has(display)
        ? { file: display, placement: 'into' }
        : { file: display, placement: 'into', create: into };
    }
    if (this.files.folder === null) return { file: this.files.list[0]!.display, placement: 'single' };
    if (kind === 'rule') {
      const holder = this.files.list.find((f) => this.#rootOf(f.display)?.has('rules'));
      if (holder) return { file: holder.display, placement: 'rules-file' };
    }
    const path = this.files.pathInFolder(name);
    const display = this.files.displayOf(path);
    return this.files.has(display)
      ? { file: display, placement: 'split' }
      : { file: display, placement: 'split', create: path };
  }

  #rootOf(file: string): YAMLMap | null {
    const editor = this.files.editor(file);
    const contents = (editor.documents[0] as Document.Parsed | undefined)?.contents;
    return isMap(contents) ? contents : null;
  }

  /** Appends an item to the top-level list `key` of `file`, or creates the file with it. */
  #appendTop(place: { file: string; create?: string }, key: 'users' | 'rules', item: Plain): boolean {
    if (place.create !== undefined) {
      this.files.create(place.create, newDocumentText(this.#desired.version ?? 1, key, [item]));
      return true;
    }
    const root = this.#rootOf(place.file);
    if (!root) return false;
    const list = root.get(key, true) as unknown;
    const spaced = isSeq(list) && list.items.some((i) => isMap(i) && i.spaceBefore === true);
    this.files.editor(place.file).appendItem(root, key, item, { spaced });
    return true;
  }

  #addUser(id: string, liveId: string): void {
    const user = this.#index.usersById.get(liveId);
    if (!user) return;
    const entry = {
      user,
      key: userKey(user.email),
      devices: [...(this.#index.devicesByUserId.get(user.id) ?? [])].sort((a, b) => a.name.localeCompare(b.name)),
      rules: this.#index.rulesByUserId.get(user.id) ?? [],
    };
    const place = this.#placeNew('user', userFileName(user.email));
    if (!this.#appendTop(place, 'users', userToYaml(entry, mappingFor(this.#desired)))) return;
    this.#added(id, place.file, place.placement, place.create !== undefined);
  }

  #addDevice(id: string, liveId: string): void {
    const device: ApiDevice | undefined = this.#index.devicesById.get(liveId);
    const owner = device ? this.#declared.users.get(userKey(this.#index.deviceOwnerOf(device))) : undefined;
    const at = this.#mapAt(owner?.source);
    if (!device || !at) return;
    if (this.#expired(id, at.map, [])) return;
    this.files.editor(at.file).appendItem(at.map, 'devices', deviceToYaml(device, mappingFor(this.#desired)));
    this.#added(id, at.file, 'user-file', false);
  }

  #addRule(id: string, liveId: string): void {
    const rule: ApiRule | undefined = this.#index.rulesById.get(liveId);
    if (!rule) return;
    if (rule.user_id === null) {
      const place = this.#placeNew('rule', GLOBAL_RULES_FILE_NAME);
      if (this.#appendTop(place, 'rules', ruleToYaml(rule)))
        this.#added(id, place.file, place.placement, place.create !== undefined);
      return;
    }
    const owner = this.#declared.users.get(userKey(this.#index.ruleOwnerOf(rule) ?? ''));
    const at = this.#mapAt(owner?.source);
    if (!at) return;
    if (this.#expired(id, at.map, [])) return;
    this.files.editor(at.file).appendItem(at.map, 'rules', ruleToYaml(rule));
    this.#added(id, at.file, 'user-file', false);
  }

  #added(id: string, file: string, placement: Placement, created: boolean): void {
    this.#note({ kind: 'added', id, file, placement, created });
    this.#acknowledged(id, ['*']);
  }

  // --- removals -----------------------------------------------------------------------------

  #removals(plan: Plan): void {
    if (!this.options.removeDeleted) return;
    for (const change of plan.changes) {
      if (change.action !== 'create' || change.kind === 'configuration' || !this.selected(change.id)) continue;
      if (this.#coveredByOwner(change, plan)) continue;
      const source = sourceOf(change, this.#declared);
      if (!source?.path || !this.files.has(source.file)) continue;
      const editor = this.files.editor(source.file);
      const located = editor.locate(editor.documentAt(source.line), source.path);
      if (!located || !isMap(located.node)) continue;
      if (this.#expired(change.id, located.node, [])) continue;
      editor.removeItem(located);
      this.#note({ kind: 'removed', id: change.id, file: source.file });
      this.#acknowledged(change.id, ['*']);
    }
  }

  // --- acknowledgements ---------------------------------------------------------------------

  /**
   * The files holding `acknowledged:` entries, as the loader read them (null: some entry's file is
   * not known, every file is looked at): the others are not parsed whole to find none.
   */
  #acknowledging(): Set<string> | null {
    const files = new Set<string>();
    for (const entry of this.#desired.acknowledged ?? []) {
      if (!entry.source) return null;
      files.add(entry.source.file);
    }
    return files;
  }

  /** Removes the `acknowledged:` entries of a difference now adopted, in the same edit. */
  #acknowledged(id: string, fields: readonly string[]): void {
    const acknowledging = this.#acknowledging();
    for (const file of this.files.list) {
      if (acknowledging && !acknowledging.has(file.display)) continue;
      const root = this.#rootOf(file.display);
      if (!root) continue;
      for (const entry of acknowledgementsOf(root)) {
        if (!matchesAcknowledgement(entry.value, id, fields)) continue;
        this.files.editor(file.display).removeItem(entry.located);
        this.#note({ kind: 'acknowledgement-removed', id, file: file.display });
      }
    }
  }

  #known(id: string, key: string, index: LiveIndex, declared: Declared): boolean {
    if (id === 'configuration') return this.#desired.configuration !== undefined;
    if (id.startsWith('user:')) return index.usersByKey.has(key) || declared.users.has(key);
    if (id.startsWith('device:')) return index.devicesByKey.has(key) || declared.devices.has(key);
    return index.rulesByKey.has(key) || declared.rules.has(key);
  }

  /** Notes for named keys that nothing was done for: protected, outside manage, matching, unknown. */
  explainUntouched(desired: DesiredState, live: LiveState): void {
    const { selection } = this.options;
    if (selection.all) return;
    const touched = new Set(this.notes.map((n) => n.id));
    const scope = buildScope(desired.settings);
    const index = indexLiveState(live);
    const declared = declaredOf(desired);
    for (const id of selection.ids) {
      if (touched.has(id) || [...touched].some((t) => ownerOf(t) !== null && `user:${ownerOf(t)}` === id)) continue;
      const owner = ownerOf(id);
      const key = id.slice(id.indexOf(':') + 1);
      if (owner !== null && !scope.managesUser(owner)) this.#note({ kind: 'outside-manage', id });
      else if (owner !== null && scope.isProtected(owner)) this.#note({ kind: 'protected', id });
      else if (this.#known(id, key, index, declared)) this.#note({ kind: 'matches', id });
      else this.#note({ kind: 'unknown', id });
    }
  }
}
