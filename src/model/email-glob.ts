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
 *
 * Matching never backtracks: a glob is compiled to a small automaton (one state per character of
 * the glob, about) and the email is read once, left to right, keeping the set of states it can be
 * in. The time is linear in the email's length times the globs' total length, whatever the glob:
 * `*a*a*a*a*a*a*a*a*x` against a long run of `a` costs no more than its length says. A glob is at
 * most EMAIL_GLOB_MAX_LENGTH characters (emailGlobProblem says so; validate reports it).
 */
import { userKey } from './keys.js';

/** The longest glob, in characters (code points), that validate accepts (docs/netform.md, "Bounds"). */
export const EMAIL_GLOB_MAX_LENGTH = 1024;

/** Why a glob cannot be used, as a code (src/views/model-email.ts words it). */
export type EmailGlobProblem =
  /** Longer than EMAIL_GLOB_MAX_LENGTH characters. */
  | { code: 'too_long'; length: number; max: number }
  /** A `[low-high]` range whose ends are in the wrong order. */
  | { code: 'range_reversed'; low: string; high: string };

/** A glob that cannot be compiled: `problem` says why (its message is the code). */
export class EmailGlobError extends Error {
  override readonly name = 'EmailGlobError';
  constructor(readonly problem: EmailGlobProblem) {
    super(problem.code);
  }
}

/** One piece of a parsed glob. */
type Piece =
  | { kind: 'one'; test: (codePoint: number) => boolean } // a literal, `?` or `[...]`
  | { kind: 'star' }
  | { kind: 'either'; alternatives: Piece[][] };

const ANY = (): boolean => true;

class GlobParser {
  readonly #chars: string[];

  constructor(glob: string) {
    this.#chars = Array.from(glob); // by code point: `?` is one character, also outside the BMP
  }

  parse(): Piece[] {
    return this.#sequence(0, false).pieces;
  }

  /** Reads up to the end, or inside braces up to a `,` or `}` at this level. */
  #sequence(start: number, inBraces: boolean): { pieces: Piece[]; end: number } {
    const chars = this.#chars;
    const pieces: Piece[] = [];
    let i = start;
    while (i < chars.length) {
      const c = chars[i]!;
      if (inBraces && (c === ',' || c === '}')) break;
      if (c === '\\' && i + 1 < chars.length) {
        pieces.push(literal(chars[i + 1]!));
        i += 2;
      } else if (c === '*') {
        while (chars[i] === '*') i++;
        pieces.push({ kind: 'star' });
      } else if (c === '?') {
        pieces.push({ kind: 'one', test: ANY });
        i++;
      } else {
        const group = c === '[' ? this.#bracket(i) : c === '{' ? this.#braces(i) : null;
        pieces.push(group ? group.piece : literal(c));
        i = group ? group.end : i + 1;
      }
    }
    return { pieces, end: i };
  }

  /** `[...]` starting at `start`, or null when it is not closed (then `[` is an ordinary character). */
  #bracket(start: number): { piece: Piece; end: number } | null {
    const chars = this.#chars;
    let i = start + 1;
    const negated = chars[i] === '!' || chars[i] === '^';
    if (negated) i++;
    const ranges: [number, number][] = [];
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
        if (high.codePointAt(0)! < low.codePointAt(0)!) throw new EmailGlobError({ code: 'range_reversed', low, high });
        ranges.push([low.codePointAt(0)!, high.codePointAt(0)!]);
      } else {
        ranges.push([low.codePointAt(0)!, low.codePointAt(0)!]);
      }
    }
    if (i >= chars.length) return null;
    const inside = (cp: number): boolean => ranges.some(([lo, hi]) => cp >= lo && cp <= hi);
    return { piece: { kind: 'one', test: negated ? (cp) => !inside(cp) : inside }, end: i + 1 };
  }

  /** `{a,b,...}` starting at `start`, or null when it is not closed or has no comma. */
  #braces(start: number): { piece: Piece; end: number } | null {
    const alternatives: Piece[][] = [];
    let i = start + 1;
    for (;;) {
      const { pieces, end } = this.#sequence(i, true);
      alternatives.push(pieces);
      if (end >= this.#chars.length) return null;
      if (this.#chars[end] === '}') {
        return alternatives.length < 2 ? null : { piece: { kind: 'either', alternatives }, end: end + 1 };
      }
      i = end + 1; // past the comma
    }
  }
}

function literal(char: string): Piece {
  const own = char.codePointAt(0)!;
  return { kind: 'one', test: (cp) => cp === own };
}

/**
 * The automaton's states. `one` reads a character that passes `test` and goes to `next`; `star`
 * reads any character and stays, or moves on to `next` without reading; `split` moves to each of
 * `next` without reading; `done` is the end of a glob.
 */
