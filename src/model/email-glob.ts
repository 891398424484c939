/**
 * The one matcher of email globs (`settings.manage.users`, `settings.protect.users`), shared by the
 * planner and `validate` so that both draw the scope's edge in the same place. An email is a plain
 * string, not a path: `*` matches any run of characters, `/` included (a path-glob library would
 * leave `ops/backdoor@example.com` outside `*@example.com`, an admin no plan would ever show).
 * Matching is case-insensitive, by the same key the planner matches users with (userKey).
 *
 *   *        any run of characters, none included (`/`, `@` and `.` too); `**` is the same
 *   ?        exactly one character
 *   [abc]    one of the characters listed; `[a-z]` a range; `[!abc]` or `[^abc]` any other one
 *   {a,b}    one of the comma-separated alternatives, which may hold globs themselves
 *   \x       the character x itself (`\*`, `\?`, `\[`, `\{`, `\\`)
 *
 * Every other character matches itself. A `[` or `{` with no closing partner is an ordinary
 * character, and so is a `{...}` with no comma. There is no negation: a glob names what is inside.
 */
import { userKey } from './keys.js';

/** A glob that cannot be compiled: the message says why and is safe to print. */
export class EmailGlobError extends Error {
  override readonly name = 'EmailGlobError';
}

/** The regular expression text of one character, matched literally (valid inside and outside a class). */
function literal(char: string): string {
  return /^[\p{L}\p{N}]$/u.test(char) ? char : `\\u{${char.codePointAt(0)!.toString(16)}}`;
}

class GlobCompiler {
  readonly #chars: string[];

  constructor(glob: string) {
    this.#chars = Array.from(glob); // by code point: `?` is one character, also outside the BMP
  }

  compile(): string {
    return this.#sequence(0, false).source;
  }

  /** Reads up to the end, or inside braces up to a `,` or `}` at this level. */
  #sequence(start: number, inBraces: boolean): { source: string; end: number } {
    const chars = this.#chars;
    let source = '';
    let i = start;
    while (i < chars.length) {
      const c = chars[i]!;
      if (inBraces && (c === ',' || c === '}')) break;
      if (c === '\\' && i + 1 < chars.length) {
        source += literal(chars[i + 1]!);
        i += 2;
      } else if (c === '*') {
        while (chars[i] === '*') i++;
        source += '[^]*';
      } else if (c === '?') {
        source += '[^]';
        i++;
      } else {
        const group = c === '[' ? this.#bracket(i) : c === '{' ? this.#braces(i) : null;
        source += group ? group.source : literal(c);
        i = group ? group.end : i + 1;
      }
    }
    return { source, end: i };
  }

  /** `[...]` starting at `start`, or null when it is not closed (then `[` is an ordinary character). */
  #bracket(start: number): { source: string; end: number } | null {
    const chars = this.#chars;
    let i = start + 1;
    const negated = chars[i] === '!' || chars[i] === '^';
    if (negated) i++;
    const members: string[] = [];
    let first = true;
    while (i < chars.length && (chars[i] !== ']' || first)) {
      first = false;
      let low = chars[i]!;
      if (low === '\\' && i + 1 < chars.length) low = chars[++i]!;
      i++;
      if (chars[i] === '-' && i + 1 < chars.length && chars[i + 1] !== ']') {
        let high = chars[i + 1]!;
        i += 2;
        if (high === '\\' && i < chars.length) high = chars[i++]!;
        if (high.codePointAt(0)! < low.codePointAt(0)!)
          throw new EmailGlobError(`has the range ${low}-${high}, whose ends are in the wrong order`);
        members.push(`${literal(low)}-${literal(high)}`);
      } else {
        members.push(literal(low));
      }
    }
    if (i >= chars.length) return null;
    return { source: `[${negated ? '^' : ''}${members.join('')}]`, end: i + 1 };
  }

  /** `{a,b,...}` starting at `start`, or null when it is not closed or has no comma. */
  #braces(start: number): { source: string; end: number } | null {
    const alternatives: string[] = [];
    let i = start + 1;
    for (;;) {
      const { source, end } = this.#sequence(i, true);
      alternatives.push(source);
      if (end >= this.#chars.length) return null;
      if (this.#chars[end] === '}') {
        return alternatives.length < 2 ? null : { source: `(?:${alternatives.join('|')})`, end: end + 1 };
      }
      i = end + 1; // past the comma
    }
  }
}

/** Why `glob` cannot be used, or null. The caller reports a blank glob itself. */
export function emailGlobProblem(glob: string): string | null {
  try {
    new GlobCompiler(userKey(glob)).compile();
    return null;
  } catch (error) {
    if (error instanceof EmailGlobError) return error.message;
    throw error;
  }
}

/**
 * Whether an email matches one of `globs` (case-insensitively; blank globs match nothing). Throws
 * EmailGlobError for a glob emailGlobProblem refuses (validate reports those first).
 */
export function emailGlobMatcher(globs: readonly string[]): (email: string) => boolean {
  const usable = globs.filter((g) => typeof g === 'string' && g.trim() !== '');
  if (usable.length === 0) return () => false;
  const sources = usable.map((g) => new GlobCompiler(userKey(g)).compile());
  const pattern = new RegExp(`^(?:${sources.join('|')})$`, 'u');
  return (email) => pattern.test(userKey(email));
}
