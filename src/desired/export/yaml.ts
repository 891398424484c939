/**
 * The text of an exported file: the same bytes as the `yaml` package writes for it (a Document
 * with `lineWidth: 0`, rules as one-line maps, scalar lists on one line, a blank line between
 * users), written directly for the shapes export produces.
 *
 * `netform export` of a large server writes megabytes of flat mappings of scalars; building a
 * `yaml` Document of them cost more than reading the server (bench/RESULTS.md, "Export"). Here each value is written
 * straight to text with the `yaml` package's own rules for when a string may stay plain and how it
 * is quoted (stringify/stringifyString.js of yaml 2, the YAML 1.2 core schema's tags). Whatever
 * falls outside those rules — multi-line strings (block scalars), control characters, lone
 * surrogates, strings starting with a document marker, numbers other than safe integers, unusual
 * keys or nesting — is rendered by the `yaml` package itself (`renderWithYamlPackage`, loaded only
 * then), one list item or one top-level key at a time, so the output stays byte for byte what the
 * `yaml` package writes for the whole document (test/unit/desired/export-yaml.test.ts compares them).
 */
import { createRequire } from 'node:module';
import { hasUnsafe, inertLines } from '../../model/inert.js';
import type { Node as YamlNode, YAMLMap } from 'yaml';

type Plain = Record<string, unknown>;

/** The top-level list whose items are separated by a blank line (a long file stays readable). */
const SPACED_LIST = 'users';

/** What the `yaml` package writes for `header` + `body` (the reference: slower, the same bytes). */
export function renderWithYamlPackage(header: string, body: Plain): string {
  const { Document, isMap, isSeq, visit } = yamlPackage();
  const doc = new Document(body);
  flowStyleLeaves(doc.contents);
  // Inert output (a terminal, a CI log): a string holding a control, line separator, bidi or
  // zero-width character is written double-quoted on one line, and the characters the yaml package
  // leaves raw there (bidi, zero-width) become `\u` escapes below, as valid in YAML as in JSON.
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value === 'string' && hasUnsafe(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  const users = isMap(doc.contents) ? doc.contents.get(SPACED_LIST, true) : undefined;
  if (isSeq(users))
    users.items.forEach((item, index) => {
      if (index > 0 && isMap(item)) item.spaceBefore = true;
    });
  return inertLines(
    header + doc.toString({ lineWidth: 0, indentSeq: true, doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER }),
  );
}

/** Rules as one-line maps and address lists as one-line sequences, as docs/netform.md's example writes them. */
function flowStyleLeaves(node: unknown): void {
  const { isMap, isSeq } = yamlPackage();
  if (isMap(node)) {
    const map = node as YAMLMap;
    const keys = map.items.map((pair) => String((pair.key as { value?: unknown })?.value ?? pair.key));
    if (keys.includes('action') && keys.includes('destination')) {
      map.flow = true;
      return;
    }
    for (const pair of map.items) flowStyleLeaves(pair.value);
  } else if (isSeq(node)) {
    if (node.items.every((item) => !isMap(item) && !isSeq(item)) && node.items.length > 0) node.flow = true;
    for (const item of node.items) flowStyleLeaves(item);
  }
}

let loaded: typeof import('yaml') | undefined;
/** The `yaml` package, loaded on first use (about 35 ms that most exports never need). */
function yamlPackage(): typeof import('yaml') {
  loaded ??= createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return loaded;
}

/** `header` + `body` as YAML text: the bytes of renderWithYamlPackage, written directly where possible. */
export function renderExportDocument(header: string, body: Plain): string {
  const keys = Object.keys(body);
  if (keys.length === 0 || isFlowMap(body)) return renderWithYamlPackage(header, body);
  const out: string[] = [header];
  for (const key of keys) {
    const value = body[key];
    const mark = out.length;
    if (isBlockSeq(value)) {
      if (!topLevelList(key, value, out)) return renderWithYamlPackage(header, body);
      continue;
    }
    if (!pair(key, value, '', out)) {
      out.length = mark;
      // Each top-level pair's text is what the document holds for it, whatever its neighbours.
      out.push(renderWithYamlPackage('', { [key]: value }));
    }
  }
  return out.join('');
}

/**
 * A top-level list of maps, each item written directly or, when it holds something outside the
 * direct writer's rules, by the `yaml` package on its own (an item's text does not depend on the
 * other items, except that a block scalar kept with `|+` at an item's end takes the place of the
 * blank line before the next one). False: give the whole document to the `yaml` package.
 */
function topLevelList(key: string, items: unknown[], out: string[]): boolean {
  const name = keyText(key);
  if (name === undefined) return false;
  out.push(`${name}:\n`);
  const spaced = key === SPACED_LIST;
  let keptEnd = false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (spaced && i > 0 && isMapValue(item) && !keptEnd) out.push('\n');
    keptEnd = false;
    const mark = out.length;
    if (seqItem(item, '  ', out)) continue;
    out.length = mark;
    const alone = renderWithYamlPackage('', { [key]: [item] });
    const prefix = `${name}:\n`;
    if (!alone.startsWith(prefix)) return false;
    out.push(alone.slice(prefix.length));
    if (spaced && KEEP_CHOMPING.test(alone)) keptEnd = endsKept(key, item, alone);
  }
  return true;
}

