/**
 * Validation of SARIF logs against the vendored OASIS SARIF 2.1.0 schema (test/fixtures/sarif).
 * The schema is JSON Schema draft-04: ajv 8 reads it once its draft-04 `$schema` and `id` are set
 * aside (it uses no keyword whose meaning changed since, such as a boolean exclusiveMinimum).
 * Formats (uri, date-time) are not checked here: the tests check the URIs netform writes themselves.
 * Its patterns are read as the schema was written (without the u flag: one of them, for a
 * language tag, is not a valid unicode regular expression).
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

const SCHEMA = new URL('../fixtures/sarif/sarif-2.1.0-rtm.5.json', import.meta.url);

let validate: ValidateFunction | undefined;

/** The schema's errors for `log`, as `path: message` lines; empty when it is valid. */
export function sarifSchemaErrors(log: unknown): string[] {
  if (!validate) {
    const { $schema: _draft, id: _id, ...schema } = JSON.parse(readFileSync(SCHEMA, 'utf8')) as Record<string, unknown>;
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, unicodeRegExp: false });
    validate = ajv.compile(schema);
  }
  if (validate(log)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}`);
}
