/** Small readers shared by the resource checks: presence, emptiness, lengths. */

export type Mode = 'create' | 'update';
export type RawInput = Record<string, unknown>;

/** The contract counts an empty string as null. */
export function isBlank(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
}

export function has(input: RawInput, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(input, key) && input[key] !== undefined;
}

/** A NUL, or a lone UTF-16 surrogate (half of a pair without its other half). */
const MALFORMED_TEXT = /[\0\p{Cs}]/u;

/**
 * A string the server can store and give back exactly as it came: well-formed UTF-16 (a lone
 * surrogate has no UTF-8 form: SQLite would store invalid bytes and read back U+FFFD, PostgreSQL
 * a U+FFFD at once) and no NUL (PostgreSQL text cannot hold one). Every string field of the
 * field rules is read through this, so such a value is `is invalid` on the server and offline.
 */
export function isText(value: unknown): value is string {
  return typeof value === 'string' && !MALFORMED_TEXT.test(value);
}

/** Length in characters (code points), as people count them. */
export function charLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