/** A block scalar header with keep chomping (`|+`, `>2+`, ...): the only source of `chompKeep`. */
const KEEP_CHOMPING = /[|>][0-9]?\+$/m;

/** Whether the `yaml` package leaves out the blank line after this item (its text ends in a kept block scalar). */
function endsKept(key: string, item: unknown, alone: string): boolean {
  const { Document, isSeq, isMap } = yamlPackage();
  const doc = new Document({ [key]: [item, {}] });
  flowStyleLeaves(doc.contents);
  const list = isMap(doc.contents) ? doc.contents.get(key, true) : undefined;
  if (!isSeq(list)) return false;
  (list.items[1] as YamlNode).spaceBefore = true;
  const paired = doc.toString({
    lineWidth: 0,
    indentSeq: true,
    doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER,
  });
  // With the blank line, the pair is one character longer than the item alone plus `  - {}\n`.
  return paired.length === alone.length + '  - {}\n'.length;
}

function isBlockSeq(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.some((item) => isMapValue(item) || Array.isArray(item));
}

function isMapValue(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Rules: a map with `action` and `destination` is written on one line. */
function isFlowMap(map: Plain): boolean {
  return 'action' in map && 'destination' in map;
}

/** `key: value` at `indent` (the first line starting with `first` instead, for a list item). */
function pair(key: string, value: unknown, indent: string, out: string[], first = indent): boolean {
  const name = keyText(key);
  if (name === undefined) return false;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push(`${first}${name}: []\n`);
      return true;
    }
    if (!isBlockSeq(value)) {
      const flow = flowSeq(value);
      if (flow === undefined) return false;
      out.push(`${first}${name}: ${flow}\n`);
      return true;
    }
    out.push(`${first}${name}:\n`);
    const itemIndent = `${indent}  `;
    for (const item of value) if (!seqItem(item, itemIndent, out)) return false;
    return true;
  }
  if (isMapValue(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) {
      out.push(`${first}${name}: {}\n`);
      return true;
    }
    if (isFlowMap(value)) {
      const flow = flowMap(value);
      if (flow === undefined) return false;
      out.push(`${first}${name}: ${flow}\n`);
      return true;
    }
    out.push(`${first}${name}:\n`);
    return blockMap(value, keys, `${indent}  `, out);
  }
  const text = scalarText(value, false);
  if (text === undefined) return false;
  out.push(`${first}${name}: ${text}\n`);
  return true;
}

function blockMap(map: Plain, keys: string[], indent: string, out: string[], first = indent): boolean {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (!pair(key, map[key], indent, out, i === 0 ? first : indent)) return false;
  }
  return true;
}

/** `- item` at `indent`: a map's first pair on the dash's line, the others under it. */
function seqItem(item: unknown, indent: string, out: string[]): boolean {
  if (isMapValue(item)) {
    const keys = Object.keys(item);
    if (keys.length === 0) {
      out.push(`${indent}- {}\n`);
      return true;
    }
    if (isFlowMap(item)) {
      const flow = flowMap(item);
      if (flow === undefined) return false;
      out.push(`${indent}- ${flow}\n`);
      return true;
    }
    return blockMap(item, keys, `${indent}  `, out, `${indent}- `);
  }
  // A list in a list is not a shape export writes: left to the `yaml` package.
  if (Array.isArray(item)) return false;
  const text = scalarText(item, false);
  if (text === undefined) return false;
  out.push(`${indent}- ${text}\n`);
  return true;
}

