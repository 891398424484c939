/**
 * Reads one schema-checked YAML document into declarations with their source locations.
 * Values the schema refused are left out (their error is already reported), so that the domain
 * checks run on everything else and one run reports every problem. Secrets are resolved here.
 */
import { dirname } from 'node:path';
import { Secret, type SecretRef } from '../model/secret.js';
import type { AbsentDevice, DesiredDevice, DesiredDeviceFields, DesiredRule, DesiredSettings, DesiredUser, Limit, SourceLocation } from '../model/state.js';
import { defaultSettings } from '../model/state.js';
import type { PortType, Role, RuleAction } from '../model/types.js';
import type { SchemaResult } from './schema.js';
import { resolveSecret, SecretResolutionError, type Environment } from './secrets.js';
import { applyUseDefaultShorthand } from './shorthand.js';
import type { Diagnostic } from './types.js';
import { formatPath, locateValue, type DocPath, type ParsedDocument } from './yaml.js';

export interface DocumentDeclarations {
  file: string;
  /** Present when the document has a usable `settings` mapping; `raw` is compared across files. */
  settings?: { value: DesiredSettings; raw: unknown; source: SourceLocation };
  users: DesiredUser[];
  rules: DesiredRule[];
  absentUsers: { email: string; source?: SourceLocation }[];
  absentDevices: AbsentDevice[];
  diagnostics: Diagnostic[];
}

type Mapping = Record<string, unknown>;

const DEVICE_FIELDS = [
  'description', 'public_key', 'allowed_ips', 'dns', 'endpoint', 'mtu', 'persistent_keepalive', 'ipv4', 'ipv6',
  'use_default_allowed_ips', 'use_default_dns', 'use_default_endpoint', 'use_default_mtu', 'use_default_persistent_keepalive',
] as const satisfies readonly (keyof DesiredDeviceFields)[];

