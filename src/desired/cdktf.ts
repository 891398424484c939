/**
 * Reads a synthesized CDK for Terraform stack (`cdk.tf.json`) as desired state, with no Terraform
 * binary, into the same DesiredState the equivalent YAML gives; then the shared domain checks run.
 *
 * What Terraform would evaluate, netform evaluates the same way for the expressions a stack of
 * firezone resources needs, and refuses everything else by name:
 * - `${firezone_user.NAME.id}` (a device's or rule's `user_id`) resolves to that user, whom the
 *   DesiredState knows by email; `${firezone_user.NAME.email}` is the email itself;
 * - `${var.NAME}` is `TF_VAR_NAME` from the environment, else the variable's default;
 * - secrets (password, preshared_key, the provider's api_key) must be exactly `${var.NAME}` of a
 *   variable without a default, so that no secret is ever written in the stack.
 * Attribute names, types and which ones are secret or server-set come from
 * schemas/terraform-provider.json, the schema the constructs are generated from.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import providerSchemaDocument from '../../schemas/terraform-provider.json' with { type: 'json' };
import { Secret } from '../model/secret.js';
import {
  defaultSettings,
  type AbsentDevice,
  type DesiredDevice,
  type DesiredDeviceFields,
  type DesiredRule,
  type DesiredSettings,
  type DesiredState,
  type DesiredUser,
  type Limit,
  type SourceLocation,
} from '../model/state.js';
import type { PortType, Role, RuleAction } from '../model/types.js';
import { checkDesiredState } from './check.js';
// index.js imports this module too; only functions are taken from it, at call time.
import { displayPath, sortDiagnostics } from './index.js';
import { resolveSecret, SecretResolutionError, type Environment } from './secrets.js';
import { applyUseDefaultShorthand } from './shorthand.js';
import type { Diagnostic, LoadOptions, LoadResult } from './types.js';
import { parseTree, printParseErrorCode, type Node as JsonNode, type ParseError } from 'jsonc-parser';

/** The file `cdktf synth` writes for each stack (in `cdktf.out/stacks/<name>/`). */
export const CDKTF_STACK_FILE = 'cdk.tf.json';
export const FIREZONE_PROVIDER_ADDRESS = 'registry.terraform.io/jindrichskupa/firezone';

type ResourceType = 'firezone_user' | 'firezone_device' | 'firezone_rule';
const RESOURCE_TYPES: readonly ResourceType[] = ['firezone_user', 'firezone_device', 'firezone_rule'];

/** One attribute of `terraform providers schema -json`. */
interface AttributeSpec {
  type: string | readonly string[];
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
}
type AttributeSpecs = Record<string, AttributeSpec>;

const providerSchema = providerSchemaDocument.provider_schemas[FIREZONE_PROVIDER_ADDRESS];
const RESOURCE_ATTRIBUTES = Object.fromEntries(
  RESOURCE_TYPES.map((type) => [type, providerSchema.resource_schemas[type].block.attributes as AttributeSpecs]),
) as Record<ResourceType, AttributeSpecs>;
const PROVIDER_ATTRIBUTES = providerSchema.provider.block.attributes as AttributeSpecs;

/** Terraform meta-arguments that change nothing netform reads. */
const IGNORED_META_ARGUMENTS = new Set(['//', 'depends_on', 'lifecycle', 'provisioner', 'connection', 'timeouts']);
/** Meta-arguments that would make one resource stand for several objects. */
const MULTIPLYING_META_ARGUMENTS = new Set(['count', 'for_each']);
/** Top-level blocks that declare nothing netform manages (the provider, backend, outputs, locals are read where used). */
const IGNORED_TOP_LEVEL = new Set(['//', 'terraform', 'provider', 'variable', 'output', 'locals', 'data', 'resource', 'moved', 'import', 'check', 'removed']);

const NAME = '[A-Za-z_][A-Za-z0-9_-]*';
const VARIABLE_REFERENCE = new RegExp(`^var\\.(${NAME})$`);
const USER_REFERENCE = new RegExp(`^firezone_user\\.(${NAME})\\.(id|email)$`);

export const LITERAL_STACK_SECRET_MESSAGE =
  'a secret must not be written in the stack: pass it through a sensitive Terraform variable without a default ' +
  '(FirezoneStack: { variable: "NAME" }; or new TerraformVariable(this, "NAME", { type: "string", sensitive: true })) ' +
  'and set TF_VAR_NAME when running netform';

/** A failed read: its diagnostic has been reported already. */
const FAILED = Symbol('failed');
type Failed = typeof FAILED;

