/**
 * What netform knows of the firezone provider: its resource types and their attributes (names,
 * types, which are secret or server-set) from schemas/terraform-provider.json, the schema the
 * constructs are generated from, and which Terraform blocks and meta-arguments it reads or refuses.
 */
import providerSchemaDocument from '../../../schemas/terraform-provider.json' with { type: 'json' };
import { IGNORABLE_DEVICE_FIELDS } from '../../model/state.js';

export const FIREZONE_PROVIDER_ADDRESS = 'registry.terraform.io/jindrichskupa/firezone';

export type ResourceType = 'firezone_user' | 'firezone_device' | 'firezone_rule';

export const RESOURCE_TYPES: readonly ResourceType[] = ['firezone_user', 'firezone_device', 'firezone_rule'];

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

export const RESOURCE_ATTRIBUTES = Object.fromEntries(
  RESOURCE_TYPES.map((type) => [type, providerSchema.resource_schemas[type].block.attributes as AttributeSpecs]),
) as Record<ResourceType, AttributeSpecs>;

export const PROVIDER_ATTRIBUTES = providerSchema.provider.block.attributes as AttributeSpecs;

/** The device attributes `lifecycle.ignore_changes` may name, and the netform field each stands for. */
export const DEVICE_IGNORABLE_ATTRIBUTES: Record<string, string> = Object.fromEntries(
  IGNORABLE_DEVICE_FIELDS.flatMap((field) => [
    [field, field],
    [`use_default_${field}`, field],
  ]),
);

/** Terraform meta-arguments that change nothing netform reads. */
export const IGNORED_META_ARGUMENTS = new Set([
  '//',
  'depends_on',
  'lifecycle',
  'provisioner',
  'connection',
  'timeouts',
]);

/** Meta-arguments that would make one resource stand for several objects. */
export const MULTIPLYING_META_ARGUMENTS = new Set(['count', 'for_each']);

/** Top-level blocks that declare nothing netform manages (the provider, backend, outputs, locals are read where used). */
export const IGNORED_TOP_LEVEL = new Set([
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

/** An attribute type as messages name it: `must be a number`. */
export function typeName(type: string | readonly string[]): string {
  if (type === 'number') return 'a number';
  if (type === 'bool') return 'true or false';
  if (type === 'string') return 'a string';
  return 'a list of strings';
}
