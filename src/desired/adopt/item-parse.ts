/**
 * One list item of a desired-state file parsed alone: the lines of a `- name: x` item (from its
 * dash to its last line) are given to the `yaml` package's document API by themselves, and the
 * source ranges of the nodes it returns are moved to where those lines stand in the file. The
 * mapping comes out as the parse of the whole file gives it (the same ranges, styles, quoting and
 * anchors), for a fraction of the work on a large file: adopt edits a few hundred items of a
 * 5 MB file, and the whole file's node tree costs seconds and hundreds of megabytes.
 *
 * Only what is certain to parse alone as it parses in place is parsed so: no directive in the file
 * (`%YAML`, `%TAG`), an item whose line holds nothing before its mapping but its dash, no tab at
 * the start of a line, no block scalar (`|`, `>`: their blank lines may belong to them), no alias,
 * and a parse without errors or warnings that gives one mapping where the file's loader saw it.
 * Anything else answers null, and the caller parses the whole file. What stands before the item (a
 * blank line, comments above its dash) is not part of it: the mapping's own `spaceBefore` and
 * `commentBefore` are not set (adopt reads neither; test/unit/adopt/item-parse.test.ts compares
 * the rest with the whole parse).
 */
import { isAlias, isMap, isSeq, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml';

/** A line ending in a block scalar's indicator (`key: |`, `- >-`, `key: |2+ # note`). */
const BLOCK_SCALAR = /[|>][-+0-9]*[ \t]*(#.*)?$/m;

/** Moves every node's range of `node` by `by`; false when an alias is met (it may point outside). */
function shift(node: unknown, by: number): boolean {
  if (node === null || typeof node !== 'object') return true;
  if (isAlias(node)) return false;
  const range = (node as Node).range;
  if (range) (node as Node).range = [range[0] + by, range[1] + by, range[2] + by];
  if (isMap(node)) return node.items.every((pair: Pair) => shift(pair.key, by) && shift(pair.value, by));
  if (isSeq(node)) return node.items.every((item) => shift(item, by));
  return true;
}

/**
 * The lines of the list item whose mapping starts at `offset` (the dash at column `dash`, on the
 * line starting at `lineStart`): up to its last line indented deeper than the dash; comment lines
 * and blank lines after it are left to what follows. Null when a line starts with a tab.
 */
function itemEnd(text: string, lineStart: number, dash: number): number | null {
  let at = text.indexOf('\n', lineStart);
  let end = at === -1 ? text.length : at + 1;
  while (at !== -1) {
    const start = at + 1;
    at = text.indexOf('\n', start);
    const stop = at === -1 ? text.length : at;
    let indent = start;
    while (indent < stop && text.charCodeAt(indent) === 32) indent++;
    if (indent < stop && text.charCodeAt(indent) === 9) return null;
    const first = indent < stop ? text[indent] : undefined;
    if (first === undefined || first === '\r') continue; // a blank line
    if (indent - start <= dash) {
      if (first === '#') continue; // a comment line, wherever it is indented
      break;
    }
    end = at === -1 ? text.length : at + 1;
  }
  return end;
}

/**
 * The mapping of the list item that starts at `offset` of `text` (the line and column the loader
 * gave it), parsed alone with its ranges in `text`; null when that is not certain to be what the
 * whole file's parse gives (see above).
 */
export function parseListItemMap(text: string, offset: number): YAMLMap | null {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const before = text.slice(lineStart, offset);
  if (!/^ *- +$/.test(before)) return null;
  const dash = before.indexOf('-');
  const end = itemEnd(text, lineStart, dash);
  if (end === null) return null;
  const lines = text.slice(lineStart, end);
  if (BLOCK_SCALAR.test(lines)) return null;
  const document = parseDocument(lines);
  if (document.errors.length > 0 || document.warnings.length > 0) return null;
  const seq = document.contents as unknown;
  if (!isSeq(seq) || seq.items.length !== 1) return null;
  const map = seq.items[0] as unknown;
  if (!isMap(map) || !shift(map, lineStart) || map.range?.[0] !== offset) return null;
  return map;
}
