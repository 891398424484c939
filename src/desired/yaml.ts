/**
 * YAML reading with source positions: every value the loader reads can be traced back to the
 * line and column it was written at, so that errors point at the value to fix.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node, type Pair } from 'yaml';
import type { Diagnostic } from './types.js';

/** A path into a document: map keys and list indexes, `['users', 0, 'email']`. */
export type DocPath = readonly (string | number)[];

/** One YAML document of a file, parsed, with what is needed to locate its values. */
export interface ParsedDocument {
  /** The file as shown to people (relative to the current directory). */
  file: string;
  /** 0-based position of the document in its file (files may hold several, separated by `---`). */
  index: number;
  document: Document;
  lineCounter: LineCounter;
  /** The document as plain data (aliases resolved). */
  value: unknown;
}

export interface Position {
  line: number;
  column: number;
}

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `users[0].devices[1].mtu`: the way people refer to a value of the file. */
export function formatPath(path: DocPath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (SIMPLE_KEY.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

/** The parser's message without its excerpt of the source: the excerpt could echo anything. */
function parserMessage(message: string): string {
  return message.replace(/ at line \d+, column \d+:[\s\S]*$/, '').trim();
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
    try {
      documents.push({ file, index, document, lineCounter, value: document.toJS({ maxAliasCount: 1000 }) });
    } catch (error) {
      // A document whose aliases expand without bound ("billion laughs") is refused, not expanded.
      diagnostics.push({ file, line: 1, column: 1, message: `YAML: ${error instanceof Error ? error.message : String(error)}` });
    }
  });
  return { documents, diagnostics };
}

function resolve(node: unknown, document: Document): unknown {
  return isAlias(node) ? node.resolve(document) : node;
}

/**
 * The deepest node along a path, and the map entry that holds it when the last step was a key.
 * `found` tells whether the whole path exists.
 */
function walk(parsed: ParsedDocument, path: DocPath): { node: Node | null; pair: Pair | null; found: boolean } {
  let node = resolve(parsed.document.contents, parsed.document) as Node | null;
  let pair: Pair | null = null;
  for (const segment of path) {
    const current = resolve(node, parsed.document);
    if (isMap(current)) {
      const entry = current.items.find((item) => (isScalar(item.key) ? String(item.key.value) : String(item.key)) === String(segment));
      if (!entry) return { node: current, pair, found: false };
      pair = entry;
      // `key:` with nothing after it has no value node; its key stands for it.
      node = (resolve(entry.value, parsed.document) as Node | null) ?? (entry.key as Node);
    } else if (isSeq(current) && typeof segment === 'number' && segment < current.items.length) {
      pair = null;
      node = resolve(current.items[segment], parsed.document) as Node;
    } else {
      return { node: (current as Node | null) ?? null, pair, found: false };
    }
  }
  return { node, pair, found: true };
}

function positionOf(parsed: ParsedDocument, node: Node | null | undefined): Position {
  const offset = node?.range?.[0];
  if (offset === undefined) return { line: 1, column: 1 };
  const { line, col } = parsed.lineCounter.linePos(offset);
  return { line, column: col };
}

/** Where the value at `path` is written (or the nearest enclosing value that exists). */
export function locateValue(parsed: ParsedDocument, path: DocPath): Position {
  return positionOf(parsed, walk(parsed, path).node);
}

/** Where the key of the map entry at `path` is written: for unknown keys, which have no meaningful value. */
export function locateKey(parsed: ParsedDocument, path: DocPath): Position {
  const { pair, node, found } = walk(parsed, path);
  return positionOf(parsed, found && pair ? (pair.key as Node) : node);
}
