/**
 * YAML reading with source positions: every value the loader reads can be traced back to the
 * line and column it was written at, so that errors point at the value to fix.
 *
 * Files are read by js-yaml 4 with the YAML 1.2 core schema (no dates, no `<<` merge keys, no
 * other YAML 1.1 conversions; its int and float rules below are the core schema's, as the `yaml`
 * package applies them). Its `listener` reports where every node opens and closes; from those
 * events a document comes out as plain data plus the offsets of its values (no node objects are
 * kept), and offsets become lines and columns only for the values that are reported or located.
 * js-yaml reads the 5 MB benchmark file about ten times faster than the `yaml` package's document
 * API, in a quarter of the memory (bench/desired-load.mjs, bench/RESULTS.md).
 *
 * A file js-yaml refuses is described, not read: its syntax errors are worded and placed by the
 * `yaml` package (loaded only then), whose messages name the construct at fault; if it finds
 * nothing wrong, js-yaml's own message is reported. Either way no document of that file is read.
 */
import jsyaml from 'js-yaml';
import { lineStartsOf, type ContainerOffsets, type ParsedDocument } from './positions.js';
import type { Diagnostic } from './types.js';

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

// ---------------------------------------------------------------- the YAML 1.2 core schema

/**
 * Whether a plain scalar can be a number at all: it starts with a digit, a sign or a dot. Most
 * scalars of a desired state (emails, names, keys) are ruled out here, without a regular expression.
 */
function mayBeNumber(data: string): boolean {
  const c = data.charCodeAt(0);
  return (c >= 48 && c <= 57) || c === 43 /* + */ || c === 45 /* - */ || c === 46; /* . */
}

/** The core schema's integers (decimal, 0o octal, 0x hex; no YAML 1.1 binary or sexagesimal). */
const INT = new jsyaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (data: string) =>
    mayBeNumber(data) && (/^[-+]?[0-9]+$/.test(data) || /^0o[0-7]+$/.test(data) || /^0x[0-9a-fA-F]+$/.test(data)),
  construct: (data: string) => {
    if (data.startsWith('0o')) return parseInt(data.slice(2), 8);
    return data.startsWith('0x') ? parseInt(data.slice(2), 16) : parseInt(data, 10);
  },
  predicate: (value: unknown) => typeof value === 'number' && Number.isInteger(value),
});

const FLOAT_NUMBER = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const FLOAT_SPECIAL = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;

/** The core schema's floats, with .inf and .nan. */
const FLOAT = new jsyaml.Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (data: string) => mayBeNumber(data) && (FLOAT_NUMBER.test(data) || FLOAT_SPECIAL.test(data)),
  construct: (data: string) => {
    if (!FLOAT_SPECIAL.test(data)) return parseFloat(data);
    if (data.slice(-3).toLowerCase() === 'nan') return NaN;
    return data.startsWith('-') ? -Infinity : Infinity;
  },
  predicate: (value: unknown) => typeof value === 'number',
});

// js-yaml's own null and bool types are the core schema's already (not in its type declarations).
const { null: NULL, bool: BOOL } = (jsyaml as unknown as { types: Record<'null' | 'bool', jsyaml.Type> }).types;
const CORE_SCHEMA = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: [NULL, BOOL, INT, FLOAT] });

// ---------------------------------------------------------------- positions from listener events

/** Aliases may add at most this many values to a document: beyond it, expansion is an attack ("billion laughs"). */
const MAX_ALIASED_VALUES = 100_000;

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/** The offset of the first character after spaces, line breaks and comments from `at`. */
function skipBlank(text: string, at: number): number {
  let i = at;
  for (;;) {
    const code = text.charCodeAt(i);
    if (isSpace(code)) i++;
    else if (code === 35 /* # */) {
      while (i < text.length && text.charCodeAt(i) !== 10) i++;
    } else return i;
  }
}

/** The end of an anchor, alias or tag token starting at `at`. */
function tokenEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length) {
    const c = text[i]!;
    if (isSpace(text.charCodeAt(i)) || c === ',' || c === '[' || c === ']' || c === '{' || c === '}') break;
    i++;
  }
  return i;
}