type TemplatePart = { text: string } | { expression: string };

/**
 * The parts of a Terraform string template: literal text and `${...}` interpolations, with the
 * `$${` and `%%{` escapes undone. Directives (`%{ if }`) are refused: netform does not evaluate them.
 */
export function parseTemplate(template: string): TemplatePart[] | { error: string } {
  const parts: TemplatePart[] = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    if (template.startsWith('$${', i) || template.startsWith('%%{', i)) {
      text += template.slice(i + 1, i + 3);
      i += 3;
    } else if (template.startsWith('%{', i)) {
      return { error: 'template directives (%{ ... }) are not supported' };
    } else if (template.startsWith('${', i)) {
      let depth = 1;
      let j = i + 2;
      for (; j < template.length && depth > 0; j++) {
        if (template[j] === '{') depth++;
        else if (template[j] === '}') depth--;
      }
      if (depth > 0) return { error: 'an interpolation "${" is not closed' };
      if (text !== '') parts.push({ text });
      text = '';
      parts.push({ expression: template.slice(i + 2, j - 1).trim() });
      i = j;
    } else {
      text += template[i];
      i++;
    }
  }
  if (text !== '' || parts.length === 0) parts.push({ text });
  return parts;
}

interface VariableDeclaration {
  type?: string;
  default?: unknown;
  hasDefault: boolean;
  sensitive: boolean;
}

/** A path into the JSON document: object keys and array indexes. */
type DocPath = readonly (string | number)[];

/**
 * Line and column of the values and keys of a JSON document. Each object's keys are indexed the
 * first time a path goes through it, so that a stack of thousands of resources is placed in
 * linear time.
 */
export class JsonPositions {
  readonly #root: JsonNode | undefined;
  readonly #properties = new Map<JsonNode, Map<string, JsonNode>>();
  readonly #lineStarts: number[] = [0];

  constructor(text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.#lineStarts.push(i + 1);
    this.#root = parseTree(text, [], { disallowComments: true });
  }

  /** The property nodes of an object by key (the last one wins, as with JSON.parse). */
  #propertiesOf(node: JsonNode): Map<string, JsonNode> {
    let properties = this.#properties.get(node);
    if (!properties) {
      properties = new Map();
      for (const property of node.children ?? []) {
        const name = property.children?.[0];
        if (name && typeof name.value === 'string') properties.set(name.value, property);
      }
      this.#properties.set(node, properties);
    }
    return properties;
  }

  /** Where the value at `path` (or its key) is written; the nearest enclosing value when it is not there. */
  locate(path: DocPath, ofKey = false): { line: number; column: number } {
    let node = this.#root;
    let keyNode: JsonNode | undefined;
    for (const segment of path) {
      if (!node) break;
      keyNode = undefined;
      if (node.type === 'object' && typeof segment === 'string') {
        const property = this.#propertiesOf(node).get(segment);
        if (!property) break;
        keyNode = property.children?.[0];
        node = property.children?.[1];
      } else if (node.type === 'array' && typeof segment === 'number' && node.children?.[segment]) {
        node = node.children[segment];
      } else {
        break;
      }
    }
    return this.position((ofKey ? keyNode : undefined)?.offset ?? node?.offset ?? 0);
  }

  position(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.#lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.#lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - this.#lineStarts[low]! + 1 };
  }
}

/** Where a value is: its place in the JSON document and the Terraform address people know it by. */
interface Site {
  docPath: DocPath;
  /** `firezone_device.alice_laptop.mtu` */
  address: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(type: string | readonly string[]): string {
  if (type === 'number') return 'a number';
  if (type === 'bool') return 'true or false';
  if (type === 'string') return 'a string';
  return 'a list of strings';
}

class StackReader {
  readonly diagnostics: Diagnostic[] = [];
  readonly #variables = new Map<string, VariableDeclaration>();
  /** firezone_user resource name -> the user, or null when its email could not be read. */
  readonly #users = new Map<string, DesiredUser | null>();

  constructor(
    readonly file: string,
    readonly document: Record<string, unknown>,
    readonly positions: JsonPositions,
    readonly env: Environment,
  ) {}

  location(docPath: DocPath, ofKey = false): { file: string; line: number; column: number } {
    return { file: this.file, ...this.positions.locate(docPath, ofKey) };
  }

  report(site: Site, message: string, ofKey = false): Failed {
    this.diagnostics.push({ ...this.location(site.docPath, ofKey), path: site.address, message });
    return FAILED;
  }

