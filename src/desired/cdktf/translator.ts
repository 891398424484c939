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
 *
 * This file builds the translated document and records where each of its values is written. The
 * stack file is found and parsed by load.ts (json-positions.ts places its values); each resource
 * is read by resources.ts against provider-schema.ts; values, references and secrets by values.ts,
 * with template.ts's reading of `${...}`.
 */
import type { Node as JsonNode } from 'jsonc-parser';
import { setOwn, type ContainerOffsets, type DocPath, type ParsedDocument } from '../positions.js';
import type { Environment } from '../secrets.js';
import type { Diagnostic } from '../types.js';
import type { JsonPositions } from './json-positions.js';
import { IGNORED_TOP_LEVEL, RESOURCE_TYPES, type ResourceType } from './provider-schema.js';
import { ResourceReader } from './resources.js';
import { FAILED, isObject, type Failed, type Mapping, type Site } from './site.js';
import { StackValues } from './values.js';

/** The translated document's entries for one resource address, e.g. `users[0].devices[1]` -> `firezone_device.laptop`. */
const RESOURCE_PATH = /^(?:users\[\d+\](?:\.(?:devices|rules)\[\d+\])?|rules\[\d+\])/;

/** Keys of the netform section that the stack declares itself, as resources. */
const RESOURCE_SECTIONS: Record<string, string> = {
  version: 'is written by netform itself for a stack',
  users: 'users are declared as firezone_user resources (FirezoneUser), not here',
  rules: 'rules are declared as firezone_rule resources (FirezoneRule), not here',
};

/** One stack's translation: translate(), then parsedDocument() for the pipeline. */
export class StackTranslator {
  readonly diagnostics: Diagnostic[] = [];
  /** The stack's variables and users, and the reader of values that reference them. */
  readonly #values: StackValues;
  readonly #resources: ResourceReader;
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
  ) {
    const report = (site: Site, message: string, ofKey?: boolean): Failed => this.report(site, message, ofKey);
    this.#values = new StackValues(new Map(), new Map(), env, report);
    this.#resources = new ResourceReader(this.#values, report, (jsonPath, values) => this.entry(jsonPath, values));
  }

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
  entry(jsonPath: DocPath, values: Mapping): Mapping {
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
    this.#values.readVariables(this.document);
    this.#resources.readProviders(this.document);
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
      const user = this.#resources.readUser(name, body);
      this.#values.users.set(name, user);
      if (!user) continue;
      const path = this.#append(this.#translated, '', 'users', user, ['resource', 'firezone_user', name]);
      userPaths.set(user, path);
      this.#addresses.set(path, `firezone_user.${name}`);
    }
    for (const [name, body] of byType.firezone_device ?? []) {
      const read = this.#resources.readDevice(name, body);
      if (!read) continue;
      const path = this.#append(read.owner, userPaths.get(read.owner)!, 'devices', read.device, [
        'resource',
        'firezone_device',
        name,
      ]);
      this.#addresses.set(path, `firezone_device.${name}`);
    }
    for (const [name, body] of byType.firezone_rule ?? []) {
      const read = this.#resources.readRule(name, body);
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
}