const LIMIT_MESSAGE = 'must be a count of objects (such as 5) or a percentage of the live objects (such as "10%")';

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class DocumentReader {
  readonly diagnostics: Diagnostic[] = [];
  private readonly faulty: string[];

  constructor(
    private readonly parsed: ParsedDocument,
    private readonly schema: SchemaResult,
    private readonly env: Environment,
  ) {
    this.faulty = [...schema.faulty];
  }

  /** A value can be read when neither it nor anything inside it failed the schema. */
  private usable(path: DocPath): boolean {
    const text = formatPath(path);
    return !this.faulty.some((f) => f === text || f.startsWith(`${text}.`) || f.startsWith(`${text}[`));
  }

  /** An object can be built when it is a mapping with its required keys (errors inside it only drop those fields). */
  private buildable(path: DocPath, value: unknown): value is Mapping {
    const text = formatPath(path);
    return isMapping(value) && !this.schema.faulty.has(text) && !this.schema.incomplete.has(text);
  }

  private at(path: DocPath): SourceLocation {
    const { line, column } = locateValue(this.parsed, path);
    return { file: this.parsed.file, line, column, path: formatPath(path) };
  }

  /** The object's location, with the location of each of its values (and of list entries, for lists of strings). */
  private source(path: DocPath, value: Mapping, nested: string[] = []): SourceLocation {
    const fields: Record<string, SourceLocation> = {};
    const record = (relative: (string | number)[], item: unknown): void => {
      const name = formatPath(relative);
      fields[name] = this.at([...path, ...relative]);
      if (Array.isArray(item)) item.forEach((entry, i) => typeof entry !== 'object' && (fields[formatPath([...relative, i])] = this.at([...path, ...relative, i])));
      if (isMapping(item) && nested.includes(name)) for (const [k, v] of Object.entries(item)) record([...relative, k], v);
    };
    for (const [key, item] of Object.entries(value)) record([key], item);
    return { ...this.at(path), fields };
  }

  private error(path: DocPath, message: string): void {
    const { line, column } = locateValue(this.parsed, path);
    this.diagnostics.push({ file: this.parsed.file, line, column, path: formatPath(path), message });
  }

  private list(path: DocPath, value: unknown): unknown[] {
    return Array.isArray(value) && !this.schema.faulty.has(formatPath(path)) ? value : [];
  }

  private strings(path: DocPath, value: unknown): string[] | null {
    return Array.isArray(value) && this.usable(path) ? value.map(String) : null;
  }

  private secret(path: DocPath, value: unknown): Secret | undefined {
    if (value === undefined || !this.usable(path) || !isMapping(value)) return undefined;
    let ref: SecretRef;
    if (typeof value.env === 'string') ref = { env: value.env };
    else if (typeof value.file === 'string') ref = { file: value.file, baseDir: dirname(this.parsed.file) };
    else return undefined; // a reference of no known kind: the schema reported it
    try {
      return new Secret(resolveSecret(ref, this.env), ref);
    } catch (error) {
      if (!(error instanceof SecretResolutionError)) throw error;
      this.error(path, error.message);
      return undefined;
    }
  }

  private limit(path: DocPath, value: unknown): Limit | undefined {
    if (value === undefined || !this.usable(path)) return undefined;
    if (typeof value === 'number') {
      if (Number.isInteger(value) && value >= 0) return { kind: 'count', value };
    } else if (typeof value === 'string') {
      const match = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value);
      if (match) {
        const percent = Number(match[1]);
        if (percent <= 100) return { kind: 'percent', value: percent };
        this.error(path, 'a percentage must be between 0% and 100%');
        return undefined;
      }
    }
    this.error(path, LIMIT_MESSAGE);
    return undefined;
  }

  settings(value: unknown): DocumentDeclarations['settings'] {
    const path = ['settings'];
    if (value === undefined || !this.buildable(path, value)) return undefined;
    const settings = defaultSettings();
    if (typeof value.prune === 'boolean' && this.usable([...path, 'prune'])) settings.prune = value.prune;
    if (this.buildable([...path, 'manage'], value.manage)) {
      settings.manage.users = this.strings([...path, 'manage', 'users'], value.manage.users);
      settings.manage.rules = this.strings([...path, 'manage', 'rules'], value.manage.rules);
    }
    if (this.buildable([...path, 'protect'], value.protect)) {
      settings.protect.users = this.strings([...path, 'protect', 'users'], value.protect.users) ?? [];
    }
    if (this.buildable([...path, 'limits'], value.limits)) {
      const del = this.limit([...path, 'limits', 'delete'], value.limits.delete);
      const update = this.limit([...path, 'limits', 'update'], value.limits.update);
      if (del) settings.limits.delete = del;
      if (update) settings.limits.update = update;
    }
    const source = this.source(path, value, ['manage', 'protect', 'limits']);
    settings.source = source;
    return { value: settings, raw: value, source };
  }

  rule(path: DocPath, value: unknown): DesiredRule | undefined {
    if (!this.buildable(path, value) || !this.usable([...path, 'action']) || !this.usable([...path, 'destination'])) return undefined;
    const portType = value.port_type !== undefined && this.usable([...path, 'port_type']) ? (value.port_type as PortType) : null;
    const portRange = value.port_range !== undefined && this.usable([...path, 'port_range']) ? String(value.port_range) : null;
    return {
      action: value.action as RuleAction,
      destination: value.destination as string,
      port_type: portType,
      port_range: portRange,
      source: this.source(path, value),
    };
  }

  device(path: DocPath, value: unknown): DesiredDevice | undefined {
    if (!this.buildable(path, value) || !this.usable([...path, 'name'])) return undefined;
    const fields: Record<string, unknown> = {};
    for (const field of DEVICE_FIELDS) {
      if (value[field] !== undefined && this.usable([...path, field])) fields[field] = value[field];
    }
    const device: DesiredDevice = { name: value.name as string, fields: applyUseDefaultShorthand(fields as DesiredDeviceFields), source: this.source(path, value) };
    const presharedKey = this.secret([...path, 'preshared_key'], value.preshared_key);
    if (presharedKey) device.preshared_key = presharedKey;
    return device;
  }

  user(path: DocPath, value: unknown): DesiredUser | undefined {
    if (!this.buildable(path, value) || !this.usable([...path, 'email'])) return undefined;
    const user: DesiredUser = { email: value.email as string, devices: [], rules: [], source: this.source(path, value) };
    if (value.role !== undefined && this.usable([...path, 'role'])) user.role = value.role as Role;
    const password = this.secret([...path, 'password'], value.password);
    if (password) user.password = password;
    this.list([...path, 'devices'], value.devices).forEach((item, i) => {
      const device = this.device([...path, 'devices', i], item);
      if (device) user.devices.push(device);
    });
    this.list([...path, 'rules'], value.rules).forEach((item, i) => {
      const rule = this.rule([...path, 'rules', i], item);
      if (rule) user.rules.push(rule);
    });
    return user;
  }

  absent(value: unknown): Pick<DocumentDeclarations, 'absentUsers' | 'absentDevices'> {
    const result: Pick<DocumentDeclarations, 'absentUsers' | 'absentDevices'> = { absentUsers: [], absentDevices: [] };
    const path = ['absent'];
    if (value === undefined || !this.buildable(path, value)) return result;
    this.list([...path, 'users'], value.users).forEach((email, i) => {
      const at: DocPath = [...path, 'users', i];
      if (typeof email === 'string' && this.usable(at)) result.absentUsers.push({ email, source: this.at(at) });
    });
    this.list([...path, 'devices'], value.devices).forEach((item, i) => {
      const at: DocPath = [...path, 'devices', i];
      if (this.buildable(at, item) && this.usable([...at, 'user']) && this.usable([...at, 'name'])) {
        result.absentDevices.push({ user: item.user as string, name: item.name as string, source: this.source(at, item) });
      }
    });
    return result;
  }
}

/** The declarations of one document. Call only for a document whose root is a mapping of a supported version. */
export function readDocument(parsed: ParsedDocument, schema: SchemaResult, env: Environment): DocumentDeclarations {
  const reader = new DocumentReader(parsed, schema, env);
  const root = isMapping(parsed.value) ? parsed.value : {};
  const declarations: DocumentDeclarations = { file: parsed.file, users: [], rules: [], absentUsers: [], absentDevices: [], diagnostics: reader.diagnostics };
  const settings = reader.settings(root.settings);
  if (settings) declarations.settings = settings;
  const users = Array.isArray(root.users) && !schema.faulty.has('users') ? root.users : [];
  users.forEach((item, i) => {
    const user = reader.user(['users', i], item);
    if (user) declarations.users.push(user);
  });
  const rules = Array.isArray(root.rules) && !schema.faulty.has('rules') ? root.rules : [];
  rules.forEach((item, i) => {
    const rule = reader.rule(['rules', i], item);
    if (rule) declarations.rules.push(rule);
  });
  Object.assign(declarations, reader.absent(root.absent));
  return declarations;
}
