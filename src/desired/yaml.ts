/**
 * YAML reading with source positions: every value the loader reads can be traced back to the
 * line and column it was written at, so that errors point at the value to fix.
 *
 * Files are read by the yaml package, which also reports every syntax error. A document comes
 * out as plain data plus the offsets of its values (no node objects are kept), and offsets become
 * lines and columns only for the values that are reported or located.
 *
 * The parser is most of the cost of loading a very large desired state (about 3 s for 5 MB,
 * bench/desired-load.mjs). A hand-written reader for the plain subset of YAML was measured at a
 * tenth of that, and deliberately not kept: the file that decides who may reach what is read by
 * one well-kept parser, not by a second one of our own that could disagree with it.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node } from 'yaml';
import type { Diagnostic } from './types.js';

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

/** One YAML document of a file, parsed, with what is needed to locate its values. */
export interface ParsedDocument {
  /** The file as shown to people (relative to the current directory). */
  file: string;
  /** 0-based position of the document in its file (files may hold several, separated by `---`). */
  index: number;
  /** The document as plain data (aliases resolved). */
  value: unknown;
  /** Where its values are written: offsets into the file's text. */
  offsets: OffsetTables;
  lineCounter: LineCounter;
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

/** The parser's message without its excerpt of the source: the excerpt could echo anything. */
function parserMessage(message: string): string {
  return message.replace(/ at line \d+, column \d+:[\s\S]*$/, '').trim();
}

function resolveAlias(node: unknown, document: Document): unknown {
  return isAlias(node) ? node.resolve(document) : node;
}

function offsetOf(node: unknown): number {
  return (node as Node | null | undefined)?.range?.[0] ?? -1;
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/**
 * The offsets of a document the yaml package parsed, walking its nodes beside the plain data
 * toJS made of them. Aliases stand for the node they name, as they do in the data.
 */
function offsetTablesOf(document: Document, value: unknown): OffsetTables {
  const containers = new Map<object, ContainerOffsets>();
  const visited = new Set<unknown>();
  const visit = (node: unknown, data: unknown): void => {
    if (!isContainer(data) || visited.has(node)) return;
    visited.add(node);
    if (isMap(node) && !Array.isArray(data)) {
      const offsets: ContainerOffsets = [];
      for (const pair of node.items) {
        const valueNode = resolveAlias(pair.value, document);
        // `key:` with nothing after it has no value node; its key stands for it.
        offsets.push(isScalar(pair.key) ? String(pair.key.value) : String(pair.key), offsetOf(pair.key), offsetOf(valueNode ?? pair.key));
        if (isScalar(pair.key)) visit(valueNode, (data as Record<string, unknown>)[pair.key.value === null ? '' : String(pair.key.value)]);
      }
      containers.set(data, offsets);
    } else if (isSeq(node) && Array.isArray(data)) {
      const offsets: ContainerOffsets = [];
      node.items.forEach((item, i) => {
        const itemNode = resolveAlias(item, document);
        offsets.push(offsetOf(itemNode));
        visit(itemNode, data[i]);
      });
      containers.set(data, offsets);
    }
  };
  const root = resolveAlias(document.contents, document);
  visit(root, value);
  return { root: offsetOf(root), containers };
}

/**
 * Parses a file's text into its documents. Syntax errors (and parser warnings, which mean the
 * file does not say what it seems to) come back as diagnostics; documents with any of them are
 * left out so that no check runs on half-read data. Empty documents are left out too.
 */
export function parseYamlFile(text: string, file: string): { documents: ParsedDocument[]; diagnostics: Diagnostic[] } {
  const lineCounter = new LineCounter();
  const diagnostics: Diagnostic[] = [];
  const documents: ParsedDocument[] = [];
  const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  // parseAllDocuments returns an EmptyStream (an empty array) for a file with no document at all.
  const list = Array.isArray(parsed) ? parsed : [parsed];
  list.forEach((document, index) => {
    const problems = [...document.errors, ...document.warnings];
    for (const problem of problems) {
      const at = problem.linePos?.[0];
      diagnostics.push({ file, line: at?.line, column: at?.col, message: `YAML syntax: ${parserMessage(problem.message)}` });
    }
    // `---` followed by nothing holds a null scalar: an empty document, like one of comments only.
    const contents = document.contents;
    if (problems.length > 0 || contents === null || (isScalar(contents) && contents.value === null)) return;
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: 1000 });
    } catch (error) {
      // A document whose aliases expand without bound ("billion laughs") is refused, not expanded.
      diagnostics.push({ file, line: 1, column: 1, message: `YAML: ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    documents.push({ file, index, value, offsets: offsetTablesOf(document, value), lineCounter });
  });
  return { documents, diagnostics };
}

/**
 * The 1-based line of an offset: how many lines start at or before it. The same answer as the
 * yaml package's LineCounter.linePos, without an object per call (a large file converts hundreds
 * of thousands of offsets).
 */
export function lineAt(parsed: ParsedDocument, offset: number): number {
  const starts = parsed.lineCounter.lineStarts;
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
export function columnAt(parsed: ParsedDocument, offset: number, line: number): number {
  return line === 0 ? offset : offset - parsed.lineCounter.lineStarts[line - 1]! + 1;
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
function follow(parsed: ParsedDocument, container: unknown, offset: number, path: DocPath): { value: number; key: number | null; found: boolean } {
  let key: number | null = null;
  let current = container;
  let at = offset;
  for (const segment of path) {
    const offsets = offsetsOf(parsed, current);
    const index = offsets ? entryIndex(offsets, current, segment) : -1;
    if (index === -1) return { value: at, key, found: false };
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
export function childOffset(parsed: ParsedDocument, container: unknown, offset: number, segment: string | number, hint = 0): number {
  const offsets = offsetsOf(parsed, container);
  const index = offsets ? entryIndex(offsets, container, segment, hint) : -1;
  if (index === -1) return offset;
  return (Array.isArray(container) ? offsets![index] : offsets![index + 2]) as number;
}
