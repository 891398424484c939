/**
 * Translates a synthesized CDK for Terraform stack (`cdk.tf.json`), with no Terraform binary, into
 * the same document a YAML file holds (`version`, `settings`, `users[].devices[]`, `users[].rules[]`,
 * `rules`, `absent`), with a map from each value to its place in the JSON file and its Terraform
 * address. That document then goes through the one pipeline YAML goes through (pipeline.ts): the
 * schema check, the document reader, the merge and the domain checks.
 *
 * What stays here is what is Terraform's. What Terraform would evaluate, netform evaluates the same
 * way for the expressions a stack of firezone resources needs, and refuses everything else by name:
 * - `${firezone_user.NAME.id}` (a device's or rule's `user_id`) nests the device or rule under that
 *   user, whom the document knows by email; `${firezone_user.NAME.email}` is the email itself;
 * - `${var.NAME}` is `TF_VAR_NAME` from the environment, else the variable's default;
 * - secrets (password, preshared_key, the provider's api_key) must be exactly `${var.NAME}` of a
 *   variable without a default, so that no secret is ever written in the stack; they become
 *   `{ tfvar: NAME }` references, resolved by the document reader.
 * Attribute names, types and which ones are secret or server-set come from
 * schemas/terraform-provider.json, the schema the constructs are generated from. netform's own
 * sections (settings, absent, and any other top-level section of the format) are kept in the
 * stack's top-level "//" entry under `netform`, which Terraform ignores, and are copied as written.
 */
import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import providerSchemaDocument from '../../../schemas/terraform-provider.json' with { type: 'json' };
import { desiredStateContainment, escapeFrom, readDesiredStateFile, type Containment } from '../containment.js';
import { CDKTF_STACK_FILE, displayPath } from '../files.js';
import { readDocuments } from '../pipeline.js';
import { columnAt, lineAt, lineStartsOf, setOwn, type ContainerOffsets, type ParsedDocument } from '../positions.js';
import type { Environment } from '../secrets.js';
import type { Diagnostic, LoadOptions, LoadResult } from '../types.js';
import { IGNORABLE_DEVICE_FIELDS } from '../../model/state.js';
import { parseTree, printParseErrorCode, type Node as JsonNode, type ParseError } from 'jsonc-parser';

export { CDKTF_STACK_FILE } from '../files.js';
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
/** The device attributes `lifecycle.ignore_changes` may name, and the netform field each stands for. */
const DEVICE_IGNORABLE_ATTRIBUTES: Record<string, string> = Object.fromEntries(
  IGNORABLE_DEVICE_FIELDS.flatMap((field) => [
    [field, field],
    [`use_default_${field}`, field],
  ]),
);

