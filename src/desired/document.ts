/**
 * Reads one schema-checked document (a YAML document, or a translated CDKTF stack) into declarations with their source locations.
 * Values the schema refused are left out (their error is already reported), so that the domain
 * checks run on everything else and one run reports every problem. Secrets are resolved here.
 */
import { dirname } from 'node:path';
import type { Secret, SecretRef } from '../model/secret.js';
import type {
  AbsentDevice,
  DesiredConfiguration,
  DesiredDevice,
  DesiredTest,
  DesiredDeviceFields,
  DesiredRule,
  DesiredSettings,
  DesiredUser,
  Limit,
  SourceLocation,
} from '../model/state.js';
import { MANAGED_CONFIGURATION_FIELDS, type ManagedConfiguration } from '../model/configuration.js';
import { WRITABLE_DEVICE_FIELDS } from '../model/device-fields.js';
import { parseInstant } from '../model/instant.js';
import { instantProblemText } from '../views/model-instant.js';
import { defaultSettings, IGNORABLE_DEVICE_FIELDS, IGNORABLE_USER_FIELDS } from '../model/state.js';
import type { PortType, Role, RuleAction } from '../model/types.js';
import type { OwnerEntry } from '../model/owners.js';
import type { SchemaResult } from './schema.js';
import { readLifecycle } from './acknowledged.js';
import type { DesiredAcknowledgement, DesiredForget } from '../model/lifecycle.js';
import { lazySecret, probeSecret, SecretResolutionError, type Environment, type SecretField } from './secrets.js';

/** Which commands read a secret of each field, for the warning when it cannot be read. */
const NEEDED_BY: Record<SecretField, string> = {
  password: 'read only when it is sent: when plan or apply creates the user, or with --rotate-passwords',
  preshared_key: 'read by plan, apply and drift of this device, which compare it with the server',
};
import { flatText } from '../model/flat-text.js';
import { applyUseDefaultShorthand } from './shorthand.js';
import type { Diagnostic } from './types.js';
import {
  childOffset,
  childPath,
  columnAt,
  lineAt,
  offsetsOf,
  setOwn,
  type ContainerOffsets,
  type ParsedDocument,
} from './positions.js';

export interface DocumentDeclarations {
  file: string;
  /** The document's `version` (1 or 2), and where it is written. */
  version: { value: 1 | 2; source: SourceLocation };
  /** Present when the document has a usable `settings` mapping; `raw` is compared across files. */
  settings?: { value: DesiredSettings; raw: unknown; source: SourceLocation };
  /** Present when the document has a usable `configuration` mapping; `raw` is compared across files. */
  configuration?: { value: DesiredConfiguration; raw: unknown };
  users: DesiredUser[];
  rules: DesiredRule[];
  absentUsers: { email: string; source?: SourceLocation }[];
  absentDevices: AbsentDevice[];
  tests: DesiredTest[];
  /** `acknowledged:` and `forget:` (src/desired/acknowledged.ts); absent when the document has none. */
  acknowledged?: DesiredAcknowledgement[];
  forget?: DesiredForget[];
  diagnostics: Diagnostic[];
  /** Problems that do not stop the use of the files (secrets that cannot be read now, read where used). */
  warnings: Diagnostic[];
}

type Mapping = Record<string, unknown>;

/** `{ key: value }` when the value is set, else nothing: for optional members of a literal. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

const LIMIT_MESSAGE = 'must be a count of objects (such as 5) or a percentage of the live objects (such as "10%")';

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value being read: its path as people write it, where it is written, and the value itself. */
interface Place<T = unknown> {
  text: string;
  offset: number;
  value: T;
}

/**
 * What turns a document's offsets into locations: only the file's name, its line starts and its
 * labels, so that the locations kept in a DesiredState do not keep the parsed document alive.
 */
class Locator {
  readonly #file: string;
  readonly #lines: Pick<ParsedDocument, 'lineStarts'>;
  readonly #label: ((path: string) => string) | undefined;
  /**
   * The offsets of every declaration's values, one after the other (a declaration knows where its
   * own start): one typed array for the document instead of an array per declaration, which the
   * garbage collector would mark for as long as the desired state lives.
   */
  #offsets = new Int32Array(1024);
  #used = 0;
  /** The lists of value names, each kept once: most declarations of a kind name the same values. */
  readonly #names = new NameLists();