  sourceOf(docPath: DocPath, address: string, fields: Record<string, DocPath>): SourceLocation {
    const at = (path: DocPath, name: string): SourceLocation => {
      const { line, column } = this.location(path);
      return { file: this.file, line, column, path: name };
    };
    const source = at(docPath, address);
    source.fields = Object.fromEntries(Object.entries(fields).map(([field, path]) => [field, at(path, `${address}.${field}`)]));
    return source;
  }

  read(): DesiredState {
    for (const key of Object.keys(this.document)) {
      if (key === 'module') {
        this.report({ docPath: [key], address: 'module' }, 'modules are not supported: netform cannot see the resources inside a module; declare them in the stack itself', true);
      } else if (!IGNORED_TOP_LEVEL.has(key)) {
        this.report({ docPath: [key], address: key }, `unknown top-level block "${key}" of a Terraform JSON configuration`, true);
      }
    }
    this.#readVariables();
    this.#readProviders();

    const resources = this.document.resource;
    const byType: Partial<Record<ResourceType, [string, Record<string, unknown>][]>> = {};
    if (resources !== undefined && !isObject(resources)) {
      this.report({ docPath: ['resource'], address: 'resource' }, 'must be an object of resource types');
    } else if (resources) {
      for (const [type, instances] of Object.entries(resources)) {
        const site = { docPath: ['resource', type], address: type };
        if (!(RESOURCE_TYPES as readonly string[]).includes(type)) {
          this.report(site, `netform manages only ${RESOURCE_TYPES.join(', ')}; ${type} cannot be part of this stack`, true);
          continue;
        }
        if (!isObject(instances)) {
          this.report(site, 'must be an object of resources by name');
          continue;
        }
        byType[type as ResourceType] = Object.entries(instances).flatMap(([name, body]) => {
          if (isObject(body)) return [[name, body] as [string, Record<string, unknown>]];
          this.report({ docPath: ['resource', type, name], address: `${type}.${name}` }, 'must be an object of attributes');
          return [];
        });
      }
    }

    const users: DesiredUser[] = [];
    for (const [name, body] of byType.firezone_user ?? []) {
      const user = this.#readUser(name, body);
      this.#users.set(name, user);
      if (user) users.push(user);
    }
    for (const [name, body] of byType.firezone_device ?? []) this.#readDevice(name, body);
    const globalRules: DesiredRule[] = [];
    for (const [name, body] of byType.firezone_rule ?? []) {
      const read = this.#readRule(name, body);
      if (read) (read.owner?.rules ?? globalRules).push(read.rule);
    }

    const { settings, absent } = this.#readNetformSection();
    return { settings, users, rules: globalRules, absent, sources: [this.file] };
  }

