/**
 * Where the values of a desired-state document are written. Both front ends produce the same
 * ParsedDocument: plain data, plus per mapping and sequence the offsets of its entries in the
 * file's text (YAML from js-yaml's listener, CDKTF from the JSON parse tree of the stack), and
 * offsets become lines and columns only for the values that are reported or located.
 */
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

/** A path into a document: map keys and list indexes, `['users', 0, 'email']`. */
export type DocPath = readonly (string | number)[];

/**
 * One document of a front end (a YAML document of a file, or the document a CDKTF stack
 * translates to), with what is needed to locate its values: the one shape the schema check and
 * the document reader take, whatever the file was written in.
 */
export interface ParsedDocument {
  /** The file as shown to people (relative to the current directory). */
  file: string;
  /** 0-based position of the document in its file (files may hold several, separated by `---`). */
  index: number;
  /** The document as plain data (aliases resolved). */
  value: unknown;
  /** Where its values are written: offsets into the file's text. */
  offsets: OffsetTables;
  /** Offset of the start of each line of the file, in order (shared by its documents). */
  lineStarts: number[];
  /**
   * How people name the value at a document path, when not by that path: a translated CDKTF
   * stack names `users[0].devices[1].mtu` by its Terraform address, `firezone_device.laptop.mtu`.
   */
  label?: (path: string) => string;
  /** Written by a translator (CDKTF), not by people: secrets may be `{ tfvar: NAME }` (see schema.ts). */
  translated?: boolean;
}

export interface Position {
  line: number;
  column: number;
}

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `path` followed by one more key or index, formatted as formatPath does. */
export function childPath(path: string, segment: string | number): string {
  if (typeof segment === 'number') return `${path}[${segment}]`;
  if (SIMPLE_KEY.test(segment)) return path === '' ? segment : `${path}.${segment}`;
  return `${path}[${JSON.stringify(segment)}]`;
}

/** `users[0].devices[1].mtu`: the way people refer to a value of the file. */
export function formatPath(path: DocPath): string {
  let text = '';
  for (const segment of path) text = childPath(text, segment);
  return text;
}

/**
 * Sets `target[key]` as an own property whatever the key: assignment of a key taken from a file
 * (`"__proto__"`) would replace the object's prototype instead, hiding the value from every
 * own-key check (the schema's unknown keys, the section rules) while reads still inherit it.
 */
export function setOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Offsets of the start of every line. */
export function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/**
 * The 1-based line of an offset: how many lines start at or before it. The same answer as the
 * yaml package's LineCounter.linePos gave, without an object per call (a large file converts hundreds
 * of thousands of offsets).
 */
export function lineAt(parsed: Pick<ParsedDocument, 'lineStarts'>, offset: number): number {
  const starts = parsed.lineStarts;
  let low = 0;
  let high = starts.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (starts[mid]! <= offset) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The 1-based column of an offset on its line (see lineAt). */
export function columnAt(parsed: Pick<ParsedDocument, 'lineStarts'>, offset: number, line: number): number {
  return line === 0 ? offset : offset - parsed.lineStarts[line - 1]! + 1;
}

/** Line and column of an offset; a value without a node is placed at the start of the file. */
export function positionAt(parsed: ParsedDocument, offset: number): Position {
  if (offset === -1) return { line: 1, column: 1 };
  const line = lineAt(parsed, offset);
  return { line, column: columnAt(parsed, offset, line) };
}

/**
 * Where `container[segment]` is in the container's offsets: for a mapping, the index of the
 * entry's key text (its key offset follows, then its value offset); for a sequence, the item's
 * index. -1 when the container has no such entry. `hint` is where to look first.
 */
export function entryIndex(offsets: ContainerOffsets, container: unknown, segment: string | number, hint = 0): number {
  if (Array.isArray(container)) return typeof segment === 'number' && segment < offsets.length ? segment : -1;
  const key = String(segment);
  if (offsets[hint] === key) return hint;
  for (let i = 0; i < offsets.length; i += 3) if (offsets[i] === key) return i;
  return -1;
}

/** The offsets of a mapping or sequence of the document's data; undefined for anything else. */
export function offsetsOf(parsed: ParsedDocument, container: unknown): ContainerOffsets | undefined {
  return isContainer(container) ? parsed.offsets.containers.get(container) : undefined;
}

/** The offset of the value at `path` below `container` (at `offset`), or of the deepest enclosing value that exists. */
function follow(
  parsed: ParsedDocument,
  container: unknown,
  offset: number,
  path: DocPath,
): { value: number; key: number | null; found: boolean } {
  let key: number | null = null;
  let current = container;
  let at = offset;
  for (const segment of path) {
    const offsets = offsetsOf(parsed, current);
    const index = offsets ? entryIndex(offsets, current, segment) : -1;
    if (index === -1) {
      // A value a translator added (a stack's `users` list) is placed at what holds it.
      const child = isContainer(current) ? (current as Record<string | number, unknown>)[segment] : undefined;
      if (!isContainer(child) || !offsetsOf(parsed, child)) return { value: at, key, found: false };
      current = child;
      key = null;
      continue;
    }
    if (Array.isArray(current)) {
      at = offsets![index] as number;
      key = null;
    } else {
      key = offsets![index + 1] as number;
      at = offsets![index + 2] as number;
    }
    current = (current as Record<string | number, unknown>)[segment];
  }
  return { value: at, key, found: true };
}

/** Where the value at `path` is written (or the nearest enclosing value that exists). */
export function locateValue(parsed: ParsedDocument, path: DocPath): Position {
  return positionAt(parsed, follow(parsed, parsed.value, parsed.offsets.root, path).value);
}

/** Where the key of the map entry at `path` is written: for unknown keys, which have no meaningful value. */
export function locateKey(parsed: ParsedDocument, path: DocPath): Position {
  const { value, key, found } = follow(parsed, parsed.value, parsed.offsets.root, path);
  return positionAt(parsed, found && key !== null ? key : value);
}

/** Offset of `container[segment]` given the container's own offset: the container's when it has no such entry. */
export function childOffset(
  parsed: ParsedDocument,
  container: unknown,
  offset: number,
  segment: string | number,
  hint = 0,
): number {
  const offsets = offsetsOf(parsed, container);
  const index = offsets ? entryIndex(offsets, container, segment, hint) : -1;
  if (index === -1) return offset;
  return (Array.isArray(container) ? offsets![index] : offsets![index + 2]) as number;
}
