/**
 * The desired-state JSON Schema, applied with ajv, its errors turned into diagnostics that point
 * into the YAML source and read like a person wrote them.
 *
 * The schema checks structure: keys, types, required keys, enumerations, secret references. Its
 * value constraints (bounds, lengths, patterns) exist for editors; at validation time their
 * errors are dropped because the model in src/model checks the same values with the server's own
 * messages, and one rule must have one implementation.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import schemaDocument from '../../schemas/netform.schema.json' with { type: 'json' };
import type { Diagnostic } from './types.js';
import { formatPath, locateKey, locateValue, type DocPath, type ParsedDocument } from './positions.js';

const require = createRequire(import.meta.url);

export const DESIRED_STATE_SCHEMA = schemaDocument;
/** The desired-state format version this netform writes (it reads 1 and 2: the schema's `version` enum). */
export const LATEST_VERSION = 2;
const READS = `this netform reads version 1 or 2`;

/** Keywords whose errors the model reports instead (see the module comment). */
const VALUE_KEYWORDS = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'uniqueItems',
  'multipleOf',
]);

/** ajv's options for both schemas (scripts/schema-validators.mjs compiles them ahead of time with the same). */
export const AJV_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true, verbose: true } as const;

/**
 * The schema for documents a translator wrote (CDKTF): the same, except that a secret may also be
 * `{ tfvar: NAME }`, a Terraform variable. Not in the schema file, so that editors never offer it.
 */
export function translatedSchema(): object {
  const copy = structuredClone(schemaDocument) as {
    $id: string;
    $defs: { secret: { properties: Record<string, unknown> } };
  };
  copy.$id = copy.$id.replace(/\.schema\.json$/, '.translated.schema.json');
  copy.$defs.secret.properties.tfvar = {
    description: 'Name of the Terraform variable (TF_VAR_NAME) that holds the secret.',
    type: 'string',
  };
  return copy;
}

/** Identifies the schema file's content: validators compiled ahead of time from another one are not used. */
export function schemaDigest(): string {
  return createHash('sha256').update(JSON.stringify(schemaDocument)).digest('hex');
}

interface Validators {
  validate: ValidateFunction;
  validateTranslated: ValidateFunction;
}

let validators: Validators | undefined;

/**
 * Both validators: compiled ahead of time by `npm run build` (dist/src/desired/schema-validators.cjs,
 * ajv's standalone code), so that a command does not load ajv and compile the schema at every start;
 * compiled here when that file is absent (tests run from src/) or was built from another schema.
 */
function loadValidators(): Validators {
  try {
    const built = require('./schema-validators.cjs') as Validators & { digest: string };
    if (built.digest === schemaDigest()) return built;
  } catch {
    // not built: compile below
  }
  // ajv is CommonJS: its default export is the class.
  const { default: Ajv2020 } = require('ajv/dist/2020.js') as {
    default: new (options: object) => { compile(schema: object): ValidateFunction };
  };
  return {
    validate: new Ajv2020(AJV_OPTIONS).compile(schemaDocument),
    validateTranslated: new Ajv2020(AJV_OPTIONS).compile(translatedSchema()),
  };
}

function validator(translated: boolean): ValidateFunction {
  validators ??= loadValidators();
  return translated ? validators.validateTranslated : validators.validate;
}

/**
 * Keywords whose errors the model reports instead in a translated document: Terraform types these
 * attributes as plain strings, and a stack has always had the model's message for them.
 */
const TRANSLATED_VALUE_KEYWORDS = new Set(['enum']);

export interface SchemaResult {
  diagnostics: Diagnostic[];
  /** Paths (formatted) of values that failed a structural check: readers must skip them. */
  faulty: Set<string>;
  /** Paths (formatted) of mappings that lack a required key: readers cannot build them. */
  incomplete: Set<string>;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping (key: value pairs)',
  null: 'empty',
};

export const LITERAL_SECRET_MESSAGE =
  'a secret must not be written in the file; reference it instead as { env: VARIABLE_NAME } (an environment variable) or { file: path/to/file } (a file, relative to this one)';

function describeType(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' or ');
}