const IGNORED_META_ARGUMENTS = new Set(['//', 'depends_on', 'lifecycle', 'provisioner', 'connection', 'timeouts']);
/** Meta-arguments that would make one resource stand for several objects. */
const MULTIPLYING_META_ARGUMENTS = new Set(['count', 'for_each']);
/** Top-level blocks that declare nothing netform manages (the provider, backend, outputs, locals are read where used). */
const IGNORED_TOP_LEVEL = new Set([
  '//',
  'terraform',
  'provider',
  'variable',
  'output',
  'locals',
  'data',
  'resource',
  'moved',
  'import',
  'check',
  'removed',
]);

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
  readonly lineStarts: number[];

  constructor(text: string) {
    this.lineStarts = lineStartsOf(text);
    this.#root = parseTree(text, [], { disallowComments: true });
  }

  /** The property nodes of an object by key (the last one wins, as with JSON.parse). */
  propertiesOf(node: JsonNode): Map<string, JsonNode> {
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

  /** The node of the value at `path` and of its key; the nearest enclosing value when it is not there. */
  find(path: DocPath): { node: JsonNode | undefined; keyNode: JsonNode | undefined; found: boolean } {
    let node = this.#root;
    let keyNode: JsonNode | undefined;
    for (const segment of path) {
      if (!node) break;
      keyNode = undefined;
      if (node.type === 'object' && typeof segment === 'string') {
        const property = this.propertiesOf(node).get(segment);
        if (!property) return { node, keyNode, found: false };
        keyNode = property.children?.[0];
        node = property.children?.[1];
      } else if (node.type === 'array' && typeof segment === 'number' && node.children?.[segment]) {
        node = node.children[segment];
      } else {
        return { node, keyNode, found: false };
      }
    }
    return { node, keyNode, found: true };
  }

  /** Where the value at `path` (or its key) is written; the nearest enclosing value when it is not there. */
  locate(path: DocPath, ofKey = false): { line: number; column: number } {
    const { node, keyNode } = this.find(path);
    return this.position((ofKey ? keyNode : undefined)?.offset ?? node?.offset ?? 0);
  }

  position(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - this.lineStarts[low]! + 1 };
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

type Mapping = Record<string, unknown>;

/** The translated document's entries for one resource address, e.g. `users[0].devices[1]` -> `firezone_device.laptop`. */
const RESOURCE_PATH = /^(?:users\[\d+\](?:\.(?:devices|rules)\[\d+\])?|rules\[\d+\])/;

/** Keys of the netform section that the stack declares itself, as resources. */
const RESOURCE_SECTIONS: Record<string, string> = {
  version: 'is written by netform itself for a stack',
  users: 'users are declared as firezone_user resources (FirezoneUser), not here',
  rules: 'rules are declared as firezone_rule resources (FirezoneRule), not here',
};

class StackTranslator {
  readonly diagnostics: Diagnostic[] = [];
  readonly #variables = new Map<string, VariableDeclaration>();
  /** firezone_user resource name -> its entry in the translated document, or null when it could not be translated. */
  readonly #users = new Map<string, Mapping | null>();
  /** Where the values of the translated document are written in the stack (see positions.ts). */
  readonly containers = new Map<object, ContainerOffsets>();
  /** Document path of each resource's entry -> its Terraform address. */
  readonly #addresses = new Map<string, string>();
  readonly #translated: Mapping = { version: 1 };
  readonly #rootOffsets: ContainerOffsets = [];

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

  /** How people name the value at a path of the translated document: its Terraform address, or `netform.<path>`. */
  label = (path: string): string => {
    const resource = RESOURCE_PATH.exec(path);
    if (resource) return `${this.#addresses.get(resource[0]) ?? resource[0]}${path.slice(resource[0].length)}`;
    return path === '' ? 'netform' : `netform.${path}`;
  };

  /** The translated document, with what is needed to locate its values in the stack. */
  parsedDocument(): ParsedDocument {
    this.containers.set(this.#translated, this.#rootOffsets);
    return {
      file: this.file,
      index: 0,
      value: this.#translated,
      offsets: { root: this.positions.find([]).node?.offset ?? 0, containers: this.containers },
      lineStarts: this.positions.lineStarts,
      label: this.label,
      translated: true,
    };
  }

  /**
   * A mapping of the translated document whose values come from the attributes of the stack
   * object at `jsonPath` (the same keys); keys not written there are placed at the object.
   */
  #entry(jsonPath: DocPath, values: Mapping): Mapping {
    const entry: Mapping = {};
    const offsets: ContainerOffsets = [];
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined || value === null) continue;
      entry[key] = value;
      const { node, keyNode, found } = this.positions.find([...jsonPath, key]);
      if (!found) continue;
      offsets.push(key, keyNode?.offset ?? -1, node?.offset ?? -1);
      if (Array.isArray(value)) this.#placeList(value, node);
    }
    this.#copyResourceKeys(jsonPath, entry, offsets);
    this.containers.set(entry, offsets);
    return entry;
  }

  /**
   * netform's own keys of one resource (keys of the format that are not Terraform attributes, such
   * as a rename), kept in the resource's "//" entry under `netform`, which Terraform ignores:
   * copied into its entry as written, for the schema and the document reader to check and read.
   */
  #copyResourceKeys(jsonPath: DocPath, entry: Mapping, offsets: ContainerOffsets): void {
    const { node: commentNode, found } = this.positions.find([...jsonPath, '//', 'netform']);
    if (!found || !commentNode) return;
    const address = `${jsonPath[1]}.${jsonPath[2]}.//.netform`;
    if (commentNode.type !== 'object') {
      this.report({ docPath: [...jsonPath, '//', 'netform'], address }, 'must be an object of netform keys');
      return;
    }
    for (const [key, property] of this.positions.propertiesOf(commentNode)) {
      const site = { docPath: [...jsonPath, '//', 'netform', key], address: `${address}.${key}` };
      if (Object.hasOwn(entry, key) || key === 'devices' || key === 'rules') {
        this.report(
          site,
          `${key} is not a netform key of its own here: write it as the resource's attribute or resource`,
          true,
        );
        continue;
      }
      const value = this.#jsonValue([...jsonPath, '//', 'netform', key]);
      setOwn(entry, key, value);
      offsets.push(key, property.children?.[0]?.offset ?? -1, property.children?.[1]?.offset ?? -1);
      this.#placeJson(value, property.children?.[1]);
    }
  }

  /** The parsed value at a path of the stack. */
  #jsonValue(path: DocPath): unknown {
    let value: unknown = this.document;
    for (const segment of path)
      value =
        isObject(value) || Array.isArray(value) ? (value as Record<string | number, unknown>)[segment] : undefined;
    return value;
  }

  /** A list value's items at the items of the JSON array it was written as; at the value itself when it came from a variable. */
  #placeList(list: unknown[], node: JsonNode | undefined): void {
    const items = node?.type === 'array' && node.children?.length === list.length ? node.children : undefined;
    this.containers.set(
      list,
      list.map((_, i) => items?.[i]?.offset ?? node?.offset ?? -1),
    );
  }

  /** Appends `entry` (written at `jsonPath`) to the list `key` of `owner`, creating the list; returns the entry's document path. */
  #append(owner: Mapping, ownerPath: string, key: string, entry: Mapping, jsonPath: DocPath): string {
    let list = owner[key] as Mapping[] | undefined;
    if (!list) {
      list = [];
      owner[key] = list;
      this.containers.set(list, []);
    }
    list.push(entry);
    this.containers.get(list)!.push(this.positions.find(jsonPath).node?.offset ?? -1);
    return `${ownerPath === '' ? '' : `${ownerPath}.`}${key}[${list.length - 1}]`;
  }

  /** Translates the stack; read the result with parsedDocument(). */
  translate(): void {
    for (const key of Object.keys(this.document)) {
      if (key === 'module') {
        this.report(
          { docPath: [key], address: 'module' },
          'modules are not supported: netform cannot see the resources inside a module; declare them in the stack itself',
          true,
        );
      } else if (!IGNORED_TOP_LEVEL.has(key)) {
        this.report(
          { docPath: [key], address: key },
          `unknown top-level block "${key}" of a Terraform JSON configuration`,
          true,
        );
      }
    }
    this.#readVariables();
    this.#readProviders();
    this.#copyNetformSections();

    const resources = this.document.resource;
    const byType: Partial<Record<ResourceType, [string, Record<string, unknown>][]>> = {};
    if (resources !== undefined && !isObject(resources)) {
      this.report({ docPath: ['resource'], address: 'resource' }, 'must be an object of resource types');
    } else if (resources) {
      for (const [type, instances] of Object.entries(resources)) {
        const site = { docPath: ['resource', type], address: type };
        if (!(RESOURCE_TYPES as readonly string[]).includes(type)) {
          this.report(
            site,
            `netform manages only ${RESOURCE_TYPES.join(', ')}; ${type} cannot be part of this stack`,
            true,
          );
          continue;
        }
        if (!isObject(instances)) {
          this.report(site, 'must be an object of resources by name');
          continue;
        }
        byType[type as ResourceType] = Object.entries(instances).flatMap(([name, body]) => {
          if (isObject(body)) return [[name, body] as [string, Record<string, unknown>]];
          this.report(
            { docPath: ['resource', type, name], address: `${type}.${name}` },
            'must be an object of attributes',
          );
          return [];
        });
      }
    }

    const userPaths = new Map<Mapping, string>();
    for (const [name, body] of byType.firezone_user ?? []) {
      const user = this.#readUser(name, body);
      this.#users.set(name, user);
      if (!user) continue;
      const path = this.#append(this.#translated, '', 'users', user, ['resource', 'firezone_user', name]);
      userPaths.set(user, path);
      this.#addresses.set(path, `firezone_user.${name}`);
    }
    for (const [name, body] of byType.firezone_device ?? []) {
      const read = this.#readDevice(name, body);
      if (!read) continue;
      const path = this.#append(read.owner, userPaths.get(read.owner)!, 'devices', read.device, [
        'resource',
        'firezone_device',
        name,
      ]);
      this.#addresses.set(path, `firezone_device.${name}`);
    }
    for (const [name, body] of byType.firezone_rule ?? []) {
      const read = this.#readRule(name, body);
      if (!read) continue;
      const owner = read.owner ?? this.#translated;
      const path = this.#append(owner, read.owner ? userPaths.get(read.owner)! : '', 'rules', read.rule, [
        'resource',
        'firezone_rule',
        name,
      ]);
      this.#addresses.set(path, `firezone_rule.${name}`);
    }
  }

  /**
   * netform's own sections (settings, absent, and any other top-level section of the format),
   * kept in the stack's top-level "//" entry under `netform`: copied into the document as written,
   * for the schema and the document reader to check and read as they do for YAML.
   */
  #copyNetformSections(): void {
    const comment = this.document['//'];
    const section = isObject(comment) ? comment.netform : undefined;
    if (section === undefined) return;
    const base: DocPath = ['//', 'netform'];
    if (!isObject(section)) {
      this.report({ docPath: base, address: 'netform' }, 'must be an object of netform sections (settings, absent)');
      return;
    }
    const sectionNode = this.positions.find(base).node;
    for (const [key, value] of Object.entries(section)) {
      const property = sectionNode ? this.positions.propertiesOf(sectionNode).get(key) : undefined;
      if (Object.hasOwn(RESOURCE_SECTIONS, key)) {
        this.report({ docPath: [...base, key], address: `netform.${key}` }, RESOURCE_SECTIONS[key]!, true);
        continue;
      }
      setOwn(this.#translated, key, value);
      this.#rootOffsets.push(key, property?.children?.[0]?.offset ?? -1, property?.children?.[1]?.offset ?? -1);
      this.#placeJson(value, property?.children?.[1]);
    }
  }

  /** The offsets of a value copied from the stack as written, and of everything inside it. */
  #placeJson(value: unknown, node: JsonNode | undefined): void {
    if (!node || typeof value !== 'object' || value === null || this.containers.has(value)) return;
    if (Array.isArray(value)) {
      if (node.type !== 'array') return;
      this.containers.set(
        value,
        value.map((_, i) => node.children?.[i]?.offset ?? node.offset),
      );
      value.forEach((item, i) => this.#placeJson(item, node.children?.[i]));
      return;
    }
    if (node.type !== 'object') return;
    const offsets: ContainerOffsets = [];
    const properties = this.positions.propertiesOf(node);
    for (const key of Object.keys(value)) {
      const property = properties.get(key);
      offsets.push(key, property?.children?.[0]?.offset ?? -1, property?.children?.[1]?.offset ?? -1);
      this.#placeJson((value as Mapping)[key], property?.children?.[1]);
    }
    this.containers.set(value, offsets);
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
        this.report(
          { docPath: ['variable', name, 'type'], address: `var.${name}` },
          'type must be a type constraint such as "string"',
        );
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
          const isVariable =
            parts !== null &&
            Array.isArray(parts) &&
            parts.length === 1 &&
            'expression' in parts[0]! &&
            VARIABLE_REFERENCE.test(parts[0].expression);
          if (!isVariable) {
            this.report(
              site,
              `${LITERAL_STACK_SECRET_MESSAGE} (or leave it out and set FIREZONE_API_KEY for Terraform; netform takes its token from --token / NETFORM_TOKEN)`,
            );
            continue;
          }
          const name = VARIABLE_REFERENCE.exec((parts[0] as { expression: string }).expression)![1]!;
          const declaration = this.#variables.get(name);
          if (declaration?.hasDefault)
            this.report(
              site,
              `variable ${name} has a default in the stack, so the secret would be written there; remove the default and set TF_VAR_${name}`,
            );
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
          this.report(
            site,
            `netform applies a stack to one server (--url); a resource of another provider configuration (${typeof body.provider === 'string' ? body.provider : 'not "firezone"'}) belongs in a stack of its own`,
          );
          ok = false;
        }
        continue;
      }
      if (MULTIPLYING_META_ARGUMENTS.has(key)) {
        this.report(
          site,
          `${key} is not supported: netform reads one object per resource; loop in TypeScript instead (one construct per object)`,
          true,
        );
        ok = false;
        continue;
      }
      const spec = specs[key];
      if (!spec) {
        this.report(
          site,
          `unknown attribute of ${type}; known: ${Object.keys(specs)
            .filter((a) => !specs[a]!.computed || specs[a]!.optional)
            .join(', ')}`,
          true,
        );
        ok = false;
      } else if (spec.computed && !spec.optional) {
        this.report(site, 'is set by the server and cannot be declared', true);
        ok = false;
      }
    }
    for (const [attribute, spec] of Object.entries(specs)) {
      if (spec.required && (body[attribute] === undefined || body[attribute] === null)) {
        this.report(
          { docPath: ['resource', type, name], address: `${type}.${name}.${attribute}` },
          `is required (${typeName(spec.type)})`,
        );
        ok = false;
      }
    }
    return ok;
  }

  #readUser(name: string, body: Record<string, unknown>): Mapping | null {
    const address = `firezone_user.${name}`;
    const docPath: DocPath = ['resource', 'firezone_user', name];
    let ok = this.#checkAttributes('firezone_user', name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const email = this.#readPlain(body.email, at('email'), 'string');
    const role = this.#readPlain(body.role, at('role'), 'string');
    const password = this.#readSecret(body.password, at('password'));
    const ignore = this.#readIgnoreChanges(body, address, docPath, { role: 'role' });
    if (email === FAILED || role === FAILED || password === FAILED || typeof email !== 'string') ok = false;
    if (!ok || ignore === FAILED) return null;
    return this.#entry(docPath, { email, role, password, ignore_changes: ignore });
  }

  #readDevice(name: string, body: Record<string, unknown>): { device: Mapping; owner: Mapping } | null {
    const type = 'firezone_device';
    const address = `${type}.${name}`;
    const docPath: DocPath = ['resource', type, name];
    const specs = RESOURCE_ATTRIBUTES[type];
    let ok = this.#checkAttributes(type, name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const owner = this.#readOwner(body.user_id, at('user_id'));
    const deviceName = this.#readPlain(body.name, at('name'), 'string');
    const presharedKey = this.#readSecret(body.preshared_key, at('preshared_key'));
    if (owner === FAILED || deviceName === FAILED || presharedKey === FAILED || typeof deviceName !== 'string')
      ok = false;

    const values: Mapping = { name: deviceName };
    for (const [attribute, spec] of Object.entries(specs)) {
      if (['user_id', 'name', 'preshared_key'].includes(attribute) || (spec.computed && !spec.optional)) continue;
      const value = this.#readPlain(body[attribute], at(attribute), spec.type);
      if (value === FAILED) ok = false;
      else values[attribute] = value;
    }
    values.preshared_key = presharedKey;
    const ignore = this.#readIgnoreChanges(body, address, docPath, DEVICE_IGNORABLE_ATTRIBUTES);
    if (ignore === FAILED) ok = false;
    else values.ignore_changes = ignore;
    if (!ok || owner === null || owner === FAILED) return null;
    return { device: this.#entry(docPath, values), owner };
  }

  /**
   * `lifecycle.ignore_changes`: the attributes named (or `all`), as netform's `ignore_changes` of
   * the object (`use_default_<x>` stands for `<x>`); undefined when there is none. An attribute
   * netform cannot leave unmanaged is an error naming those it can.
   */
  #readIgnoreChanges(
    body: Record<string, unknown>,
    address: string,
    docPath: DocPath,
    allowed: Record<string, string>,
  ): string[] | undefined | Failed {
    const lifecycle = body.lifecycle;
    if (typeof lifecycle !== 'object' || lifecycle === null || !('ignore_changes' in lifecycle)) return undefined;
    const raw = (lifecycle as Record<string, unknown>).ignore_changes;
    const site: Site = {
      docPath: [...docPath, 'lifecycle', 'ignore_changes'],
      address: `${address}.lifecycle.ignore_changes`,
    };
    const names = raw === 'all' ? ['all'] : Array.isArray(raw) ? raw : null;
    if (names === null || !names.every((n) => typeof n === 'string'))
      return this.report(site, 'must be a list of attribute names, or "all"');
    const fields = new Set<string>();
    for (const name of names as string[]) {
      if (name === 'all') Object.values(allowed).forEach((f) => fields.add(f));
      else if (allowed[name] !== undefined) fields.add(allowed[name]);
      else
        return this.report(
          site,
          `netform cannot leave ${JSON.stringify(name)} unmanaged; it can: ${Object.keys(allowed).join(', ')}, or "all"`,
        );
    }
    return fields.size > 0 ? [...fields] : undefined;
  }

  #readRule(name: string, body: Record<string, unknown>): { rule: Mapping; owner: Mapping | null } | null {
    const type = 'firezone_rule';
    const address = `${type}.${name}`;
    const docPath: DocPath = ['resource', type, name];
    let ok = this.#checkAttributes(type, name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const owner = this.#readOwner(body.user_id, at('user_id'));
    const values: Mapping = {};
    for (const attribute of ['action', 'destination', 'port_type', 'port_range']) {
      const value = this.#readPlain(body[attribute], at(attribute), 'string');
      if (value === FAILED) ok = false;
      else values[attribute] = value;
    }
    if (!ok || owner === FAILED || typeof values.action !== 'string' || typeof values.destination !== 'string')
      return null;
    return { rule: this.#entry(docPath, values), owner };
  }

  /**
   * `user_id`: the owning user of this stack, from `${firezone_user.NAME.id}`; null when the
   * attribute is absent (a rule bound to no user; a device's missing owner is reported as required).
   */
  #readOwner(raw: unknown, site: Site): Mapping | null | Failed {
    if (raw === undefined || raw === null) return null;
    const parts = typeof raw === 'string' ? parseTemplate(raw) : null;
    const expression =
      parts && Array.isArray(parts) && parts.length === 1 && 'expression' in parts[0]! ? parts[0].expression : null;
    const reference = expression === null ? null : USER_REFERENCE.exec(expression);
    if (reference === null || reference[2] !== 'id') {
      const shown = expression !== null ? `\${${expression}}` : 'a literal value';
      return this.report(
        site,
        `must reference a firezone_user of this stack as \${firezone_user.NAME.id}, not ${shown}: netform knows users by email and cannot tell which user that is`,
      );
    }
    const userName = reference[1]!;
    if (!this.#users.has(userName))
      return this.report(site, `references firezone_user.${userName}, which this stack does not declare`);
    // A user whose own attributes failed has been reported; its devices and rules say nothing more.
    return this.#users.get(userName) ?? FAILED;
  }

  /**
   * A secret: exactly `${var.NAME}` of a variable without a default, which becomes the reference
   * `{ tfvar: NAME }` (the document reader resolves it from TF_VAR_NAME, as it resolves `{ env }`).
   */
  #readSecret(raw: unknown, site: Site): { tfvar: string } | undefined | Failed {
    if (raw === undefined || raw === null) return undefined;
    const parts = typeof raw === 'string' ? parseTemplate(raw) : null;
    if (parts === null || !Array.isArray(parts) || !parts.some((p) => 'expression' in p))
      return this.report(site, LITERAL_STACK_SECRET_MESSAGE);
    if (parts.length !== 1)
      return this.report(
        site,
        `must be exactly \${var.NAME}: a secret cannot be assembled from text written in the stack`,
      );
    const expression = (parts[0] as { expression: string }).expression;
    const variable = VARIABLE_REFERENCE.exec(expression);
    if (!variable)
      return this.report(
        site,
        `must come from a sensitive Terraform variable (\${var.NAME}); netform cannot resolve \${${expression}}`,
      );
    const name = variable[1]!;
    const declaration = this.#variables.get(name);
    if (!declaration) return this.report(site, `references variable ${name}, which this stack does not declare`);
    if (declaration.hasDefault) {
      return this.report(
        site,
        `variable ${name} has a default in the stack, so the secret would be written there; remove the default and set TF_VAR_${name}`,
      );
    }
    return { tfvar: name };
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
      if (!this.#users.has(userName!))
        return this.report(site, `references firezone_user.${userName}, which this stack does not declare`);
      if (attribute === 'id')
        return this.report(site, `\${${expression}} is the id the server assigns; only user_id may reference it`);
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
      return this.report(
        site,
        `variable ${name} is sensitive, but ${site.address} is not a secret: netform would show its value in plans; use a variable that is not sensitive`,
      );
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
      if (Array.isArray(list) && list.every((item) => ['string', 'number', 'boolean'].includes(typeof item)))
        return list;
      return this.report(
        site,
        `TF_VAR_${name} must be a list such as ["10.0.0.0/8", "192.168.0.0/16"] (variable ${name} is of type ${type})`,
      );
    }
    return this.report(
      site,
      `variable ${name} is of type ${declaration.type}, which netform cannot read from TF_VAR_${name}; use string, number, bool or a list`,
    );
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
}

