/**
 * A fast reader for the plain YAML that desired-state files are made of: block mappings and
 * sequences indented with spaces, one-line flow mappings and sequences (`{ name: laptop, mtu:
 * 1380 }`), plain and quoted one-line scalars, comments.
 *
 * Why it exists: the `yaml` package builds a concrete syntax tree and then a Document of node
 * objects for every value; on a 5 MB file of 60,000 declarations that alone takes seconds and
 * hundreds of megabytes (bench/desired-load.mjs), whatever its options. This reader gives the
 * same plain data and the same value positions as the yaml path of ./yaml.ts (toJS, node
 * ranges) in one pass over the text.
 *
 * It decides nothing the yaml package could decide differently: anything outside the subset (tabs,
 * anchors, aliases, tags, block scalars, multi-line scalars or flow collections, escapes other
 * than \" and \\, empty values, explicit keys, several documents, duplicate keys, anything odd)
 * makes it decline, and the caller parses the file with the yaml package, which also reports every
 * syntax error. A file it accepts is one the yaml package reads without error or warning. Plain
 * scalars are typed by the yaml package's own core-schema tags. test/unit/desired-yaml-subset.test.ts
 * holds it to that against the yaml package on fixtures and generated documents.
 */
import { Document, isScalar, LineCounter } from 'yaml';

/**
 * Where the values of one mapping or sequence are written, as offsets into the file's text.
 * Mapping: `[key, keyOffset, valueOffset, key, keyOffset, valueOffset, ...]` in source order.
 * Sequence: the offset of each item. An offset of -1 means the value has no node.
 */
export type ContainerOffsets = (string | number)[];

export interface OffsetTables {
  /** Offset of the document's root value. */
  root: number;
  /** The offsets of each mapping and sequence of the plain data, keyed by that object or array. */
  containers: Map<object, ContainerOffsets>;
}

export interface SubsetDocument extends OffsetTables {
  value: unknown;
  lineCounter: LineCounter;
}

/** Thrown inside the reader when the text leaves the subset; never escapes readYamlSubset. */
const DECLINE = Symbol('decline');

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
const SPACE = 32;
const HASH = 35;
const DASH = 45;
const COLON = 58;
const DOUBLE_QUOTE = 34;
const SINGLE_QUOTE = 39;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;

/**
 * Characters the subset accepts anywhere: line ends (LF, or CRLF as Windows checkouts have them),
 * printable ASCII, and Unicode letters and symbols beyond Latin-1's controls and no-break space,
 * without line or paragraph separators, byte-order marks, noncharacters or unpaired surrogates.
 * Tabs and lone carriage returns are left to the yaml package.
 */
const OUTSIDE_SUBSET_CHARACTER = /[^\n\r\x20-\x7e\u{a1}-\u{2027}\u{202a}-\u{d7ff}\u{e000}-\u{fefe}\u{ff00}-\u{fffd}\u{10000}-\u{10ffff}]|\r(?!\n)/u;

/** First characters that make a value something other than a plain scalar, or an error (`-` and `:` depend on what follows: see plain). */
const INDICATOR_FIRST = new Set([...'?,[]{}#&*!|>\'"%@`'].map((c) => c.charCodeAt(0)));
const FLOW_INDICATOR = new Set([COMMA, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE]);

/** Mapping keys the subset reads: what the desired-state format uses, and typos of it. */
function isKeyStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}
function isKeyPart(c: number): boolean {
  return isKeyStart(c) || (c >= 48 && c <= 57) || c === DASH;
}
const MAX_KEY_LENGTH = 128;
const MAX_DEPTH = 64;

type Tag = { default?: boolean | 'key'; test?: RegExp; collection?: string; resolve: (...args: never[]) => unknown };

/** The core-schema scalar tags, as the yaml package composes plain scalars with them. */
const reference = new Document(null, { uniqueKeys: true });
const scalarTags = (reference.schema.tags as unknown as Tag[]).filter((tag) => !tag.collection && tag.test !== undefined);
const resolveOptions = reference.options;

function declineOnError(): never {
  throw DECLINE;
}

/** What the yaml package makes of a plain scalar: the first default tag whose test matches, else a string. */
function plainValue(source: string, atKey: boolean): unknown {
  for (const tag of scalarTags) {
    if ((tag.default === true || (atKey && tag.default === 'key')) && tag.test!.test(source)) {
      const resolve = tag.resolve as (value: string, onError: (message: string) => void, options: typeof resolveOptions) => unknown;
      const resolved = resolve(source, declineOnError, resolveOptions);
      return isScalar(resolved) ? resolved.value : resolved;
    }
  }
  return source;
}