/** Turns an ajv instance path (JSON pointer) into document path segments, using the data to tell indexes from keys. */
function pointerToPath(pointer: string, data: unknown): (string | number)[] {
  if (pointer === '') return [];
  const path: (string | number)[] = [];
  let current: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      const index = Number(key);
      path.push(index);
      current = current[index];
    } else {
      path.push(key);
      current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[key] : undefined;
    }
  }
  return path;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

function unknownKeyMessage(key: string, allowed: string[]): string {
  const closest = allowed
    .map((candidate) => ({ candidate, distance: editDistance(key.toLowerCase(), candidate) }))
    .sort((x, y) => x.distance - y.distance)[0];
  if (closest && closest.distance <= Math.max(2, Math.floor(closest.candidate.length / 3))) {
    return `unknown key; did you mean \`${closest.candidate}\`?`;
  }
  return `unknown key; expected one of: ${allowed.join(', ')}`;
}

function shortValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function translate(
  error: ErrorObject,
  path: DocPath,
): { path: DocPath; message: string; atKey?: boolean; kind: 'faulty' | 'incomplete' | 'note' } | null {
  if (VALUE_KEYWORDS.has(error.keyword)) return null;
  const isSecret = error.schemaPath.startsWith('#/$defs/secret/');
  switch (error.keyword) {
    case 'type':
      if (path.length === 0) {
        return {
          path,
          kind: 'faulty',
          message: `the file must hold a mapping (key: value pairs) that starts with \`version: ${LATEST_VERSION}\``,
        };
      }
      if (isSecret && typeof error.data === 'string') return { path, kind: 'faulty', message: LITERAL_SECRET_MESSAGE };
      return { path, kind: 'faulty', message: `must be ${describeType(error.params.type)}` };
    case 'required': {
      const missing = String(error.params.missingProperty);
      const hint =
        path.length === 0 && missing === 'version'
          ? ` (${READS}; \`export\` writes \`version: ${LATEST_VERSION}\`)`
          : '';
      return { path, kind: 'incomplete', message: `\`${missing}\` is required${hint}` };
    }
    case 'additionalProperties': {
      const key = String(error.params.additionalProperty);
      const allowed = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return { path: [...path, key], kind: 'note', atKey: true, message: unknownKeyMessage(key, allowed) };
    }
    case 'const':
      if (path.length === 1 && path[0] === 'version') {
        return {
          path,
          kind: 'faulty',
          message: `unsupported version ${shortValue(error.data)}; ${READS}`,
        };
      }
      return { path, kind: 'faulty', message: `must be ${shortValue(error.params.allowedValue)}` };
    case 'enum':
      if (path.length === 1 && path[0] === 'version') {
        return { path, kind: 'faulty', message: `unsupported version ${shortValue(error.data)}; ${READS}` };
      }
      return {
        path,
        kind: 'faulty',
        message: `must be one of: ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`,
      };
    case 'minProperties':
    case 'maxProperties':
      if (isSecret)
        return {
          path,
          kind: 'faulty',
          message: 'a secret reference names exactly one source: { env: VARIABLE_NAME } or { file: path/to/file }',
        };
      return { path, kind: 'faulty', message: error.message ?? 'is invalid' };
    default:
      return { path, kind: 'faulty', message: error.message ?? 'is invalid' };
  }
}

/** Checks one document against the schema. */
export function checkSchema(parsed: ParsedDocument): SchemaResult {
  const result: SchemaResult = { diagnostics: [], faulty: new Set(), incomplete: new Set() };
  const validate = validator(parsed.translated === true);
  if (validate(parsed.value)) return result;
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    if (parsed.translated && TRANSLATED_VALUE_KEYWORDS.has(error.keyword)) continue;
    const translated = translate(error, pointerToPath(error.instancePath, parsed.value));
    if (!translated) continue;
    const path = formatPath(translated.path);
    const key = `${path}\u0000${translated.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (translated.kind === 'faulty') result.faulty.add(path);
    if (translated.kind === 'incomplete') result.incomplete.add(path);
    const at = translated.atKey ? locateKey(parsed, translated.path) : locateValue(parsed, translated.path);
    const label = parsed.label ? parsed.label(path) : path;
    result.diagnostics.push({
      file: parsed.file,
      line: at.line,
      column: at.column,
      path: label || undefined,
      message: translated.message,
    });
  }
  return result;
}