/** The stack file a path names (the file itself, or the cdk.tf.json in a folder), and where it must lie. */
async function stackFileOf(path: string): Promise<{ file: string; within: Containment } | { error: string }> {
  try {
    const info = await stat(path);
    if (!info.isDirectory()) return { file: path, within: desiredStateContainment(path, false) };
  } catch {
    return { error: 'no such file or folder' };
  }
  const within = desiredStateContainment(path, true);
  const escape = escapeFrom(path, within);
  if (escape) return { error: `${escape}; it is not read` };
  const file = join(path, CDKTF_STACK_FILE);
  try {
    await lstat(file);
    return { file, within };
  } catch {
    return {
      error: `holds no ${CDKTF_STACK_FILE}; point at a synthesized stack such as cdktf.out/stacks/NAME (run your CDKTF app first)`,
    };
  }
}

/**
 * How deep objects and arrays may nest in a stack file. A synthesized stack nests a handful of
 * levels; the JSON scanner that locates values (and the readers after it) recurse once per level,
 * so a deeper file is refused, at the bracket that goes too deep, before any of them runs.
 */
export const CDKTF_MAX_DEPTH = 1000;

/** The offset of the first `{` or `[` nested deeper than CDKTF_MAX_DEPTH (strings skipped), or -1. */
function tooDeepAt(text: string): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > CDKTF_MAX_DEPTH) return i;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return -1;
}

