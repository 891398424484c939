/**
 * Validates Terraform JSON (`resource.<type>.<name> = body`) against a provider schema in the shape
 * of `terraform providers schema -json`: every type known, every key an attribute that is not
 * computed-only or a block type, required attributes present, types right. Returns the problems.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Attribute {
  type: string | [string, string];
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
}
interface Block {
  attributes?: Record<string, Attribute>;
  block_types?: Record<string, { nesting_mode: string; block: Block }>;
}

export function firezoneSchema(): Record<string, { block: Block }> {
  const path = fileURLToPath(new URL('../fixtures/migrate/provider-schema.json', import.meta.url));
  const doc = JSON.parse(readFileSync(path, 'utf8')) as {
    provider_schemas: Record<string, { resource_schemas: Record<string, { block: Block }> }>;
  };
  return doc.provider_schemas['registry.terraform.io/firezone/firezone']!.resource_schemas;
}

function typeOk(type: Attribute['type'], value: unknown): boolean {
  if (typeof value === 'string' && value.startsWith('${')) return true;
  if (type === 'string') return typeof value === 'string';
  if (type === 'bool') return typeof value === 'boolean';
  if (type === 'number') return typeof value === 'number';
  if (Array.isArray(type) && type[0] === 'list')
    return Array.isArray(value) && value.every((v) => typeOk(type[1] as Attribute['type'], v));
  return false;
}

function checkBlock(block: Block, body: Record<string, unknown>, where: string, out: string[]): void {
  for (const [key, value] of Object.entries(body)) {
    const attribute = block.attributes?.[key];
    const nested = block.block_types?.[key];
    if (attribute) {
      if (attribute.computed && !attribute.optional && !attribute.required) out.push(`${where}.${key}: read-only`);
      else if (!typeOk(attribute.type, value)) out.push(`${where}.${key}: not a ${JSON.stringify(attribute.type)}`);
    } else if (nested) {
      if (!Array.isArray(value)) out.push(`${where}.${key}: a block list must be a list`);
      else
        value.forEach((v, i) => checkBlock(nested.block, v as Record<string, unknown>, `${where}.${key}[${i}]`, out));
    } else out.push(`${where}.${key}: unknown attribute`);
  }
  for (const [key, attribute] of Object.entries(block.attributes ?? {}))
    if (attribute.required && !(key in body)) out.push(`${where}.${key}: required`);
}

export function validateTerraformJson(doc: { resource?: Record<string, Record<string, unknown>> }): string[] {
  const schema = firezoneSchema();
  const out: string[] = [];
  for (const [type, bodies] of Object.entries(doc.resource ?? {})) {
    const entry = schema[type];
    if (!entry) {
      out.push(`${type}: not a resource type of the provider`);
      continue;
    }
    for (const [name, body] of Object.entries(bodies)) {
      if (!/^[a-zA-Z_][a-zA-Z0-9_-]*$/.test(name)) out.push(`${type}.${name}: not a Terraform name`);
      checkBlock(entry.block, body as Record<string, unknown>, `${type}.${name}`, out);
    }
  }
  return out;
}
