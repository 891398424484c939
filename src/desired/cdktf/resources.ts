/**
 * The firezone resources of a stack, each read into its entry of the translated document: its
 * attributes checked against the provider's schema, its values read (values.ts), its owner found,
 * and its `lifecycle.ignore_changes` turned into netform's `ignore_changes`.
 */
import type { DocPath } from '../positions.js';
import {
  DEVICE_IGNORABLE_ATTRIBUTES,
  IGNORED_META_ARGUMENTS,
  MULTIPLYING_META_ARGUMENTS,
  PROVIDER_ATTRIBUTES,
  RESOURCE_ATTRIBUTES,
  typeName,
  type ResourceType,
} from './provider-schema.js';
import { FAILED, isObject, type Failed, type Mapping, type Report, type Site } from './site.js';
import { parseTemplate, VARIABLE_REFERENCE } from './template.js';
import { LITERAL_STACK_SECRET_MESSAGE, type StackValues } from './values.js';

/** Reads the provider block and the resources of one stack, reporting through the translator. */
export class ResourceReader {
  constructor(
    readonly values: StackValues,
    readonly report: Report,
    /** The translated document's entry of the stack object at `jsonPath`, of `values` (StackTranslator.entry). */
    readonly entry: (jsonPath: DocPath, values: Mapping) => Mapping,
  ) {}

  /** The provider block configures Terraform's provider, which netform does not use; a literal token there is still refused. */
  readProviders(document: Record<string, unknown>): void {
    const providers = document.provider;
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
          const declaration = this.values.variables.get(name);
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

  readUser(name: string, body: Record<string, unknown>): Mapping | null {
    const address = `firezone_user.${name}`;
    const docPath: DocPath = ['resource', 'firezone_user', name];
    let ok = this.#checkAttributes('firezone_user', name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const email = this.values.readPlain(body.email, at('email'), 'string');
    const role = this.values.readPlain(body.role, at('role'), 'string');
    const password = this.values.readSecret(body.password, at('password'));
    const ignore = this.#readIgnoreChanges(body, address, docPath, { role: 'role' });
    if (email === FAILED || role === FAILED || password === FAILED || typeof email !== 'string') ok = false;
    if (!ok || ignore === FAILED) return null;
    return this.entry(docPath, { email, role, password, ignore_changes: ignore });
  }

  readDevice(name: string, body: Record<string, unknown>): { device: Mapping; owner: Mapping } | null {
    const type = 'firezone_device';
    const address = `${type}.${name}`;
    const docPath: DocPath = ['resource', type, name];
    const specs = RESOURCE_ATTRIBUTES[type];
    let ok = this.#checkAttributes(type, name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const owner = this.values.readOwner(body.user_id, at('user_id'));
    const deviceName = this.values.readPlain(body.name, at('name'), 'string');
    const presharedKey = this.values.readSecret(body.preshared_key, at('preshared_key'));
    if (owner === FAILED || deviceName === FAILED || presharedKey === FAILED || typeof deviceName !== 'string')
      ok = false;

    const values: Mapping = { name: deviceName };
    for (const [attribute, spec] of Object.entries(specs)) {
      if (['user_id', 'name', 'preshared_key'].includes(attribute) || (spec.computed && !spec.optional)) continue;
      const value = this.values.readPlain(body[attribute], at(attribute), spec.type);
      if (value === FAILED) ok = false;
      else values[attribute] = value;
    }
    values.preshared_key = presharedKey;
    const ignore = this.#readIgnoreChanges(body, address, docPath, DEVICE_IGNORABLE_ATTRIBUTES);
    if (ignore === FAILED) ok = false;
    else values.ignore_changes = ignore;
    if (!ok || owner === null || owner === FAILED) return null;
    return { device: this.entry(docPath, values), owner };
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

  readRule(name: string, body: Record<string, unknown>): { rule: Mapping; owner: Mapping | null } | null {
    const type = 'firezone_rule';
    const address = `${type}.${name}`;
    const docPath: DocPath = ['resource', type, name];
    let ok = this.#checkAttributes(type, name, body);
    const at = (attribute: string): Site => ({ docPath: [...docPath, attribute], address: `${address}.${attribute}` });

    const owner = this.values.readOwner(body.user_id, at('user_id'));
    const values: Mapping = {};
    for (const attribute of ['action', 'destination', 'port_type', 'port_range']) {
      const value = this.values.readPlain(body[attribute], at(attribute), 'string');
      if (value === FAILED) ok = false;
      else values[attribute] = value;
    }
    if (!ok || owner === FAILED || typeof values.action !== 'string' || typeof values.destination !== 'string')
      return null;
    return { rule: this.entry(docPath, values), owner };
  }
}