class SubsetReader {
  readonly containers = new Map<object, ContainerOffsets>();
  /** Keys already known to read as themselves (a file repeats a few dozen keys thousands of times). */
  private readonly plainKeys = new Set<string>();
  /** Start of the current line. */
  private lineStart = 0;
  /** Indentation of the current line (meaningful after contentLine). */
  private indent = 0;
  /** Just past the scalar or flow collection read last. */
  private end = 0;
  /** Collections open around the current one. */
  private depth = 0;

  constructor(private readonly text: string) {}

  private code(i: number): number {
    // Past the end of the text: NaN, equal to no character; where the end matters, callers use atLineEnd.
    return this.text.charCodeAt(i);
  }

  private atLineEnd(i: number): boolean {
    // A carriage return is always followed by a line feed here (readYamlSubset declines lone ones).
    const c = this.text.charCodeAt(i);
    return i >= this.text.length || c === NEWLINE || c === CARRIAGE_RETURN;
  }

  private skipSpaces(i: number): number {
    while (this.text.charCodeAt(i) === SPACE) i++;
    return i;
  }

  private nextLine(i: number): number {
    const end = this.text.indexOf('\n', i);
    return end === -1 ? this.text.length : end + 1;
  }

  /**
   * Moves to the first line at or after the current one that holds content (not blank, not only
   * a comment) and returns its indentation, or -1 at the end of the text.
   */
  private contentLine(): number {
    const { text } = this;
    while (this.lineStart < text.length) {
      const first = this.skipSpaces(this.lineStart);
      if (this.atLineEnd(first) || text.charCodeAt(first) === HASH) {
        this.lineStart = this.nextLine(first);
        continue;
      }
      this.indent = first - this.lineStart;
      // A document marker or directive at the margin: several documents, or a header to read properly.
      if (this.indent === 0 && (text.startsWith('---', first) || text.startsWith('...', first) || text.charCodeAt(first) === 37)) throw DECLINE;
      return this.indent;
    }
    return -1;
  }

  /** After a value: only spaces, then the line end or a comment set off by a space. */
  private finishLine(i: number): void {
    const after = this.skipSpaces(i);
    if (!this.atLineEnd(after) && !(this.text.charCodeAt(after) === HASH && after > i)) throw DECLINE;
    this.lineStart = this.nextLine(after);
  }

  /** Whether the rest of the line from `i` (after spaces) is empty or a comment. */
  private restIsEmpty(i: number): boolean {
    const after = this.skipSpaces(i);
    return this.atLineEnd(after) || (this.text.charCodeAt(after) === HASH && after > i);
  }

  private isSequenceItem(i: number): boolean {
    return this.code(i) === DASH && (this.atLineEnd(i + 1) || this.code(i + 1) === SPACE);
  }

  /** The end of a `key:` starting at `i` (the offset of its colon), or -1 when none starts there. */
  private keyEnd(i: number, inFlow: boolean): number {
    if (!isKeyStart(this.code(i))) return -1;
    let j = i + 1;
    while (isKeyPart(this.code(j))) j++;
    if (this.code(j) !== COLON) return -1;
    const next = j + 1;
    if (!(this.code(next) === SPACE || (!inFlow && this.atLineEnd(next)))) return -1;
    return j - i > MAX_KEY_LENGTH ? -1 : j;
  }

  private key(object: Record<string, unknown>, start: number, end: number): string {
    const key = this.text.slice(start, end);
    if (!this.plainKeys.has(key)) {
      // A key the core schema reads as something else (true, null), or one JavaScript treats specially.
      if (plainValue(key, true) !== key || key === '__proto__') throw DECLINE;
      this.plainKeys.add(key);
    }
    if (Object.prototype.hasOwnProperty.call(object, key)) throw DECLINE; // the yaml package reports repeats
    return key;
  }

  /** The node on the lines after a `key:` or `-` with nothing after it on its own line. */
  private blockBelow(parentIndent: number, sequenceAtParentIndent: boolean): { value: unknown; at: number } {
    const indent = this.contentLine();
    const first = this.lineStart + indent;
    let value: unknown;
    this.enter();
    if (indent > parentIndent) value = this.isSequenceItem(first) ? this.sequence(indent) : this.mapping(indent, first);
    else if (indent === parentIndent && sequenceAtParentIndent && this.isSequenceItem(first)) value = this.sequence(indent);
    else throw DECLINE; // an empty value: left to the yaml package
    this.depth--;
    return { value, at: first };
  }