  #readVariables(): void {
    const declarations = this.document.variable;
    if (declarations === undefined) return;
    if (!isObject(declarations)) {
      this.report({ docPath: ['variable'], address: 'variable' }, 'must be an object of variables by name');
      return;
    }
    for (const [name, declaration] of Object.entries(declarations)) {
      const site = { docPath: ['variable', name], address: `var.${name}` };
      if (!isObject(declaration)) {
        this.report(site, 'must be an object (type, default, sensitive, description)');
        continue;
      }
      const type = declaration.type;
      if (type !== undefined && typeof type !== 'string') {
        this.report({ docPath: ['variable', name, 'type'], address: `var.${name}` }, 'type must be a type constraint such as "string"');
        continue;
      }
      this.#variables.set(name, {
        type,
        default: declaration.default,
        hasDefault: Object.prototype.hasOwnProperty.call(declaration, 'default'),
        sensitive: declaration.sensitive === true,
      });
    }
  }

  /** The provider block configures Terraform's provider, which netform does not use; a literal token there is still refused. */
  #readProviders(): void {
    const providers = this.document.provider;
    if (providers === undefined) return;
    if (!isObject(providers)) {
      this.report({ docPath: ['provider'], address: 'provider' }, 'must be an object of providers by name');
      return;
    }
    for (const [providerName, configs] of Object.entries(providers)) {
      if (providerName !== 'firezone') continue;
      const list = Array.isArray(configs) ? configs : [configs];
      list.forEach((config, index) => {
        if (!isObject(config)) return;
        const base: DocPath = Array.isArray(configs) ? ['provider', providerName, index] : ['provider', providerName];
        for (const [attribute, spec] of Object.entries(PROVIDER_ATTRIBUTES)) {
          const value = config[attribute];
          if (!spec.sensitive || value === undefined || value === null) continue;
          const site = { docPath: [...base, attribute], address: `provider.firezone.${attribute}` };
          const parts = typeof value === 'string' ? parseTemplate(value) : null;
          const isVariable = parts !== null && Array.isArray(parts) && parts.length === 1 && 'expression' in parts[0]! && VARIABLE_REFERENCE.test(parts[0].expression);
          if (!isVariable) {
            this.report(site, `${LITERAL_STACK_SECRET_MESSAGE} (or leave it out and set FIREZONE_API_KEY for Terraform; netform takes its token from --token / NETFORM_TOKEN)`);
            continue;
          }
          const name = VARIABLE_REFERENCE.exec((parts[0] as { expression: string }).expression)![1]!;
          const declaration = this.#variables.get(name);
          if (declaration?.hasDefault) this.report(site, `variable ${name} has a default in the stack, so the secret would be written there; remove the default and set TF_VAR_${name}`);
        }
      });
    }
  }

  /**
   * The attributes of one resource, checked against the schema: unknown, server-set and missing
   * required attributes are reported; `count`/`for_each` refused.
   */
  #checkAttributes(type: ResourceType, name: string, body: Record<string, unknown>): boolean {
    const specs = RESOURCE_ATTRIBUTES[type];
    let ok = true;
    for (const key of Object.keys(body)) {
      const site = { docPath: ['resource', type, name, key], address: `${type}.${name}.${key}` };
      if (IGNORED_META_ARGUMENTS.has(key)) continue;
      if (key === 'provider') {
        // cdktf writes "firezone" for the default configuration; an alias means another server.
        if (body.provider !== 'firezone') {
          this.report(site, `netform applies a stack to one server (--url); a resource of another provider configuration (${typeof body.provider === 'string' ? body.provider : 'not "firezone"'}) belongs in a stack of its own`);
          ok = false;
        }
        continue;
      }
      if (MULTIPLYING_META_ARGUMENTS.has(key)) {
        this.report(site, `${key} is not supported: netform reads one object per resource; loop in TypeScript instead (one construct per object)`, true);
        ok = false;
        continue;
      }
      const spec = specs[key];
      if (!spec) {
        this.report(site, `unknown attribute of ${type}; known: ${Object.keys(specs).filter((a) => !specs[a]!.computed || specs[a]!.optional).join(', ')}`, true);
        ok = false;
      } else if (spec.computed && !spec.optional) {
        this.report(site, 'is set by the server and cannot be declared', true);
        ok = false;
      }
    }
    for (const [attribute, spec] of Object.entries(specs)) {
      if (spec.required && (body[attribute] === undefined || body[attribute] === null)) {
        this.report({ docPath: ['resource', type, name], address: `${type}.${name}.${attribute}` }, `is required (${typeName(spec.type)})`);
        ok = false;
      }
    }
    return ok;
  }

  #readUser(name: string, body: Record<string, unknown>): DesiredUser | null {
    const address = `firezone_user.${name}`;
    const docPath: DocPath = ['resource', 'firezone_user', name];
    let ok = this.#checkAttributes('firezone_user', name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const email = this.#readPlain(body.email, at('email'), 'string');
    const role = this.#readPlain(body.role, at('role'), 'string');
    const password = this.#readSecret(body.password, at('password'));
    if (email === FAILED || role === FAILED || password === FAILED || typeof email !== 'string') ok = false;
    if (!ok) return null;

    const fields = Object.fromEntries(['email', 'role', 'password'].filter((a) => body[a] !== undefined && body[a] !== null).map((a) => [a, [...docPath, a]]));
    const user: DesiredUser = { email: email as string, devices: [], rules: [], source: this.sourceOf(docPath, address, fields) };
    if (typeof role === 'string') user.role = role as Role;
    if (password instanceof Secret) user.password = password;
    return user;
  }

  #readDevice(name: string, body: Record<string, unknown>): void {
    const type = 'firezone_device';
    const address = `${type}.${name}`;
    const docPath: DocPath = ['resource', type, name];
    const specs = RESOURCE_ATTRIBUTES[type];
    let ok = this.#checkAttributes(type, name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const owner = this.#readOwner(body.user_id, at('user_id'));
    const deviceName = this.#readPlain(body.name, at('name'), 'string');
    const presharedKey = this.#readSecret(body.preshared_key, at('preshared_key'));
    if (owner === FAILED || deviceName === FAILED || presharedKey === FAILED || typeof deviceName !== 'string') ok = false;

    const fields: Record<string, unknown> = {};
    const fieldPaths: Record<string, DocPath> = {};
    for (const [attribute, spec] of Object.entries(specs)) {
      if (['user_id', 'name', 'preshared_key'].includes(attribute) || (spec.computed && !spec.optional)) continue;
      const value = this.#readPlain(body[attribute], at(attribute), spec.type);
      if (value === FAILED) ok = false;
      else if (value !== undefined && value !== null) {
        fields[attribute] = value;
        fieldPaths[attribute] = [...docPath, attribute];
      }
    }
    if (!ok || owner === null || owner === FAILED) return;
    for (const attribute of ['name', 'preshared_key']) if (body[attribute] !== undefined && body[attribute] !== null) fieldPaths[attribute] = [...docPath, attribute];

    const device: DesiredDevice = {
      name: deviceName as string,
      fields: applyUseDefaultShorthand(fields as DesiredDeviceFields),
      source: this.sourceOf(docPath, address, fieldPaths),
    };
    if (presharedKey instanceof Secret) device.preshared_key = presharedKey;
    owner.devices.push(device);
  }

  #readRule(name: string, body: Record<string, unknown>): { rule: DesiredRule; owner: DesiredUser | null } | null {
    const type = 'firezone_rule';
    const address = `${type}.${name}`;
    const docPath: DocPath = ['resource', type, name];
    let ok = this.#checkAttributes(type, name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const owner = this.#readOwner(body.user_id, at('user_id'));
    const values: Record<string, unknown> = {};
    for (const attribute of ['action', 'destination', 'port_type', 'port_range']) {
      const value = this.#readPlain(body[attribute], at(attribute), 'string');
      if (value === FAILED) ok = false;
      else values[attribute] = value ?? null;
    }
    if (!ok || owner === FAILED || typeof values.action !== 'string' || typeof values.destination !== 'string') return null;

    const fieldPaths = Object.fromEntries(
      ['action', 'destination', 'port_type', 'port_range', 'user_id'].filter((a) => body[a] !== undefined && body[a] !== null).map((a) => [a, [...docPath, a]]),
    );
    const rule: DesiredRule = {
      action: values.action as RuleAction,
      destination: values.destination,
      port_type: values.port_type as PortType | null,
      port_range: values.port_range as string | null,
      source: this.sourceOf(docPath, address, fieldPaths),
    };
    return { rule, owner };
  }

  /**
   * `user_id`: the owning user of this stack, from `${firezone_user.NAME.id}`; null when the
   * attribute is absent (a rule bound to no user; a device's missing owner is reported as required).
   */
  #readOwner(raw: unknown, site: Site): DesiredUser | null | Failed {
    if (raw === undefined || raw === null) return null;
    const parts = typeof raw === 'string' ? parseTemplate(raw) : null;
    const expression = parts && Array.isArray(parts) && parts.length === 1 && 'expression' in parts[0]! ? parts[0].expression : null;
    const reference = expression === null ? null : USER_REFERENCE.exec(expression);
    if (reference === null || reference[2] !== 'id') {
      const shown = expression !== null ? `\${${expression}}` : 'a literal value';
      return this.report(
        site,
        `must reference a firezone_user of this stack as \${firezone_user.NAME.id}, not ${shown}: netform knows users by email and cannot tell which user that is`,
      );
    }
    const userName = reference[1]!;
    if (!this.#users.has(userName)) return this.report(site, `references firezone_user.${userName}, which this stack does not declare`);
    // A user whose own attributes failed has been reported; its devices and rules say nothing more.
    return this.#users.get(userName) ?? FAILED;
  }

  /** A secret: exactly `${var.NAME}` of a variable without a default, read from TF_VAR_NAME. */
  #readSecret(raw: unknown, site: Site): Secret | undefined | Failed {
    if (raw === undefined || raw === null) return undefined;
    const parts = typeof raw === 'string' ? parseTemplate(raw) : null;
    if (parts === null || !Array.isArray(parts) || !parts.some((p) => 'expression' in p)) return this.report(site, LITERAL_STACK_SECRET_MESSAGE);
    if (parts.length !== 1) return this.report(site, `must be exactly \${var.NAME}: a secret cannot be assembled from text written in the stack`);
    const expression = (parts[0] as { expression: string }).expression;
    const variable = VARIABLE_REFERENCE.exec(expression);
    if (!variable) return this.report(site, `must come from a sensitive Terraform variable (\${var.NAME}); netform cannot resolve \${${expression}}`);
    const name = variable[1]!;
    const declaration = this.#variables.get(name);
    if (!declaration) return this.report(site, `references variable ${name}, which this stack does not declare`);
    if (declaration.hasDefault) {
      return this.report(site, `variable ${name} has a default in the stack, so the secret would be written there; remove the default and set TF_VAR_${name}`);
    }
    try {
      return new Secret(resolveSecret({ tfvar: name }, this.env), { tfvar: name });
    } catch (error) {
      if (error instanceof SecretResolutionError) return this.report(site, error.message);
      throw error;
    }
  }

  /** A value that is not secret, its references resolved and converted to the attribute's type as Terraform converts. */
  #readPlain(raw: unknown, site: Site, type: string | readonly string[]): unknown {
    if (raw === undefined || raw === null) return raw;
    const resolved = this.#resolve(raw, site);
    if (resolved === FAILED || resolved === null) return resolved;
    return this.#convert(resolved, site, type);
  }

  #resolve(raw: unknown, site: Site): unknown {
    if (Array.isArray(raw)) {
      const items = raw.map((item) => this.#resolve(item, site));
      return items.includes(FAILED) ? FAILED : items;
    }
    if (typeof raw !== 'string') return raw;
    const parts = parseTemplate(raw);
    if (!Array.isArray(parts)) return this.report(site, parts.error);
    // A template that is one interpolation keeps the value's own type, as in Terraform.
    if (parts.length === 1 && 'expression' in parts[0]!) return this.#evaluate(parts[0].expression, site);
    let text = '';
    for (const part of parts) {
      if ('text' in part) {
        text += part.text;
        continue;
      }
      const value = this.#evaluate(part.expression, site);
      if (value === FAILED) return FAILED;
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        return this.report(site, `\${${part.expression}} is not a single value and cannot be part of a text`);
      }
      text += String(value);
    }
    return text;
  }

  #evaluate(expression: string, site: Site): unknown {
    const variable = VARIABLE_REFERENCE.exec(expression);
    if (variable) return this.#variableValue(variable[1]!, site);
    const user = USER_REFERENCE.exec(expression);
    if (user) {
      const [, userName, attribute] = user;
      if (!this.#users.has(userName!)) return this.report(site, `references firezone_user.${userName}, which this stack does not declare`);
      if (attribute === 'id') return this.report(site, `\${${expression}} is the id the server assigns; only user_id may reference it`);
      const target = this.#users.get(userName!);
      return target ? target.email : FAILED;
    }
    return this.report(
      site,
      `netform cannot resolve \${${expression}}: it understands var.NAME, firezone_user.NAME.id (in user_id) and firezone_user.NAME.email; write the value in TypeScript instead`,
    );
  }

  /** `TF_VAR_NAME` from the environment, parsed for the variable's type as Terraform does; else its default. */
  #variableValue(name: string, site: Site): unknown {
    const declaration = this.#variables.get(name);
    if (!declaration) return this.report(site, `references variable ${name}, which this stack does not declare`);
    if (declaration.sensitive) {
      return this.report(site, `variable ${name} is sensitive, but ${site.address} is not a secret: netform would show its value in plans; use a variable that is not sensitive`);
    }
    const text = this.env[`TF_VAR_${name}`];
    if (text === undefined) {
      if (declaration.hasDefault) return declaration.default;
      return this.report(site, `variable ${name} has no value: set TF_VAR_${name} (or give the variable a default)`);
    }
    const type = (declaration.type ?? 'string').replace(/\s+/g, '');
    if (type === 'string' || type === 'any') return text;
    if (type === 'number') {
      const trimmed = text.trim();
      if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(trimmed)) return Number(trimmed);
      return this.report(site, `TF_VAR_${name} must be a number (variable ${name} is of type number)`);
    }
    if (type === 'bool') {
      if (text.trim() === 'true' || text.trim() === 'false') return text.trim() === 'true';
      return this.report(site, `TF_VAR_${name} must be true or false (variable ${name} is of type bool)`);
    }
    if (/^(list|set)(\((string|number|bool)\))?$/.test(type)) {
      // HCL's list literal of plain strings, numbers and booleans is JSON.
      let list: unknown;
      try {
        list = JSON.parse(text);
      } catch {
        list = undefined;
      }
      if (Array.isArray(list) && list.every((item) => ['string', 'number', 'boolean'].includes(typeof item))) return list;
      return this.report(site, `TF_VAR_${name} must be a list such as ["10.0.0.0/8", "192.168.0.0/16"] (variable ${name} is of type ${type})`);
    }
    return this.report(site, `variable ${name} is of type ${declaration.type}, which netform cannot read from TF_VAR_${name}; use string, number, bool or a list`);
  }

  #convert(value: unknown, site: Site, type: string | readonly string[]): unknown {
    if (type === 'string') {
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    } else if (type === 'number') {
      if (typeof value === 'number') return value;
      if (typeof value === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value.trim())) return Number(value.trim());
    } else if (type === 'bool') {
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
    } else if (Array.isArray(value)) {
      const items = value.map((item) => (typeof item === 'number' || typeof item === 'boolean' ? String(item) : item));
      if (items.every((item) => typeof item === 'string')) return items;
    }
    return this.report(site, `must be ${typeName(type)}`);
  }

  /** netform's own settings and `absent` list, kept in the stack's top-level "//" entry, which Terraform ignores. */
  #readNetformSection(): { settings: DesiredSettings; absent: DesiredState['absent'] } {
    const settings = defaultSettings();
    const absent: DesiredState['absent'] = { users: [], devices: [] };
    const comment = this.document['//'];
    const section = isObject(comment) ? comment.netform : undefined;
    if (section === undefined) return { settings, absent };
    const base: DocPath = ['//', 'netform'];
    const site = (path: (string | number)[]): Site => ({ docPath: [...base, ...path], address: ['netform', ...path].map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('').slice(1) });
    const fail = (path: (string | number)[], message: string, ofKey = false): void => void this.report(site(path), message, ofKey);
    if (!isObject(section)) {
      fail([], 'must be an object with settings and absent');
      return { settings, absent };
    }
    for (const key of Object.keys(section)) if (key !== 'settings' && key !== 'absent') fail([key], 'unknown key; netform reads settings and absent here', true);

    const fieldPaths: Record<string, DocPath> = {};
    const stringList = (value: unknown, path: string[]): string[] | undefined => {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
        fail(path, 'must be a list of strings');
        return undefined;
      }
      value.forEach((_, i) => (fieldPaths[`${path.slice(1).join('.')}[${i}]`] = [...base, ...path, i]));
      return value as string[];
    };
    const raw = section.settings;
    if (raw !== undefined && !isObject(raw)) fail(['settings'], 'must be an object (prune, manage, protect, limits)');
    else if (raw) {
      for (const key of Object.keys(raw)) if (!['prune', 'manage', 'protect', 'limits'].includes(key)) fail(['settings', key], 'unknown setting; known: prune, manage, protect, limits', true);
      if (raw.prune !== undefined) {
        if (typeof raw.prune === 'boolean') settings.prune = raw.prune;
        else fail(['settings', 'prune'], 'must be true or false');
        fieldPaths.prune = [...base, 'settings', 'prune'];
      }
      const manage = raw.manage;
      if (manage !== undefined && !isObject(manage)) fail(['settings', 'manage'], 'must be an object (users, rules)');
      else if (manage) {
        for (const key of Object.keys(manage)) if (key !== 'users' && key !== 'rules') fail(['settings', 'manage', key], 'unknown key; known: users, rules', true);
        if (manage.users !== undefined) settings.manage.users = stringList(manage.users, ['settings', 'manage', 'users']) ?? null;
        if (manage.rules !== undefined) settings.manage.rules = stringList(manage.rules, ['settings', 'manage', 'rules']) ?? null;
      }
      const protect = raw.protect;
      if (protect !== undefined && !isObject(protect)) fail(['settings', 'protect'], 'must be an object (users)');
      else if (protect) {
        for (const key of Object.keys(protect)) if (key !== 'users') fail(['settings', 'protect', key], 'unknown key; known: users', true);
        if (protect.users !== undefined) settings.protect.users = stringList(protect.users, ['settings', 'protect', 'users']) ?? [];
      }
      const limits = raw.limits;
      if (limits !== undefined && !isObject(limits)) fail(['settings', 'limits'], 'must be an object (delete, update)');
      else if (limits) {
        for (const [key, value] of Object.entries(limits)) {
          if (key !== 'delete' && key !== 'update') {
            fail(['settings', 'limits', key], 'unknown limit; known: delete, update', true);
            continue;
          }
          const limit = parseLimit(value);
          if (typeof limit === 'string') fail(['settings', 'limits', key], limit);
          else settings.limits[key] = limit;
          fieldPaths[`limits.${key}`] = [...base, 'settings', 'limits', key];
        }
      }
      settings.source = this.sourceOf([...base, 'settings'], 'netform.settings', fieldPaths);
    }

    const rawAbsent = section.absent;
    if (rawAbsent !== undefined && !isObject(rawAbsent)) fail(['absent'], 'must be an object (users, devices)');
    else if (rawAbsent) {
      for (const key of Object.keys(rawAbsent)) if (key !== 'users' && key !== 'devices') fail(['absent', key], 'unknown key; known: users, devices', true);
      if (rawAbsent.users !== undefined) {
        if (!Array.isArray(rawAbsent.users)) fail(['absent', 'users'], 'must be a list of emails');
        else {
          rawAbsent.users.forEach((email, i) => {
            if (typeof email !== 'string') return fail(['absent', 'users', i], 'must be an email');
            absent.users.push({ email, source: this.sourceOf([...base, 'absent', 'users', i], `netform.absent.users[${i}]`, {}) });
          });
        }
      }
      if (rawAbsent.devices !== undefined) {
        if (!Array.isArray(rawAbsent.devices)) fail(['absent', 'devices'], 'must be a list of { user, name }');
        else {
          rawAbsent.devices.forEach((device, i) => {
            if (!isObject(device) || typeof device.user !== 'string' || typeof device.name !== 'string' || Object.keys(device).some((k) => k !== 'user' && k !== 'name')) {
              return fail(['absent', 'devices', i], 'must be { user: EMAIL, name: DEVICE_NAME }');
            }
            const entry: AbsentDevice = {
              user: device.user,
              name: device.name,
              source: this.sourceOf([...base, 'absent', 'devices', i], `netform.absent.devices[${i}]`, { user: [...base, 'absent', 'devices', i, 'user'], name: [...base, 'absent', 'devices', i, 'name'] }),
            };
            absent.devices.push(entry);
          });
        }
      }
    }
    return { settings, absent };
  }
}