/** `[ a, b ]` for a list of scalars. */
function flowSeq(items: unknown[]): string | undefined {
  let text = '[ ';
  for (let i = 0; i < items.length; i++) {
    const item = scalarText(items[i], true);
    if (item === undefined) return undefined;
    text += i === 0 ? item : `, ${item}`;
  }
  return `${text} ]`;
}

/** `{ key: value, ... }` for a map of scalars. */
function flowMap(map: Plain): string | undefined {
  let text = '{ ';
  let first = true;
  for (const key in map) {
    const name = keyText(key);
    const value = scalarText(map[key], true);
    if (name === undefined || value === undefined) return undefined;
    text += first ? `${name}: ${value}` : `, ${name}: ${value}`;
    first = false;
  }
  return `${text} }`;
}

/** A key written as it is: a short identifier that no YAML 1.2 core type would read otherwise. */
const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,100}$/;
const keyTexts = new Map<string, string | undefined>();
function keyText(key: string): string | undefined {
  let text = keyTexts.get(key);
  if (text === undefined && !keyTexts.has(key)) {
    text = KEY.test(key) && !CORE_TYPED.test(key) ? key : undefined;
    keyTexts.set(key, text);
  }
  return text;
}

/**
 * A scalar as the `yaml` package writes it with `lineWidth: 0`; undefined when only the `yaml`
 * package should say (multi-line strings, control characters, numbers other than safe integers).
 */
function scalarText(value: unknown, inFlow: boolean): string | undefined {
  if (typeof value === 'string') return stringText(value, inFlow);
  if (typeof value === 'number')
    return Number.isSafeInteger(value) && !Object.is(value, -0) ? String(value) : undefined;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null) return 'null';
  return undefined;
}

/**
 * The plain strings that the YAML 1.2 core schema reads as something else: the `test` of each of
 * the `yaml` package's schema/core tags (null, bool, int oct/dec/hex, float nan/exp/plain), one
 * alternative each.
 */
const CORE_TYPED = new RegExp(
  [
    /^(?:~|[Nn]ull|NULL)?$/,
    /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
    /^0o[0-7]+$/,
    /^[-+]?[0-9]+$/,
    /^0x[0-9a-fA-F]+$/,
    /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
    /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
  ]
    .map((tag) => `(?:${tag.source})`)
    .join('|'),
);
/**
 * Strings that are plain unless CORE_TYPED reads them (most of an export: emails, names, keys,
 * addresses): no space, quote or indicator, not starting with `-`, `.`, `:` or `@`, not ending
 * with `:`. Only a shortcut: anything else takes the full rules below.
 */
const SIMPLE = /^[A-Za-z0-9_/+=](?:[A-Za-z0-9_./+=@:-]*[A-Za-z0-9_./+=@-])?$/;
/** Where the `yaml` package's plainString refuses a plain scalar (stringifyString.js, same expression). */
const NOT_PLAIN = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;
const FLOW_INDICATOR = /[[\]{},]/;
/** Left to the `yaml` package: line breaks, what it escapes in double quotes, document markers. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for (the yaml package escapes them)
const NOT_DIRECT = /[\n\x00-\x08\x0b-\x1f\x7f-\x9f\u{D800}-\u{DFFF}]|^(?:%|---|\.\.\.)/u;

/**
 * A one-line string: plain when the `yaml` package writes it plain; otherwise quoted as it
 * quotes it (single quotes when the string holds `"` and no `'`, else double quotes, which for a
 * string with no control character are JSON's).
 */
function stringText(value: string, inFlow: boolean): string | undefined {
  if (SIMPLE.test(value)) return CORE_TYPED.test(value) ? `"${value}"` : value;
  if (NOT_DIRECT.test(value) || hasUnsafe(value)) return undefined;
  const plain = !(inFlow && FLOW_INDICATOR.test(value)) && !NOT_PLAIN.test(value) && !CORE_TYPED.test(value);
  if (plain) return value;
  if (value.includes('"') && !value.includes("'")) return `'${value}'`;
  return JSON.stringify(value);
}