/**
 * Builds the offset tables of a file's documents from js-yaml's listener events. Each composed
 * node's content starts after blanks and its properties (`&anchor`, `!tag`), as the `yaml`
 * package places nodes; an alias stands at the node it names; an empty value (`key:` with
 * nothing after it) stands where it would have been written.
 *
 * A large file composes hundreds of thousands of nodes, so nothing is allocated per node: the
 * open nodes, and the nodes composed inside them so far (keys and values, or items, in order),
 * are kept on stacks of numbers and values.
 */
class OffsetRecorder {
  /** Where the content of each document's root starts. */
  readonly roots: number[] = [];
  readonly containers = new Map<object, ContainerOffsets>();
  /** The open nodes: where each opened, and where its children start on the child stacks. */
  #opens: number[] = [];
  #bases: number[] = [];
  /** The nodes composed inside the open ones (a stack of `#top` entries): content start, end, value, size. */
  #starts: number[] = [];
  #ends: number[] = [];
  #results: unknown[] = [];
  /** How many values each stands for, aliases expanded (for the alias bound). */
  #sizes: number[] = [];
  #top = 0;
  #anchors = new Map<string, { start: number; size: number }>();
  #aliased = 0;
  #text = '';

  listener = (event: 'open' | 'close', state: jsyaml.State): void => {
    if (event === 'open') {
      this.#text = state.input;
      this.#opens.push(state.position);
      this.#bases.push(this.#top);
      return;
    }
    const open = this.#opens.pop()!;
    const base = this.#bases.pop()!;
    const count = this.#top - base;
    const { result, kind, tag } = state as unknown as { result: unknown; kind: string | null; tag: string | null };
    const text = this.#text;
    let start = skipBlank(text, open);
    let anchor: string | null = null;
    for (let c = text[start]; c === '&' || c === '!'; c = text[start]) {
      const end = tokenEnd(text, start);
      if (c === '&') anchor = text.slice(start + 1, end);
      start = skipBlank(text, end);
    }
    let size = 1;
    if (count === 1 && this.#results[base] === result) {
      // A node read through a mapping attempt that found no key: the inner node is this one.
      start = this.#starts[base]!;
      size = this.#sizes[base]!;
    } else if (kind === null && text[start] === '*') {
      const target = this.#anchors.get(text.slice(start + 1, tokenEnd(text, start)));
      if (target) {
        start = target.start;
        size = target.size;
        this.#aliased += size;
        if (this.#aliased > MAX_ALIASED_VALUES) throw new AliasBombError();
      }
    } else if (kind === null && tag === null) {
      start = open; // an empty value: where it would have been written
    } else {
      for (let i = base; i < this.#top; i++) size += this.#sizes[i]!;
    }
    if (isContainer(result) && !this.containers.has(result)) this.#register(start, result, base);
    if (anchor !== null) this.#anchors.set(anchor, { start, size });
    // Its children are read: this node takes their place on the stack, as a child of its parent.
    this.#top = base;
    if (this.#opens.length === 0) {
      this.roots.push(start);
      return;
    }
    this.#starts[base] = start;
    this.#ends[base] = state.position;
    this.#results[base] = result;
    this.#sizes[base] = size;
    this.#top = base + 1;
  };

  /** Records where the entries of a mapping or sequence are written (its children: `base` to the top). */
  #register(start: number, container: object, base: number): void {
    const text = this.#text;
    const top = this.#top;
    const offsets: ContainerOffsets = [];
    if (Array.isArray(container)) {
      // A flow sequence entry `key: value` is one item of two nodes.
      const starts: number[] = [];
      for (let i = base; i < top; i++) {
        starts.push(this.#starts[i]!);
        if (text[skipBlank(text, this.#ends[i]!)] === ':' && i + 1 < top) i++;
      }
      const aligned = starts.length === container.length;
      for (let i = 0; i < container.length; i++) offsets.push(aligned ? starts[i]! : start);
    } else {
      const wanted = Object.keys(container).length;
      for (let i = base; i < top && offsets.length < 3 * wanted; i++) {
        const key = i;
        const hasValue = text[skipBlank(text, this.#ends[key]!)] === ':' && i + 1 < top;
        const value = hasValue ? ++i : key;
        offsets.push(keyText(this.#results[key]), this.#starts[key]!, this.#starts[value]!);
      }
    }
    this.containers.set(container, offsets);
  }
}

/** A mapping key as js-yaml stores it: a string. */
function keyText(key: unknown): string {
  return isContainer(key) && !Array.isArray(key) ? '[object Object]' : String(key);
}

class AliasBombError extends Error {
  constructor() {
    super(
      `aliases expand the document beyond ${MAX_ALIASED_VALUES.toLocaleString('en')} values; refusing to read it (an alias bomb?)`,
    );
  }
}

/** The parser's message without its excerpt of the source: the excerpt could echo anything. */
function parserMessage(message: string): string {
  return message.replace(/ at line \d+, column \d+:[\s\S]*$/, '').trim();
}

/**
 * The syntax errors of a file js-yaml refused, as the `yaml` package words and places them
 * (see the module comment); js-yaml's own when that finds none.
 */
async function syntaxDiagnostics(text: string, file: string, error: unknown): Promise<Diagnostic[]> {
  const { LineCounter, parseAllDocuments } = await import('yaml');
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const diagnostics: Diagnostic[] = [];
  for (const document of Array.isArray(parsed) ? parsed : [parsed]) {
    for (const problem of [...document.errors, ...document.warnings]) {
      const at = problem.linePos?.[0];
      diagnostics.push({
        file,
        line: at?.line,
        column: at?.col,
        message: `YAML syntax: ${parserMessage(problem.message)}`,
      });
    }
  }
  if (diagnostics.length > 0) return diagnostics;
  const mark =
    error instanceof jsyaml.YAMLException ? (error as { mark?: { line: number; column: number } }).mark : undefined;
  const reason = error instanceof jsyaml.YAMLException ? error.reason : String(error);
  return [
    { file, line: mark ? mark.line + 1 : 1, column: mark ? mark.column + 1 : 1, message: `YAML syntax: ${reason}` },
  ];
}

/**
 * Parses a file's text into its documents. Syntax errors (and parser warnings, which mean the
 * file does not say what it seems to) come back as diagnostics, and then no document of the
 * file is read, so that no check runs on half-read data. Empty documents are left out.
 */
export async function parseYamlFile(
  text: string,
  file: string,
): Promise<{ documents: ParsedDocument[]; diagnostics: Diagnostic[] }> {
  // js-yaml drops a byte order mark before reading; offsets are into the text it reads.
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const recorder = new OffsetRecorder();
  let values: unknown[];
  try {
    const warnings: jsyaml.YAMLException[] = [];
    const options = {
      schema: CORE_SCHEMA,
      listener: recorder.listener,
      onWarning: (w: jsyaml.YAMLException) => warnings.push(w),
    };
    values = jsyaml.loadAll(source, null, options) as unknown[];
    if (warnings.length > 0) throw warnings[0];
  } catch (error) {
    if (error instanceof AliasBombError) {
      return { documents: [], diagnostics: [{ file, line: 1, column: 1, message: `YAML: ${error.message}` }] };
    }
    return { documents: [], diagnostics: await syntaxDiagnostics(text, file, error) };
  }
  const lineStarts = lineStartsOf(source);
  const documents: ParsedDocument[] = [];
  values.forEach((value, index) => {
    // `---` followed by nothing, or a document of comments only, holds null: an empty document.
    if (value === null || value === undefined) return;
    const root = recorder.roots[index];
    documents.push({
      file,
      index,
      value,
      offsets: { root: root ?? -1, containers: recorder.containers },
      lineStarts,
    });
  });
  return { documents, diagnostics: [] };
}

/**
 * Parses one YAML file of a desired state into `documents`, its problems into `diagnostics`; an
 * empty file is a problem of its own (a desired-state file starts with `version: 2`).
 */
export async function parseYamlInto(
  text: string,
  file: string,
  documents: ParsedDocument[],
  diagnostics: Diagnostic[],
): Promise<void> {
  const parsed = await parseYamlFile(text, file);
  for (const item of parsed.diagnostics) diagnostics.push(item);
  if (parsed.documents.length === 0 && parsed.diagnostics.length === 0)
    diagnostics.push({
      file,
      line: 1,
      column: 1,
      message: 'the file is empty; a desired-state file starts with `version: 2`',
    });
  for (const item of parsed.documents) documents.push(item);
}