/** `10` (a count) or `"10%"` (a percentage of the live objects), as in the YAML format; else what is wrong. */
function parseLimit(value: unknown): Limit | string {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return { kind: 'count', value };
  const percent = typeof value === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value) : null;
  if (!percent) return 'must be a count of objects (such as 5) or a percentage of the live objects (such as "10%")';
  const number = Number(percent[1]);
  return number <= 100 ? { kind: 'percent', value: number } : 'a percentage must be between 0% and 100%';
}

/** The stack file a path names: the file itself, or the cdk.tf.json in a folder. */
async function stackFileOf(path: string): Promise<{ file: string } | { error: string }> {
  try {
    const info = await stat(path);
    if (!info.isDirectory()) return { file: path };
  } catch {
    return { error: 'no such file or folder' };
  }
  const file = join(path, CDKTF_STACK_FILE);
  try {
    await stat(file);
    return { file };
  } catch {
    return { error: `holds no ${CDKTF_STACK_FILE}; point at a synthesized stack such as cdktf.out/stacks/NAME (run your CDKTF app first)` };
  }
}

/** Where and what the first syntax error of a text JSON.parse refused is, as far as the JSON scanner can tell. */
function jsonSyntaxError(text: string): { line?: number; column?: number; problem: string } {
  const errors: ParseError[] = [];
  parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
  const first = errors[0];
  if (!first) return { problem: 'is not valid JSON' };
  // "PropertyNameExpected" -> "property name expected"
  const problem = printParseErrorCode(first.error).replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return { ...positionIn(text, first.offset), problem: `is not valid JSON: ${problem}` };
}