/** Where and what the first syntax error of a text JSON.parse refused is, as far as the JSON scanner can tell. */
function jsonSyntaxError(text: string): { line?: number; column?: number; problem: string } {
  const errors: ParseError[] = [];
  parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
  const first = errors[0];
  if (!first) return { problem: 'is not valid JSON' };
  // "PropertyNameExpected" -> "property name expected"
  const problem = printParseErrorCode(first.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return { ...new JsonPositions(text).position(first.offset), problem: `is not valid JSON: ${problem}` };
}

/**
 * Reads a synthesized stack (a cdk.tf.json file, or a folder holding one) into a DesiredState:
 * translated, then read by the one pipeline (pipeline.ts) the YAML files go through.
 */
export async function loadCdktfStack(path: string, options: LoadOptions = {}): Promise<LoadResult> {
  const env = options.env ?? process.env;
  const located = await stackFileOf(path);
  if ('error' in located) return { ok: false, diagnostics: [{ file: displayPath(path), message: located.error }] };
  const shown = displayPath(located.file);

  const read = await readDesiredStateFile(located.file, located.within, 0);
  if ('problem' in read) return { ok: false, diagnostics: [{ file: shown, message: read.problem }] };
  const text = read.bytes.toString('utf8');
  const deep = tooDeepAt(text);
  if (deep !== -1) {
    const lines = { lineStarts: lineStartsOf(text) };
    const line = lineAt(lines, deep);
    return {
      ok: false,
      diagnostics: [
        {
          file: shown,
          line,
          column: columnAt(lines, deep, line),
          message: `nests objects and arrays more than ${CDKTF_MAX_DEPTH} levels deep, which netform does not read (a synthesized stack needs a handful)`,
        },
      ],
    };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the source, which may hold a secret: say where and what only.
    const { problem, ...at } = jsonSyntaxError(text);
    return {
      ok: false,
      diagnostics: [
        { file: shown, ...at, message: `${problem} (a synthesized stack is written by cdktf synth or app.synth())` },
      ],
    };
  }
  if (!isObject(document))
    return {
      ok: false,
      diagnostics: [
        { file: shown, line: 1, column: 1, message: 'must be a JSON object (a Terraform JSON configuration)' },
      ],
    };

  const translator = new StackTranslator(shown, document, new JsonPositions(text), env);
  translator.translate();
  return readDocuments([translator.parsedDocument()], [shown], env, translator.diagnostics);
}
