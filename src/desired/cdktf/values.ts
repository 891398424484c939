/**
 * The values of a stack's attributes, as Terraform would evaluate them for the expressions a stack
 * of firezone resources needs, and refused by name otherwise:
 * - `${firezone_user.NAME.id}` (a device's or rule's `user_id`) is that user's entry of the
 *   translated document; `${firezone_user.NAME.email}` is the email itself;
 * - `${var.NAME}` is `TF_VAR_NAME` from the environment, else the variable's default;
 * - a secret must be exactly `${var.NAME}` of a variable without a default, and becomes
 *   `{ tfvar: NAME }`, resolved by the document reader.
 */
import type { Environment } from '../secrets.js';
import { typeName } from './provider-schema.js';
import { FAILED, isObject, type Failed, type Mapping, type Report, type Site } from './site.js';
import { parseTemplate, USER_REFERENCE, VARIABLE_REFERENCE } from './template.js';

/** Why a secret written in the stack itself is refused, and how to pass it instead. */
export const LITERAL_STACK_SECRET_MESSAGE =
  'a secret must not be written in the stack: pass it through a sensitive Terraform variable without a default ' +
  '(FirezoneStack: { variable: "NAME" }; or new TerraformVariable(this, "NAME", { type: "string", sensitive: true })) ' +
  'and set TF_VAR_NAME when running netform';

/** A `variable` block of the stack. */
export interface VariableDeclaration {
  type?: string;
  default?: unknown;
  hasDefault: boolean;
  sensitive: boolean;
}

/** The values of one stack's attributes, resolved against its variables and users. */
export class StackValues {
  constructor(
    /** The stack's variables by name (readVariables, before any value is read). */
    readonly variables: Map<string, VariableDeclaration>,
    /** firezone_user resource name -> its entry in the translated document, or null when it could not be translated. */
    readonly users: Map<string, Mapping | null>,
    readonly env: Environment,
    readonly report: Report,
  ) {}

  /** The `variable` blocks of the stack, read before any value that may reference them. */
  readVariables(document: Record<string, unknown>): void {
    const declarations = document.variable;
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
      this.variables.set(name, {
        type,
        default: declaration.default,
        hasDefault: Object.prototype.hasOwnProperty.call(declaration, 'default'),
        sensitive: declaration.sensitive === true,
      });
    }
  }

  /**
   * `user_id`: the owning user of this stack, from `${firezone_user.NAME.id}`; null when the
   * attribute is absent (a rule bound to no user; a device's missing owner is reported as required).
   */
  readOwner(raw: unknown, site: Site): Mapping | null | Failed {
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
    if (!this.users.has(userName))
      return this.report(site, `references firezone_user.${userName}, which this stack does not declare`);
    // A user whose own attributes failed has been reported; its devices and rules say nothing more.
    return this.users.get(userName) ?? FAILED;
  }

  /**
   * A secret: exactly `${var.NAME}` of a variable without a default, which becomes the reference
   * `{ tfvar: NAME }` (the document reader resolves it from TF_VAR_NAME, as it resolves `{ env }`).
   */
  readSecret(raw: unknown, site: Site): { tfvar: string } | undefined | Failed {
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
    const declaration = this.variables.get(name);
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
  readPlain(raw: unknown, site: Site, type: string | readonly string[]): unknown {
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
      if (!this.users.has(userName!))
        return this.report(site, `references firezone_user.${userName}, which this stack does not declare`);
      if (attribute === 'id')
        return this.report(site, `\${${expression}} is the id the server assigns; only user_id may reference it`);
      const target = this.users.get(userName!);
      return target ? target.email : FAILED;
    }
    return this.report(
      site,
      `netform cannot resolve \${${expression}}: it understands var.NAME, firezone_user.NAME.id (in user_id) and firezone_user.NAME.email; write the value in TypeScript instead`,
    );
  }

  /** `TF_VAR_NAME` from the environment, parsed for the variable's type as Terraform does; else its default. */
  #variableValue(name: string, site: Site): unknown {
    const declaration = this.variables.get(name);
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