function positionIn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

/**
 * Reads a synthesized stack (a cdk.tf.json file, or a folder holding one) into a DesiredState, then
 * runs the domain checks every front end shares.
 */
export async function loadCdktfStack(path: string, options: LoadOptions = {}): Promise<LoadResult> {
  const env = options.env ?? process.env;
  const located = await stackFileOf(path);
  if ('error' in located) return { ok: false, diagnostics: [{ file: displayPath(path), message: located.error }] };
  const shown = displayPath(located.file);

  let text: string;
  try {
    text = await readFile(located.file, 'utf8');
  } catch (error) {
    return { ok: false, diagnostics: [{ file: shown, message: `cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}` }] };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the source, which may hold a secret: say where and what only.
    const { problem, ...at } = jsonSyntaxError(text);
    return { ok: false, diagnostics: [{ file: shown, ...at, message: `${problem} (a synthesized stack is written by cdktf synth or app.synth())` }] };
  }
  if (!isObject(document)) return { ok: false, diagnostics: [{ file: shown, line: 1, column: 1, message: 'must be a JSON object (a Terraform JSON configuration)' }] };

  const reader = new StackReader(shown, document, new JsonPositions(text), env);
  const state = reader.read();
  const diagnostics = [...reader.diagnostics, ...checkDesiredState(state)];
  return diagnostics.length > 0 ? { ok: false, diagnostics: sortDiagnostics(diagnostics, [shown]) } : { ok: true, state };
}