  /** One level deeper; a nesting deeper than any desired state is left to the yaml package (and the stack spared). */
  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw DECLINE;
  }

  /** A value written after `key: ` or `- ` on the same line; moves to the next line. */
  private inlineValue(i: number): unknown {
    const value = this.flowOrScalar(i, false);
    this.finishLine(this.end);
    return value;
  }

  /** A block mapping whose keys stand at column `indent`, the first one at offset `first`. */
  mapping(indent: number, first: number): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    const offsets: ContainerOffsets = [];
    let keyAt = first;
    for (;;) {
      const colon = this.keyEnd(keyAt, false);
      if (colon === -1) throw DECLINE;
      const key = this.key(object, keyAt, colon);
      const valueStart = this.skipSpaces(colon + 1);
      let value: unknown;
      let valueAt: number;
      if (this.restIsEmpty(colon + 1)) {
        this.lineStart = this.nextLine(valueStart);
        ({ value, at: valueAt } = this.blockBelow(indent, true));
      } else {
        valueAt = valueStart;
        value = this.inlineValue(valueStart);
      }
      object[key] = value;
      offsets.push(key, keyAt, valueAt);
      const next = this.contentLine();
      if (next < indent) break;
      if (next > indent) throw DECLINE;
      keyAt = this.lineStart + next; // a `- ` here, after a value on the key line, is no key: keyEnd declines it
    }
    this.containers.set(object, offsets);
    return object;
  }

  /** A block sequence whose dashes stand at column `indent`; the current line holds the first one. */
  sequence(indent: number): unknown[] {
    const items: unknown[] = [];
    const offsets: ContainerOffsets = [];
    for (;;) {
      const dash = this.lineStart + indent;
      const start = this.skipSpaces(dash + 1);
      if (this.restIsEmpty(dash + 1)) {
        this.lineStart = this.nextLine(start);
        const { value, at } = this.blockBelow(indent, false);
        items.push(value);
        offsets.push(at);
      } else if (this.isSequenceItem(start)) {
        throw DECLINE; // `- - x`
      } else if (this.keyEnd(start, false) !== -1) {
        items.push(this.mapping(start - this.lineStart, start));
        offsets.push(start);
      } else {
        items.push(this.inlineValue(start));
        offsets.push(start);
      }
      const next = this.contentLine();
      if (next < indent) break;
      const at = this.lineStart + next;
      if (next > indent) throw DECLINE;
      if (!this.isSequenceItem(at)) break; // the next key of the mapping this sequence is the value of
    }
    this.containers.set(items, offsets);
    return items;
  }

  /** A scalar or flow collection on one line, from `i`; sets `end` just past it. */
  private flowOrScalar(i: number, inFlow: boolean): unknown {
    const c = this.code(i);
    if (c === DOUBLE_QUOTE) return this.doubleQuoted(i);
    if (c === SINGLE_QUOTE) return this.singleQuoted(i);
    if (c === OPEN_BRACE) return this.flowMapping(i);
    if (c === OPEN_BRACKET) return this.flowSequence(i);
    return this.plain(i, inFlow);
  }

  private doubleQuoted(i: number): string {
    const { text } = this;
    let escaped = false;
    for (let j = i + 1; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === DOUBLE_QUOTE) {
        this.end = j + 1;
        const body = text.slice(i + 1, j);
        return escaped ? body.replace(/\\(["\\])/g, '$1') : body;
      }
      if (c === NEWLINE || c === CARRIAGE_RETURN) break;
      if (c === BACKSLASH) {
        // `\"` and `\\` (what exports of names with quotes hold); every other escape is left to the yaml package.
        const next = text.charCodeAt(j + 1);
        if (next !== DOUBLE_QUOTE && next !== BACKSLASH) break;
        escaped = true;
        j++;
      }
    }
    throw DECLINE;
  }

  private singleQuoted(i: number): string {
    const { text } = this;
    let escaped = false;
    for (let j = i + 1; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === NEWLINE || c === CARRIAGE_RETURN) break;
      if (c !== SINGLE_QUOTE) continue;
      if (text.charCodeAt(j + 1) === SINGLE_QUOTE) {
        escaped = true;
        j++;
        continue;
      }
      const body = text.slice(i + 1, j);
      this.end = j + 1;
      return escaped ? body.replaceAll("''", "'") : body;
    }
    throw DECLINE;
  }

  private plain(i: number, inFlow: boolean): unknown {
    const { text } = this;
    const first = text.charCodeAt(i);
    // `-` and `:` start a plain scalar when a character of it follows (`-1`, `::/0`), else they are indicators.
    if (INDICATOR_FIRST.has(first) || ((first === DASH || first === COLON) && (this.atLineEnd(i + 1) || text.charCodeAt(i + 1) === SPACE || (inFlow && FLOW_INDICATOR.has(text.charCodeAt(i + 1)))))) {
      throw DECLINE;
    }
    let j = i;
    let end = i; // just past the last character that is not a space
    for (; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === NEWLINE || c === CARRIAGE_RETURN) break;
      if (c === SPACE) continue;
      if (c === HASH && text.charCodeAt(j - 1) === SPACE) break;
      if (c === COLON) {
        const next = text.charCodeAt(j + 1);
        if (this.atLineEnd(j + 1) || next === SPACE || (inFlow && FLOW_INDICATOR.has(next))) throw DECLINE;
      }
      if (inFlow && FLOW_INDICATOR.has(c)) break;
      end = j + 1;
    }
    // In a flow collection, what follows (a line end, a comment) is for the collection to accept or decline.
    this.end = end;
    return plainValue(text.slice(i, end), false);
  }

  private flowMapping(i: number): Record<string, unknown> {
    this.enter();
    const object: Record<string, unknown> = {};
    const offsets: ContainerOffsets = [];
    let j = this.skipSpaces(i + 1);
    if (this.code(j) !== CLOSE_BRACE) {
      for (;;) {
        const colon = this.keyEnd(j, true);
        if (colon === -1) throw DECLINE;
        const key = this.key(object, j, colon);
        const valueAt = this.skipSpaces(colon + 1);
        const valueCode = this.code(valueAt);
        if (valueCode === COMMA || valueCode === CLOSE_BRACE) throw DECLINE; // empty value
        object[key] = this.flowOrScalar(valueAt, true);
        offsets.push(key, j, valueAt);
        j = this.skipSpaces(this.end);
        if (this.code(j) === CLOSE_BRACE) break;
        if (this.code(j) !== COMMA) throw DECLINE;
        j = this.skipSpaces(j + 1); // a trailing comma leaves an empty entry: declined below
      }
    }
    this.containers.set(object, offsets);
    this.end = j + 1;
    this.depth--;
    return object;
  }

  private flowSequence(i: number): unknown[] {
    this.enter();
    const items: unknown[] = [];
    const offsets: ContainerOffsets = [];
    let j = this.skipSpaces(i + 1);
    if (this.code(j) !== CLOSE_BRACKET) {
      for (;;) {
        const itemCode = this.code(j);
        if (itemCode === COMMA || itemCode === CLOSE_BRACKET) throw DECLINE; // empty item
        items.push(this.flowOrScalar(j, true));
        offsets.push(j);
        j = this.skipSpaces(this.end);
        if (this.code(j) === CLOSE_BRACKET) break;
        if (this.code(j) !== COMMA) throw DECLINE;
        j = this.skipSpaces(j + 1); // a trailing comma leaves an empty item: declined below
      }
    }
    this.containers.set(items, offsets);
    this.end = j + 1;
    this.depth--;
    return items;
  }

  /** Skips a `---` line (with nothing else on it) before the first content. */
  private skipDocumentStart(): void {
    const { text } = this;
    while (this.lineStart < text.length) {
      const first = this.skipSpaces(this.lineStart);
      if (this.atLineEnd(first) || text.charCodeAt(first) === HASH) {
        this.lineStart = this.nextLine(first);
        continue;
      }
      if (first === this.lineStart && text.startsWith('---', first) && this.restIsEmpty(first + 3)) this.lineStart = this.nextLine(first);
      return;
    }
  }

  /** The whole text as one document, or DECLINE. */
  document(): { value: unknown; root: number } {
    this.skipDocumentStart();
    const indent = this.contentLine();
    // No content: the yaml package says what an empty file is. A root indented: left to it too.
    if (indent !== 0) throw DECLINE;
    const first = this.lineStart;
    const value = this.isSequenceItem(first) ? this.sequence(0) : this.mapping(0, first);
    if (this.contentLine() !== -1) throw DECLINE;
    return { value, root: first };
  }
}

/** The line starts of a text, as the yaml package's parser records them. */
function countLines(text: string): LineCounter {
  const lineCounter = new LineCounter();
  lineCounter.addNewLine(0);
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineCounter.addNewLine(i + 1);
  return lineCounter;
}

/**
 * Reads `text` when it is one document within the subset; null means "parse it with the yaml
 * package" (it may be perfectly valid YAML, or not YAML at all).
 */
export function readYamlSubset(text: string): SubsetDocument | null {
  if (OUTSIDE_SUBSET_CHARACTER.test(text)) return null;
  const reader = new SubsetReader(text);
  let read: { value: unknown; root: number };
  try {
    read = reader.document();
  } catch (error) {
    if (error === DECLINE) return null;
    throw error;
  }
  return { value: read.value, root: read.root, containers: reader.containers, lineCounter: countLines(text) };
}
