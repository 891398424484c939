/**
 * Canonical JSON: one text for one JSON value, whatever order its members were written in and
 * however it was indented. It is the form of RFC 8785 (JCS) for the values a plan holds: members
 * sorted by their names' UTF-16 code units, no whitespace, strings and numbers as JSON.stringify
 * writes them. The seal of a saved plan (seal.ts) is an HMAC over this text.
 *
 * The text is built by concatenation, never by assigning members to a new object: a member named
 * `__proto__` (which JSON.parse keeps as an ordinary member) is written like any other, so it
 * cannot slip out of what the seal covers by becoming a prototype.
 */

/** Deeper than this is refused: a plan document is about 8 levels deep. */
export const CANONICAL_MAX_DEPTH = 64;

/** Why a value has no canonical JSON form: `type` names what it is (`undefined`, `function`, ...). */
export type CanonicalProblem =
  { code: 'not_finite' } | { code: 'type'; type: string } | { code: 'nested'; depth: number } | { code: 'not_plain' };

/** A value with no canonical JSON form; its message is the code (never shown: a saved plan's refusal words it). */
export class CanonicalJsonError extends Error {
  override readonly name = 'CanonicalJsonError';
  constructor(readonly problem: CanonicalProblem) {
    super(`${problem.code} ${JSON.stringify(problem)}`);
  }
}

/**
 * The canonical text of a JSON value as JSON.parse gives it (plain objects, arrays, strings,
 * finite numbers, booleans, null). Anything else (undefined, a function, a class instance, a
 * non-finite number, nesting deeper than CANONICAL_MAX_DEPTH) throws CanonicalJsonError: a value
 * that JSON would write differently from how it reads back cannot be sealed.
 */
export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

function write(value: unknown, depth: number): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new CanonicalJsonError({ code: 'not_finite' });
    return JSON.stringify(value);
  }
  if (typeof value !== 'object') throw new CanonicalJsonError({ code: 'type', type: typeof value });
  if (depth >= CANONICAL_MAX_DEPTH) throw new CanonicalJsonError({ code: 'nested', depth: CANONICAL_MAX_DEPTH });
  if (Array.isArray(value)) return `[${value.map((item) => write(item, depth + 1)).join(',')}]`;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) throw new CanonicalJsonError({ code: 'not_plain' });
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${write(record[key], depth + 1)}`);
  return `{${members.join(',')}}`;
}

/**
 * Where a JSON value has a member named `__proto__` (a path such as `changes[0].body`, `''` for the
 * top level), or null.
 * Stops at CANONICAL_MAX_DEPTH (canonicalJson refuses deeper values). The path is safe to print:
 * a member name other than letters, digits, `_` and `-` is shown as `…`.
 */
export function findProtoMember(value: unknown, path = '', depth = 0): string | null {
  if (typeof value !== 'object' || value === null || depth >= CANONICAL_MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findProtoMember(value[i], `${path}[${i}]`, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return path;
    const found = findProtoMember(
      (value as Record<string, unknown>)[key],
      path === '' ? shown(key) : `${path}.${shown(key)}`,
      depth + 1,
    );
    if (found !== null) return found;
  }
  return null;
}

function shown(key: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(key) ? key : '…';
}