  constructor(parsed: ParsedDocument) {
    this.#file = parsed.file;
    this.#lines = { lineStarts: parsed.lineStarts };
    this.#label = parsed.label;
  }

  location(text: string, offset: number): SourceLocation {
    const path = flatText(this.#label ? this.#label(text) : text);
    if (offset === -1) return { file: this.#file, line: 1, column: 1, path };
    const line = lineAt(this.#lines, offset);
    return { file: this.#file, line, column: columnAt(this.#lines, offset, line), path };
  }

  /**
   * Keeps `[name, offset, name, offset, ...]` (or, with `own`, a mapping's own offsets, `[key,
   * keyOffset, valueOffset, ...]`, whose names are its keys): the shared list of names, and where
   * the offsets start in this document's store.
   */
  keep(values: (string | number)[], own: boolean): { names: readonly string[]; at: number } {
    const step = own ? 3 : 2;
    const count = values.length / step;
    const names = this.#names.of(values, step, own);
    if (this.#used + count > this.#offsets.length) {
      const grown = new Int32Array(Math.max(this.#offsets.length * 2, this.#used + count));
      grown.set(this.#offsets.subarray(0, this.#used));
      this.#offsets = grown;
    }
    const at = this.#used;
    for (let i = 0; i < count; i++) this.#offsets[at + i] = values[i * step + step - 1] as number;
    this.#used += count;
    return { names, at };
  }

  offsetAt(index: number): number {
    return this.#offsets[index]!;
  }
}

/**
 * Lists of value names, each kept once (a tree by name): every device declaring `name`,
 * `public_key` and `allowed_ips` shares one list.
 */
class NameLists {
  readonly #root: NameNode = { next: new Map() };

  /** The names of `values` (every `step`-th item; with `own`, the path of each key), as the one list kept for them. */
  of(values: (string | number)[], step: number, own: boolean): readonly string[] {
    let node = this.#root;
    for (let i = 0; i < values.length; i += step) {
      const name = own ? childPath('', values[i] as string) : (values[i] as string);
      let next = node.next.get(name);
      if (next === undefined) node.next.set(name, (next = { next: new Map() }));
      node = next;
    }
    if (node.names === undefined) {
      const names: string[] = [];
      for (let i = 0; i < values.length; i += step)
        names.push(flatText(own ? childPath('', values[i] as string) : (values[i] as string)));
      node.names = names;
    }
    return node.names;
  }
}

interface NameNode {
  next: Map<string, NameNode>;
  names?: readonly string[];
}

/** `users[0]` + `mtu` -> `users[0].mtu`; `users[0]` + `["a b"]` -> `users[0]["a b"]`. */
function pathBelow(base: string, relative: string): string {
  if (base === '') return relative;
  return relative.startsWith('[') ? `${base}${relative}` : `${base}.${relative}`;
}

/**
 * Where a declaration stands, and where each of its values does, the latter built on first use
 * from the offsets read with the declaration: a large file declares hundreds of thousands of
 * values, and only those a message is about are ever located. Serialises (toJSON) as the plain
 * SourceLocation it stands for.
 */
class DeclarationLocation implements SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly path?: string;
  readonly #locator: Locator;
  readonly #text: string;
  /** The path of each value relative to the declaration (shared with declarations naming the same values). */
  readonly #names: readonly string[];
  /** Where the values' offsets start in the locator's store, in the order of `#names`. */
  readonly #at: number;
  #fields: Record<string, SourceLocation> | undefined;

  /** `values`: `[name, offset, ...]`; or with `own`, the mapping's own offsets (`[key, keyOffset, valueOffset, ...]`). */
  constructor(locator: Locator, text: string, offset: number, values: (string | number)[], own = false) {
    const at = locator.location(text, offset);
    this.file = at.file;
    this.line = at.line;
    this.column = at.column;
    if (at.path !== undefined) this.path = at.path;
    this.#locator = locator;
    this.#text = at.path === text ? at.path : flatText(text);
    const kept = locator.keep(values, own);
    this.#names = kept.names;
    this.#at = kept.at;
  }

  get fields(): Record<string, SourceLocation> {
    if (this.#fields === undefined) {
      const fields: Record<string, SourceLocation> = {};
      const names = this.#names;
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!;
        const location = this.#locator.location(pathBelow(this.#text, name), this.#locator.offsetAt(this.#at + i));
        // A key of the file is any text, `__proto__` included: that one is set as an own property.
        if (name === '__proto__') setOwn(fields, name, location);
        else fields[name] = location;
      }
      this.#fields = fields;
    }
    return this.#fields;
  }

  toJSON(): SourceLocation {
    return {
      file: this.file,
      line: this.line,
      column: this.column,
      ...(this.path !== undefined ? { path: this.path } : {}),
      fields: this.fields,
    };
  }
}

/**
 * Whether a mapping's own offsets locate all a declaration records: its keys, in order, and no
 * value with entries of its own to record (a list holding strings, or a mapping named in `nested`).
 */
function ownOffsetsSuffice(own: ContainerOffsets, value: Mapping, keys: string[], nested: string[]): boolean {
  if (own.length !== 3 * keys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (own[3 * i] !== key) return false;
    const item = value[key];
    if (Array.isArray(item)) {
      for (const entry of item) if (typeof entry !== 'object') return false;
    } else if (nested.length > 0 && isMapping(item) && nested.includes(key)) return false;
  }
  return true;
}

class DocumentReader {
  readonly diagnostics: Diagnostic[] = [];
  readonly warnings: Diagnostic[] = [];
  /**
   * The paths of the values that failed the schema, and of everything that holds one: what
   * `usable` refuses. Built once, so that each check is a lookup (a file with a thousand
   * mistakes in it has tens of thousands of values to check against them).
   */
  private readonly unusable = new Set<string>();
  /** How this document's offsets become locations (shared by every DeclarationLocation of it). */
  private readonly locator: Locator;

  constructor(
    private readonly parsed: ParsedDocument,
    private readonly schema: SchemaResult,
    private readonly env: Environment,
    /** validate: a secret that cannot be read is a warning (its value is not needed to check the files). */
  ) {
    this.locator = new Locator(parsed);
    for (const faulty of schema.faulty) {
      this.unusable.add(faulty);
      for (let i = 0; i < faulty.length; i++)
        if (faulty[i] === '.' || faulty[i] === '[') this.unusable.add(faulty.slice(0, i));
    }
  }

  /** A value can be read when neither it nor anything inside it failed the schema. */
  private usable(text: string): boolean {
    return this.unusable.size === 0 || !this.unusable.has(text);
  }

  /** Whether `place.value[key]` can be read (see usable); the path is formatted only when something failed. */
  private usableField(place: Place, key: string): boolean {
    return this.unusable.size === 0 || !this.unusable.has(childPath(place.text, key));
  }

  /** An object can be built when it is a mapping with its required keys (errors inside it only drop those fields). */
  private buildable(place: Place): place is Place<Mapping> {
    return isMapping(place.value) && !this.schema.faulty.has(place.text) && !this.schema.incomplete.has(place.text);
  }

  private child(place: Place, segment: string | number, hint = 0): Place {
    const container = place.value;
    return {
      text: childPath(place.text, segment),
      offset: childOffset(this.parsed, container, place.offset, segment, hint),
      value:
        isMapping(container) || Array.isArray(container)
          ? (container as Record<string | number, unknown>)[segment]
          : undefined,
    };
  }

  private location(text: string, offset: number): SourceLocation {
    return this.locator.location(text, offset);
  }

  /** Where a value is written (its path as people write it, its offset). */
  locate(text: string, offset: number): SourceLocation {
    return this.locator.location(text, offset);
  }

  /** Where the document's `version` is written. */
  versionAt(offset: number): SourceLocation {
    return this.locator.location('version', offset);
  }

  /**
   * The object's location, with the location of each of its values (and of list entries, for lists
   * of strings). Only the values' offsets are taken now: their lines, columns and paths are worked
   * out when a check or a message first asks for them (most never are).
   */
  private source(place: Place<Mapping>, nested: string[] = []): SourceLocation {
    const { parsed } = this;
    const { value, text, offset } = place;
    const keys = Object.keys(value);
    // Most declarations need no more than where each of their own values is: the mapping's own
    // offsets say that already, in the order of its keys, and are kept as they are.
    const own = offsetsOf(parsed, value);
    if (own && ownOffsetsSuffice(own, value, keys, nested))
      return new DeclarationLocation(this.locator, text, offset, own, true);
    const values: (string | number)[] = [];
    const record = (name: string, offset: number, item: unknown): void => {
      values.push(name, offset);
      if (Array.isArray(item)) {
        for (let i = 0; i < item.length; i++)
          if (typeof item[i] !== 'object') values.push(`${name}[${i}]`, childOffset(parsed, item, offset, i));
      } else if (nested.length > 0 && isMapping(item) && nested.includes(name)) {
        for (const key of Object.keys(item))
          record(childPath(name, key), childOffset(parsed, item, offset, key), item[key]);
      }
    };
    // Keys come in source order, as the offsets do: each is found at once (hint), in one pass.
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      record(childPath('', key), childOffset(parsed, value, offset, key, 3 * i), value[key]);
    }
    return new DeclarationLocation(this.locator, text, offset, values);
  }

  private warn(place: Place, message: string): void {
    const { file, line, column, path } = this.location(place.text, place.offset);
    this.warnings.push({ file, line, column, path, message });
  }

  private error(place: Place, message: string): void {
    const { file, line, column, path } = this.location(place.text, place.offset);
    this.diagnostics.push({ file, line, column, path, message });
  }

  private list(place: Place): Place[] {
    const { value } = place;
    return Array.isArray(value) && !this.schema.faulty.has(place.text) ? value.map((_, i) => this.child(place, i)) : [];
  }

  private strings(place: Place): string[] | null {
    return Array.isArray(place.value) && this.usable(place.text) ? place.value.map(String) : null;
  }

  /** A list of field names (`ignore_changes`), those the schema allows; null when absent or refused. */
  private names<T extends string>(place: Place, allowed: readonly T[]): T[] | null {
    const list = this.strings(place);
    return list === null ? null : list.filter((name): name is T => (allowed as readonly string[]).includes(name));
  }

  /**
   * A secret reference, not read (it is read where it is sent or compared, model/secret.ts). One that
   * cannot be read now (a variable unset or empty, a file missing or empty) is a warning saying
   * which commands need it; a file that breaks a rule (outside the repository, not a regular file,
   * too large) is an error here and is never read.
   */
  private secret(place: Place, field: SecretField): Secret | undefined {
    const { value } = place;
    if (value === undefined || !this.usable(place.text) || !isMapping(value)) return undefined;
    let ref: SecretRef;
    if (typeof value.env === 'string') ref = { env: value.env };
    else if (typeof value.file === 'string') ref = { file: value.file, baseDir: dirname(this.parsed.file) };
    else if (typeof value.tfvar === 'string' && this.parsed.translated) ref = { tfvar: value.tfvar };
    else return undefined; // a reference of no known kind: the schema reported it
    try {
      const missing = probeSecret(ref, this.env);
      if (missing !== null) this.warn(place, `${missing} (${NEEDED_BY[field]})`);
    } catch (error) {
      if (!(error instanceof SecretResolutionError)) throw error;
      this.error(place, error.message);
      return undefined;
    }
    const { file, line, column } = this.location(place.text, place.offset);
    return lazySecret(ref, field, this.env, {}, `${file}:${line}:${column}`);
  }

  private limit(place: Place): Limit | undefined {
    const { value } = place;
    if (value === undefined || !this.usable(place.text)) return undefined;
    if (typeof value === 'number') {
      if (Number.isInteger(value) && value >= 0) return { kind: 'count', value };
    } else if (typeof value === 'string') {
      const match = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value);
      if (match) {
        const percent = Number(match[1]);
        if (percent <= 100) return { kind: 'percent', value: percent };
        this.error(place, 'a percentage must be between 0% and 100%');
        return undefined;
      }
    }
    this.error(place, LIMIT_MESSAGE);
    return undefined;
  }

  settings(root: Place): DocumentDeclarations['settings'] {
    const place = this.child(root, 'settings');
    if (place.value === undefined || !this.buildable(place)) return undefined;
    const { value } = place;
    const settings = defaultSettings();
    if (typeof value.prune === 'boolean' && this.usableField(place, 'prune')) settings.prune = value.prune;
    if (
      (value.device_updates === 'update' || value.device_updates === 'replace') &&
      this.usableField(place, 'device_updates')
    ) {
      settings.device_updates = value.device_updates;
    }
    const manage = this.child(place, 'manage');
    if (this.buildable(manage)) {
      settings.manage.users = this.strings(this.child(manage, 'users'));
      settings.manage.rules = this.strings(this.child(manage, 'rules'));
    }
    const protect = this.child(place, 'protect');
    if (this.buildable(protect)) {
      settings.protect.users = this.strings(this.child(protect, 'users')) ?? [];
    }
    const limits = this.child(place, 'limits');
    if (this.buildable(limits)) {
      const del = this.limit(this.child(limits, 'delete'));
      const update = this.limit(this.child(limits, 'update'));
      if (del) settings.limits.delete = del;
      if (update) settings.limits.update = update;
    }
    this.accessSettings(place, settings);
    const owners = this.owners(this.child(place, 'owners'));
    if (owners) settings.owners = owners;
    const ignore = this.child(place, 'ignore_changes');
    if (this.buildable(ignore)) {
      settings.ignore_changes = {
        users: this.names(this.child(ignore, 'users'), IGNORABLE_USER_FIELDS) ?? [],
        devices: this.names(this.child(ignore, 'devices'), IGNORABLE_DEVICE_FIELDS) ?? [],
      };
    }
    const drift = this.child(place, 'drift');
    if (this.buildable(drift)) {
      const undeclared = drift.value.undeclared;
      if (
        (undeclared === 'access' || undeclared === 'all' || undeclared === 'none') &&
        this.usableField(drift, 'undeclared')
      )
        settings.drift = { undeclared };
    }
    const source = this.source(place, ['manage', 'protect', 'limits', 'ignore_changes', 'drift', 'tunnel_networks']);
    settings.source = source;
    return { value: settings, raw: value, source };
  }

  /** `configuration:`: the fields given (those the schema accepted), with where each stands. */
  configuration(root: Place): DocumentDeclarations['configuration'] {
    const place = this.child(root, 'configuration');
    if (place.value === undefined || !this.buildable(place)) return undefined;
    const values: Record<string, unknown> = {};
    for (const field of MANAGED_CONFIGURATION_FIELDS) {
      if (place.value[field] !== undefined && this.usableField(place, field)) values[field] = place.value[field];
    }
    return { value: { values: values as ManagedConfiguration, source: this.source(place) }, raw: place.value };
  }

  /** `settings.port_rules` and `settings.server_addresses`, the access evaluator's assumptions. */
  private accessSettings(place: Place<Mapping>, settings: DesiredSettings): void {
    const { value } = place;
    if (typeof value.port_rules === 'boolean' && this.usableField(place, 'port_rules'))
      settings.port_rules = value.port_rules;
    const addresses = this.strings(this.child(place, 'server_addresses'));
    if (addresses) settings.server_addresses = addresses;
    const networks = this.child(place, 'tunnel_networks');
    if (networks.value !== undefined && this.buildable(networks)) {
      const declared: { ipv4?: string; ipv6?: string } = {};
      for (const family of ['ipv4', 'ipv6'] as const)
        if (typeof networks.value[family] === 'string' && this.usableField(networks, family))
          declared[family] = networks.value[family];
      settings.tunnel_networks = declared;
    }
  }

  /** `settings.owners`: each entry the schema accepted, with where it stands (its own values' lines). */
  private owners(place: Place): OwnerEntry[] | undefined {
    if (!Array.isArray(place.value) || !this.usable(place.text)) return undefined;
    const entries: OwnerEntry[] = [];
    place.value.forEach((_, i) => {
      const item = this.child(place, i);
      if (!this.buildable(item)) return;
      entries.push({
        blocks: this.strings(this.child(item, 'blocks')) ?? [],
        users: this.strings(this.child(item, 'users')) ?? [],
        reviewers: this.strings(this.child(item, 'reviewers')) ?? [],
        source: this.source(item),
      });
    });
    return entries;
  }

  /** One entry of `tests:`. */
  test(place: Place): DesiredTest | undefined {
    if (!this.buildable(place) || !['name', 'from', 'to', 'expect'].every((f) => this.usableField(place, f)))
      return undefined;
    const { value } = place;
    return {
      name: value.name as string,
      from: value.from as string,
      to: value.to as string,
      expect: value.expect as DesiredTest['expect'],
      source: this.source(place),
    };
  }

  rule(place: Place): DesiredRule | undefined {
    if (!this.buildable(place) || !this.usableField(place, 'action') || !this.usableField(place, 'destination'))
      return undefined;
    const { value } = place;
    const portType =
      value.port_type !== undefined && this.usableField(place, 'port_type') ? (value.port_type as PortType) : null;
    const portRange =
      value.port_range !== undefined && this.usableField(place, 'port_range') ? String(value.port_range) : null;
    return {
      action: value.action as RuleAction,
      destination: value.destination as string,
      port_type: portType,
      port_range: portRange,
      ...optional('expires', this.instant(place, 'expires')),
      source: this.source(place),
    };
  }

  device(place: Place): DesiredDevice | undefined {
    if (!this.buildable(place) || !this.usableField(place, 'name')) return undefined;
    const { value } = place;
    const fields: Record<string, unknown> = {};
    for (const field of WRITABLE_DEVICE_FIELDS) {
      if (value[field] !== undefined && this.usableField(place, field)) fields[field] = value[field];
    }
    const device: DesiredDevice = {
      name: value.name as string,
      fields: applyUseDefaultShorthand(fields as DesiredDeviceFields),
      source: this.source(place),
    };
    const presharedKey =
      value.preshared_key === undefined ? undefined : this.secret(this.child(place, 'preshared_key'), 'preshared_key');
    if (presharedKey) device.preshared_key = presharedKey;
    const ignored = this.names(this.child(place, 'ignore_changes'), IGNORABLE_DEVICE_FIELDS);
    if (ignored && ignored.length > 0) device.ignore_changes = ignored;
    this.renamedFrom(place, device);
    const expires = this.instant(place, 'expires');
    if (expires !== undefined) device.expires = expires;
    return device;
  }

  /**
   * `expires:` or `role_expires:`: kept as written (the effective state judges it at the run's
   * instant, src/desired/expiry.ts); one that is not a date or a date-time with an offset is an error.
   */
  private instant(place: Place<Mapping>, key: 'expires' | 'role_expires'): string | undefined {
    const value = place.value[key];
    if (value === undefined || !this.usableField(place, key)) return undefined;
    const parsed = parseInstant(value);
    if (parsed.ok) return value as string;
    this.error(this.child(place, key), `${key}: ${instantProblemText(parsed.problem)}`);
    return undefined;
  }

  /** `renamed_from: OLD` on a user (old email) or a device (old name), with its own position. */
  private renamedFrom(place: Place<Mapping>, into: { renamed_from?: string; source?: SourceLocation }): void {
    const value = place.value.renamed_from;
    if (typeof value !== 'string' || !this.usableField(place, 'renamed_from')) return;
    // Its position is among the values the declaration's source records (fields.renamed_from).
    into.renamed_from = value;
  }

  user(place: Place): DesiredUser | undefined {
    if (!this.buildable(place) || !this.usableField(place, 'email')) return undefined;
    const { value } = place;
    const user: DesiredUser = { email: value.email as string, devices: [], rules: [], source: this.source(place) };
    if (value.role !== undefined && this.usableField(place, 'role')) user.role = value.role as Role;
    const expires = this.instant(place, 'expires');
    if (expires !== undefined) user.expires = expires;
    const roleExpires = this.instant(place, 'role_expires');
    if (roleExpires !== undefined) {
      if (user.role === 'admin') user.role_expires = roleExpires;
      else
        this.error(
          this.child(place, 'role_expires'),
          'role_expires: only beside role: admin (it says when the role ends)',
        );
    }
    const password = value.password === undefined ? undefined : this.secret(this.child(place, 'password'), 'password');
    if (password) user.password = password;
    const ignored = this.names(this.child(place, 'ignore_changes'), IGNORABLE_USER_FIELDS);
    if (ignored && ignored.length > 0) user.ignore_changes = ignored;
    this.renamedFrom(place, user);
    if (value.devices !== undefined) {
      for (const item of this.list(this.child(place, 'devices'))) {
        const device = this.device(item);
        if (device) user.devices.push(device);
      }
    }
    if (value.rules !== undefined) {
      for (const item of this.list(this.child(place, 'rules'))) {
        const rule = this.rule(item);
        if (rule) user.rules.push(rule);
      }
    }
    return user;
  }

  absent(root: Place): Pick<DocumentDeclarations, 'absentUsers' | 'absentDevices'> {
    const result: Pick<DocumentDeclarations, 'absentUsers' | 'absentDevices'> = { absentUsers: [], absentDevices: [] };
    const place = this.child(root, 'absent');
    if (place.value === undefined || !this.buildable(place)) return result;
    for (const at of this.list(this.child(place, 'users'))) {
      if (typeof at.value === 'string' && this.usable(at.text))
        result.absentUsers.push({ email: at.value, source: this.location(at.text, at.offset) });
    }
    for (const at of this.list(this.child(place, 'devices'))) {
      if (this.buildable(at) && this.usableField(at, 'user') && this.usableField(at, 'name')) {
        result.absentDevices.push({
          user: at.value.user as string,
          name: at.value.name as string,
          source: this.source(at),
        });
      }
    }
    return result;
  }
}

/** The declarations of one document. Call only for a document whose root is a mapping of a supported version. */
export function readDocument(parsed: ParsedDocument, schema: SchemaResult, env: Environment): DocumentDeclarations {
  const reader = new DocumentReader(parsed, schema, env);
  const root: Place = { text: '', offset: parsed.offsets.root, value: isMapping(parsed.value) ? parsed.value : {} };
  const version = (root.value as Mapping).version === 2 ? 2 : 1;
  const declarations: DocumentDeclarations = {
    file: parsed.file,
    version: { value: version, source: reader.versionAt(childOffset(parsed, root.value, root.offset, 'version')) },
    users: [],
    rules: [],
    absentUsers: [],
    absentDevices: [],
    tests: [],
    diagnostics: reader.diagnostics,
    warnings: reader.warnings,
  };
  const settings = reader.settings(root);
  if (settings) declarations.settings = settings;
  const configuration = reader.configuration(root);
  if (configuration) declarations.configuration = configuration;
  const users = (root.value as Mapping).users;
  if (Array.isArray(users) && !schema.faulty.has('users')) {
    users.forEach((_, i) => {
      const user = reader.user(childPlace(parsed, root, 'users', i));
      if (user) declarations.users.push(user);
    });
  }
  const rules = (root.value as Mapping).rules;
  if (Array.isArray(rules) && !schema.faulty.has('rules')) {
    rules.forEach((_, i) => {
      const rule = reader.rule(childPlace(parsed, root, 'rules', i));
      if (rule) declarations.rules.push(rule);
    });
  }
  Object.assign(declarations, reader.absent(root));
  readTests(parsed, schema, reader, root, declarations.tests);
  const lifecycle = readLifecycle(
    root.value as Mapping,
    (path) => schema.faulty.has(path) || schema.incomplete.has(path),
    (list, index) => {
      const place = childPlace(parsed, root, list, index);
      return reader.locate(place.text, place.offset);
    },
    declarations.diagnostics,
  );
  if (lifecycle.acknowledged.length > 0) declarations.acknowledged = lifecycle.acknowledged;
  if (lifecycle.forget.length > 0) declarations.forget = lifecycle.forget;
  return declarations;
}

function readTests(
  parsed: ParsedDocument,
  schema: SchemaResult,
  reader: DocumentReader,
  root: Place,
  into: DesiredTest[],
): void {
  const tests = (root.value as Mapping).tests;
  if (!Array.isArray(tests) || schema.faulty.has('tests')) return;
  tests.forEach((_, i) => {
    const test = reader.test(childPlace(parsed, root, 'tests', i));
    if (test) into.push(test);
  });
}

/** The place of `root[list][index]`. */
function childPlace(parsed: ParsedDocument, root: Place, list: string, index: number): Place {
  const container = (root.value as Mapping)[list] as unknown[];
  const listOffset = childOffset(parsed, root.value, root.offset, list);
  return {
    text: `${list}[${index}]`,
    offset: childOffset(parsed, container, listOffset, index),
    value: container[index],
  };
}