type State =
  | { kind: 'one'; test: (codePoint: number) => boolean; next: number }
  | { kind: 'star'; next: number }
  | { kind: 'split'; next: number[] }
  | { kind: 'done' };

class Automaton {
  readonly states: State[] = [{ kind: 'done' }];

  /** The state that matches `pieces` and then goes on at `next`. */
  sequence(pieces: readonly Piece[], next: number): number {
    let at = next;
    for (let i = pieces.length - 1; i >= 0; i--) at = this.#piece(pieces[i]!, at);
    return at;
  }

  either(starts: number[]): number {
    return this.#add({ kind: 'split', next: starts });
  }

  #piece(piece: Piece, next: number): number {
    if (piece.kind === 'one') return this.#add({ kind: 'one', test: piece.test, next });
    if (piece.kind === 'star') return this.#add({ kind: 'star', next });
    return this.either(piece.alternatives.map((alternative) => this.sequence(alternative, next)));
  }

  #add(state: State): number {
    this.states.push(state);
    return this.states.length - 1;
  }
}

const ONE = 0;
const STAR = 1;
const SPLIT = 2;
const DONE = 3;

/**
 * Runs an automaton over one string: each character costs at most one visit of each state. The
 * states are laid out in typed arrays, and the two sets of current states are reused buffers.
 */
function runner(states: readonly State[], start: number): (text: string) => boolean {
  const size = states.length;
  const kind = new Uint8Array(size);
  const next = new Int32Array(size);
  const tests: ((codePoint: number) => boolean)[] = [];
  const splits: number[][] = [];
  states.forEach((state, s) => {
    kind[s] = { one: ONE, star: STAR, split: SPLIT, done: DONE }[state.kind];
    if (state.kind === 'one' || state.kind === 'star') next[s] = state.next;
    if (state.kind === 'one') tests[s] = state.test;
    if (state.kind === 'split') splits[s] = state.next;
  });
  const seen = new Uint32Array(size);
  const stack = new Int32Array(size * 2 + 1);
  let current = new Int32Array(size);
  let following = new Int32Array(size);
  let generation = 0;
  let count = 0;

  /** Adds `from` and every state it reaches without reading to `following` (the set being built). */
  const add = (from: number): void => {
    let top = 0;
    stack[top++] = from;
    while (top > 0) {
      const s = stack[--top]!;
      if (seen[s] === generation) continue;
      seen[s] = generation;
      const k = kind[s]!;
      if (k === SPLIT) {
        const targets = splits[s]!;
        for (let i = targets.length - 1; i >= 0; i--) stack[top++] = targets[i]!;
      } else {
        following[count++] = s;
        if (k === STAR) stack[top++] = next[s]!;
      }
    }
  };
  const fresh = (): void => {
    generation = generation === 0xffffffff ? 1 : generation + 1;
    if (generation === 1) seen.fill(0);
    count = 0;
  };
  return (text) => {
    fresh();
    add(start);
    let length = count;
    [current, following] = [following, current];
    for (const ch of text) {
      if (length === 0) return false;
      const cp = ch.codePointAt(0)!;
      fresh();
      for (let i = 0; i < length; i++) {
        const s = current[i]!;
        const k = kind[s]!;
        if (k === STAR) add(s);
        else if (k === ONE && tests[s]!(cp)) add(next[s]!);
      }
      length = count;
      [current, following] = [following, current];
    }
    for (let i = 0; i < length; i++) if (kind[current[i]!] === DONE) return true;
    return false;
  };
}

/** Why `glob` cannot be used, or null. The caller reports a blank glob itself. */
export function emailGlobProblem(glob: string): EmailGlobProblem | null {
  const length = Array.from(glob).length;
  if (length > EMAIL_GLOB_MAX_LENGTH) return { code: 'too_long', length, max: EMAIL_GLOB_MAX_LENGTH };
  try {
    new GlobParser(userKey(glob)).parse();
    return null;
  } catch (error) {
    if (error instanceof EmailGlobError) return error.problem;
    throw error;
  }
}

/**
 * Whether an email matches one of `globs` (case-insensitively; blank globs match nothing), in time
 * linear in the email's length times the globs' total length. Throws EmailGlobError for a glob
 * emailGlobProblem refuses for its content (validate reports those first).
 */
export function emailGlobMatcher(globs: readonly string[]): (email: string) => boolean {
  const usable = globs.filter((g) => typeof g === 'string' && g.trim() !== '');
  if (usable.length === 0) return () => false;
  const automaton = new Automaton();
  const starts = usable.map((g) => automaton.sequence(new GlobParser(userKey(g)).parse(), 0));
  const matches = runner(automaton.states, starts.length === 1 ? starts[0]! : automaton.either(starts));
  return (email) => matches(userKey(email));
}
