/**
 * Minimal edits of a desired-state file's text. The `yaml` package's document API finds where each
 * node stands (its source ranges); the edit then splices only those bytes, so that comments, key
 * order, quoting, flow or block style, blank lines, anchors and every other object stay exactly as
 * written. A changed value keeps its quoting and its flow or block style; a new field is a line of
 * its own after the fields that come before it; a new list item is indented as its siblings are.
 */
import {
  Document,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  type Node,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { hasUnsafe } from '../../model/inert.js';
import { renderExportDocument } from '../export/yaml.js';
import { lineStartsOf } from '../positions.js';
import { parseListItemMap } from './item-parse.js';

type Plain = Record<string, unknown>;

/** A splice of the text: `[start, end)` replaced by `text`. */
interface Splice {
  start: number;
  end: number;
  text: string;
  order: number;
}

export class YamlEditError extends Error {
  override readonly name = 'YamlEditError';
}

function lineStart(text: string, pos: number): number {
  return text.lastIndexOf('\n', pos - 1) + 1;
}

/** The offset just after the line break that ends the line holding `pos - 1` (or the text's end). */
function lineEndAfter(text: string, pos: number): number {
  if (pos > 0 && text[pos - 1] === '\n') return pos;
  const at = text.indexOf('\n', pos);
  return at === -1 ? text.length : at + 1;
}

function columnOf(text: string, pos: number): number {
  return pos - lineStart(text, pos);
}

function keyOf(pair: Pair): string {
  const key = pair.key as unknown;
  return isScalar(key) ? String(key.value) : String(key);
}

function rangeOf(node: unknown): [number, number, number] {
  const range = (node as Node | null)?.range;
  if (!range) throw new YamlEditError('a value without a source position');
  return range;
}

/**
 * A value written inline (a scalar, or a flow list or mapping), quoted as `like` was when it is a
 * string; a flow collection padded (`[ a ]`, as export writes one) unless `padded` says otherwise.
 */
export function inlineValue(value: unknown, like?: unknown, padded = true): string {
  const doc = new Document(value);
  const contents = doc.contents as Node | null;
  if (isScalar(contents) && typeof value === 'string') {
    const type = isScalar(like) ? like.type : undefined;
    if (hasUnsafe(value)) contents.type = 'QUOTE_DOUBLE';
    else if (type === 'QUOTE_DOUBLE' || type === 'QUOTE_SINGLE') contents.type = type;
  }
  if (isSeq(contents) || isMap(contents)) {
    contents.flow = true;
    for (const item of (contents as YAMLSeq | YAMLMap).items as unknown[]) {
      const node = isMap(contents) ? (item as Pair).value : item;
      if (isScalar(node) && typeof node.value === 'string' && hasUnsafe(node.value)) node.type = 'QUOTE_DOUBLE';
    }
  }
  return doc
    .toString({ lineWidth: 0, doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER, flowCollectionPadding: padded })
    .replace(/\n$/, '');
}

/** A list item as export writes it (`- name: x` and its further lines), starting at column 0. */
function blockItemLines(listKey: string, item: Plain): string[] {
  const rendered = renderExportDocument('', { [listKey]: [item] });
  return rendered
    .split('\n')
    .slice(1)
    .filter((line) => line !== '')
    .map((line) => line.replace(/^ {2}/, ''));
}

/** Where a node stands: the node, and the list or mapping holding it. */
export interface Located {
  node: unknown;
  /** The list holding it and its index there, for a list item. */
  seq?: YAMLSeq;
  index?: number;
  /** The mapping whose value holds the node (or the list holding it), and under which key. */
  map?: YAMLMap;
  key?: string;
}

/**
 * One file's text and the edits made to it, applied together by `result()`. The whole file's node
 * tree is parsed only when asked for (`documents`); a list item's mapping is parsed alone when it
 * can be (`mapAt`, item-parse.ts). Either way every node's range is an offset into `text`.
 */
export class YamlFileEditor {
  #documents: Document.Parsed[] | undefined;
  readonly #splices: Splice[] = [];
  /** Lists this editor adds to a mapping that had none (by the mapping's offset): where their next item goes. */
  readonly #started = new Map<number | YAMLMap, Map<string, number>>();
  /** The list items' mappings parsed alone, by their offset (null: not parsed alone). */
  readonly #items = new Map<number, YAMLMap | null>();
  #lineStarts: number[] | undefined;
  /** The file has no directive line (`%YAML`, `%TAG`): its list items may be parsed alone. */
  #itemsAlone: boolean | undefined;
  /** Whether the file writes its flow lists padded (`[ a ]`): the whole text is searched once. */
  #padsLists: boolean | undefined;

  constructor(readonly text: string) {}

  /** The file's documents, parsed whole on first use. */
  get documents(): Document.Parsed[] {
    this.#documents ??= parseAllDocuments(this.text) as Document.Parsed[];
    return this.#documents;
  }

  /**
   * The mapping the loader saw at 1-based `line` and `column` and named `path`: parsed alone when
   * it is a list item that can be (the same nodes as the whole file's parse gives), else located
   * in the whole file's tree. Null when the path leads to no mapping.
   */
  mapAt(line: number, column: number, path: string): YAMLMap | null {
    this.#lineStarts ??= lineStartsOf(this.text);
    const offset = (this.#lineStarts[line - 1] ?? this.text.length) + column - 1;
    let map = this.#items.get(offset);
    if (map === undefined && this.#documents === undefined) {
      this.#itemsAlone ??= !/^%/m.test(this.text);
      map = this.#itemsAlone ? parseListItemMap(this.text, offset) : null;
      this.#items.set(offset, map);
    }
    if (map) return map;
    const located = this.locate(this.documentAt(line), path);
    return located && isMap(located.node) ? located.node : null;
  }

  /** The document holding the 1-based `line` (the first when there is one document). */
  documentAt(line: number): Document.Parsed {
    if (this.documents.length <= 1) return this.documents[0]!;
    let offset = 0;
    for (let n = 1; n < line; n++) offset = this.text.indexOf('\n', offset) + 1;
    return this.documents.find((d) => d.range[0] <= offset && offset < d.range[2]) ?? this.documents[0]!;
  }

  /** The node at `path` (`users[0].devices[1]`), with what holds it; null when the path leads nowhere. */
  locate(document: Document.Parsed, path: string): Located | null {
    const segments = [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) =>
      m[2] !== undefined ? Number(m[2]) : m[1]!,
    );
    let at: Located = { node: document.contents };
    for (const segment of segments) {
      const { node } = at;
      if (typeof segment === 'number') {
        if (!isSeq(node) || segment >= node.items.length) return null;
        at = { node: node.items[segment], seq: node, index: segment, ...(at.map ? { map: at.map, key: at.key } : {}) };
      } else {
        if (!isMap(node)) return null;
        at = { node: node.get(segment, true) ?? null, map: node, key: segment };
      }
    }
    return at;
  }

  #splice(start: number, end: number, text: string): void {
    this.#splices.push({ start, end, text, order: this.#splices.length });
  }

  /** Sets `key` of `map` to `value`: the value's bytes replaced, or a new field after those named in `after`. */
  setField(map: YAMLMap, key: string, value: unknown, after: readonly string[] = []): void {
    const pair = map.items.find((p) => keyOf(p) === key);
    if (!pair) return this.#insertField(map, key, value, after);
    const node = pair.value as Node | null;
    if (node === null || !node.range) {
      const end = rangeOf(pair.key)[1];
      return this.#splice(end, end, ` ${inlineValue(value)}`);
    }
    const [start, end] = node.range;
    if (isSeq(node) && !node.flow && Array.isArray(value) && value.length > 0) {
      const indent = ' '.repeat(columnOf(this.text, start));
      const lines = value.map((item) => `- ${inlineValue(item)}`).join(`\n${indent}`);
      const trailing = this.text.slice(start, end).endsWith('\n') ? '\n' : '';
      return this.#splice(start, end, `${lines}${trailing}`);
    }
    if (isSeq(node) && !node.flow) {
      // An empty list in block style cannot be written in place: the field's value becomes `[]`.
      const keyEnd = rangeOf(pair.key)[1];
      return this.#splice(keyEnd, end, `: ${inlineValue(value)}\n`);
    }
    this.#splice(start, end, inlineValue(value, node, this.#padded(start, end)));
  }

  /**
   * Whether a flow collection written at `[start, end)` is padded (`[ a ]`): as the one it replaces
   * is, else as the file writes its lists (export pads them).
   */
  #padded(start = 0, end = 0): boolean {
    const source = this.text.slice(start, end);
    if (/^[[{]\S/.test(source) && !/^(\[\]|\{\})$/.test(source)) return false;
    if (/^[[{]\s/.test(source)) return true;
    this.#padsLists ??= !/\[[^\s\]]/.test(this.text);
    return this.#padsLists;
  }

  #insertField(map: YAMLMap, key: string, value: unknown, after: readonly string[]): void {
    const text = `${key}: ${inlineValue(value, undefined, this.#padded())}`;
    if (map.flow) {
      const last = map.items.at(-1);
      if (!last) {
        const [start, end] = rangeOf(map);
        return this.#splice(start, end, `{ ${text} }`);
      }
      const end = rangeOf(last.value ?? last.key)[1];
      return this.#splice(end, end, `, ${text}`);
    }
    let anchor = map.items[0]!;
    for (const pair of map.items) if (after.includes(keyOf(pair))) anchor = pair;
    const pos = lineEndAfter(this.text, rangeOf(anchor.value ?? anchor.key)[1]);
    const indent = ' '.repeat(columnOf(this.text, rangeOf(map.items[0]!.key)[0]));
    const newline = pos === this.text.length && !this.text.endsWith('\n') ? '\n' : '';
    this.#splice(pos, pos, `${newline}${indent}${text}\n`);
  }

  /** Removes `key` from `map`, with its line (and the comment on it). */
  deleteField(map: YAMLMap, key: string): void {
    const index = map.items.findIndex((p) => keyOf(p) === key);
    if (index === -1) return;
    const pair = map.items[index]!;
    const keyStart = rangeOf(pair.key)[0];
    const valueEnd = rangeOf(pair.value ?? pair.key)[1];
    const next = map.items[index + 1];
    if (map.flow) {
      if (index > 0)
        return this.#splice(rangeOf(map.items[index - 1]!.value ?? map.items[index - 1]!.key)[1], valueEnd, '');
      return this.#splice(keyStart, next ? rangeOf(next.key)[0] : valueEnd, '');
    }
    const start = lineStart(this.text, keyStart);
    const before = this.text.slice(start, keyStart);
    if (before.trim() !== '') {
      // The mapping's first field shares its line with the list item's dash: the next field moves up.
      if (!next) throw new YamlEditError(`cannot remove the only field ${key}`);
      return this.#splice(keyStart, rangeOf(next.key)[0], '');
    }
    this.#splice(start, lineEndAfter(this.text, valueEnd), '');
  }

  /**
   * Appends `item` to the list under `key` of `map` (export's layout for a new list: `key:` and its
   * items indented by two): after the last item, indented as the items are, or as a new field.
   */
  appendItem(map: YAMLMap, key: string, item: Plain, options: { spaced?: boolean } = {}): void {
    const seq = map.get(key, true) as unknown;
    const sibling = isSeq(seq) ? (seq.items.at(-1) as unknown) : undefined;
    const lines = isMap(sibling) ? this.#itemLike(sibling, key, item) : blockItemLines(key, item);
    if (isSeq(seq) && seq.flow) {
      const last = seq.items.at(-1) as Node | undefined;
      if (last) {
        const end = rangeOf(last)[1];
        return this.#splice(end, end, `, ${inlineValue(item)}`);
      }
      const [start, end] = rangeOf(seq);
      return this.#splice(start, end, `[${inlineValue(item)}]`);
    }
    if (isSeq(seq) && seq.items.length > 0) {
      const first = rangeOf(seq.items[0])[0];
      const dashLine = lineStart(this.text, first);
      const dash = this.text.indexOf('-', dashLine) - dashLine;
      const pos = lineEndAfter(this.text, rangeOf(seq.items.at(-1))[1]);
      const indent = ' '.repeat(Math.max(dash, 0));
      const newline = pos === this.text.length && !this.text.endsWith('\n') ? '\n' : '';
      const body = lines.map((line) => `${indent}${line}`).join('\n');
      return this.#splice(pos, pos, `${newline}${options.spaced ? '\n' : ''}${body}\n`);
    }
    const pair = map.items.find((p) => keyOf(p) === key);
    const keyIndent = map.items.length > 0 ? columnOf(this.text, rangeOf(map.items[0]!.key)[0]) : 0;
    const indent = ' '.repeat(keyIndent + 2);
    const body = lines.map((line) => `${indent}${line}`).join('\n');
    // A list this editor has started already: the item goes after those added to it.
    const mapAt = map.range?.[0] ?? map;
    const started = this.#started.get(mapAt)?.get(key);
    if (started !== undefined) return this.#splice(started, started, `${body}\n`);
    const start = (pos: number) => {
      const lists = this.#started.get(mapAt) ?? new Map<string, number>();
      lists.set(key, pos);
      this.#started.set(mapAt, lists);
    };
    if (pair) {
      // `key:` with no value, or an empty block: the items go under it.
      const keyEnd = rangeOf(pair.key)[1];
      const end = lineEndAfter(this.text, rangeOf(pair.value ?? pair.key)[1]);
      start(end);
      return this.#splice(keyEnd, end, `:\n${body}\n`);
    }
    const last = map.items.at(-1);
    const pos = last ? lineEndAfter(this.text, rangeOf(last.value ?? last.key)[1]) : this.text.length;
    const newline = pos > 0 && this.text[pos - 1] !== '\n' ? '\n' : '';
    start(pos);
    this.#splice(pos, pos, `${newline}${' '.repeat(keyIndent)}${key}:\n${body}\n`);
  }

  /**
   * A list item written as its sibling is: one line in flow style (`- { name: x }`) after a flow
   * mapping, lines of its own after a block mapping; export's layout when the item does not fit
   * the sibling's style (a nested list of mappings in a flow mapping).
   */
  #itemLike(sibling: YAMLMap, key: string, item: Plain): string[] {
    const flat = Object.values(item).every(
      (v) => typeof v !== 'object' || v === null || (Array.isArray(v) && v.every((x) => typeof x !== 'object')),
    );
    if (!flat) return blockItemLines(key, item);
    if (sibling.flow)
      return [`- ${inlineValue(item, undefined, this.#padded(rangeOf(sibling)[0], rangeOf(sibling)[1]))}`];
    const padded = this.#padded();
    return Object.entries(item).map(
      ([name, value], i) => `${i === 0 ? '- ' : '  '}${inlineValue(name)}: ${inlineValue(value, undefined, padded)}`,
    );
  }

  /**
   * Removes a list item with the comment lines just above it. The list's only item takes the list's
   * field with it (`owner` and `key`), so that no empty field is left behind.
   */
  removeItem(at: Located): void {
    const { seq, index } = at;
    if (!seq || index === undefined) throw new YamlEditError('not a list item');
    const item = seq.items[index] as Node;
    if (seq.items.length === 1 && at.map && at.key !== undefined && at.map.items.length > 1)
      return this.deleteField(at.map, at.key);
    if (seq.flow) {
      const end = rangeOf(item)[1];
      if (index > 0) return this.#splice(rangeOf(seq.items[index - 1])[1], end, '');
      const next = seq.items[index + 1];
      return this.#splice(rangeOf(item)[0], next ? rangeOf(next)[0] : end, '');
    }
    let start = lineStart(this.text, rangeOf(item)[0]);
    while (start > 0) {
      const previous = lineStart(this.text, start - 1);
      if (!this.text.slice(previous, start).trim().startsWith('#')) break;
      start = previous;
    }
    let end = lineEndAfter(this.text, rangeOf(item)[1]);
    // One blank line of the two around the item goes with it (items separated by blank lines stay so).
    const blankBefore = start > 0 && lineStart(this.text, start - 1) === start - 1;
    if (blankBefore && (this.text[end] === '\n' || end === this.text.length)) {
      if (this.text[end] === '\n') end += 1;
      else start -= 1;
    }
    this.#splice(start, end, '');
  }

  /** Whether any edit was made. */
  get changed(): boolean {
    return this.#splices.length > 0;
  }

  /**
   * The text with every edit applied (edits at one place in the order they were made), joined once
   * from the pieces between the edits rather than the whole text copied per edit.
   */
  result(): string {
    const ordered = [...this.#splices].sort((a, b) => a.start - b.start || a.order - b.order);
    const pieces: string[] = [];
    let at = 0;
    for (const splice of ordered) {
      if (splice.start < at) throw new YamlEditError('two edits of the same lines');
      pieces.push(this.text.slice(at, splice.start), splice.text);
      at = splice.end;
    }
    pieces.push(this.text.slice(at));
    return pieces.join('');
  }
}

/** A new document holding `key: [items]`, as export writes one. */
export function newDocumentText(version: number, key: string, items: Plain[]): string {
  return renderExportDocument('', { version, [key]: items });
}

export { isMap, isSeq, isScalar };
export type { YAMLMap, YAMLSeq };
