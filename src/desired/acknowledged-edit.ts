/**
 * Writing one `acknowledged:` entry into a desired-state YAML file with a minimal edit: the entry's
 * lines are inserted (or an entry for the same key and field replaced), every other byte of the
 * file stays as it was: comments, key order, quoting, styles, blank lines. The file's structure is
 * read with the yaml package's document API, which gives each node's place in the text. Values
 * are written as JSON (a subset of YAML), so that a date stays a string for every YAML reader.
 * Pure: text in, text out.
 */
import { isMap, isScalar, isSeq, parseDocument, type Pair } from 'yaml';

export interface AcknowledgementEntry {
  key: string;
  field: string;
  value?: unknown;
  fingerprint?: string;
  reason: string;
  until: string;
}

export class AcknowledgementEditError extends Error {
  override readonly name = 'AcknowledgementEditError';
}

/** The entry's lines: `- key: "..."` then its other keys, each line after the first indented by `indent`. */
function entryLines(entry: AcknowledgementEntry): string[] {
  const lines = [`key: ${JSON.stringify(entry.key)}`, `field: ${JSON.stringify(entry.field)}`];
  if (entry.field === '*') lines.push(`fingerprint: ${JSON.stringify(entry.fingerprint)}`);
  else lines.push(`value: ${JSON.stringify(entry.value ?? null)}`);
  lines.push(`reason: ${JSON.stringify(entry.reason)}`, `until: ${JSON.stringify(entry.until)}`);
  return lines;
}

function block(entry: AcknowledgementEntry, dashColumn: number): string {
  const pad = ' '.repeat(dashColumn);
  return entryLines(entry)
    .map((line, i) => (i === 0 ? `${pad}- ${line}` : `${pad}  ${line}`))
    .join('\n');
}

function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/** Where a node's text ends: its range may run past its line break into the next line's indentation. */
function contentEnd(text: string, end: number): number {
  let at = end;
  while (at > 0 && /\s/.test(text[at - 1]!)) at--;
  return at;
}

/** The scalar text of a map's key, when the node is a map holding it. */
function stringAt(node: unknown, key: string): unknown {
  return isMap(node) ? node.get(key) : undefined;
}

/**
 * `text` with the entry added to its top-level `acknowledged:` list (created at the end when there
 * is none), or in place of the entry with the same key and field. `sameKey` compares keys as the
 * file writes them with the entry's (in normal form).
 */
export function withAcknowledgement(
  text: string,
  entry: AcknowledgementEntry,
  sameKey: (written: string) => boolean,
): { text: string; replaced: boolean } {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new AcknowledgementEditError(`cannot be read as YAML: ${doc.errors[0]!.message}`);
  const root = doc.contents;
  if (root !== null && !isMap(root)) throw new AcknowledgementEditError('its document is not a mapping');
  const pair = root?.items.find((item) => isScalar(item.key) && item.key.value === 'acknowledged') as
    Pair<unknown, unknown> | undefined;
  if (!pair) {
    const body = text === '' || text.endsWith('\n') ? text : `${text}\n`;
    return { text: `${body}acknowledged:\n${block(entry, 2)}\n`, replaced: false };
  }
  const list = pair.value;
  if (isSeq(list) && !list.flow && list.items.length > 0) {
    const items = list.items as unknown[];
    const same = items.find((item) => {
      const key = stringAt(item, 'key');
      return typeof key === 'string' && sameKey(key) && stringAt(item, 'field') === entry.field;
    });
    if (same && isMap(same) && same.range) {
      const [start] = same.range;
      const end = contentEnd(text, same.range[1]);
      const dash = columnOf(text, start) - 2;
      return { text: `${text.slice(0, start)}${block(entry, dash).slice(dash + 2)}${text.slice(end)}`, replaced: true };
    }
    const first = items[0] as { range?: [number, number, number] };
    const last = items[items.length - 1] as { range?: [number, number, number] };
    if (!first.range || !last.range) throw new AcknowledgementEditError('its acknowledged: list cannot be edited');
    const dash = Math.max(0, columnOf(text, first.range[0]) - 2);
    const lineEnd = text.indexOf('\n', contentEnd(text, last.range[1]));
    const at = lineEnd === -1 ? text.length : lineEnd;
    return { text: `${text.slice(0, at)}\n${block(entry, dash)}${text.slice(at)}`, replaced: false };
  }
  const empty =
    list === null ||
    list === undefined ||
    (isScalar(list) && list.value === null) ||
    (isSeq(list) && list.items.length === 0);
  if (!empty) throw new AcknowledgementEditError('its acknowledged: is not a block list; write it as one (- key: ...)');
  const range = (list as { range?: [number, number, number] } | null)?.range;
  const keyRange = (pair.key as { range?: [number, number, number] }).range!;
  // `acknowledged:` with no value, `~`, `null` or `[]`: the value is replaced by the list.
  const start = range && range[1] > range[0] ? range[0] : text.indexOf(':', keyRange[1]) + 1;
  const end = range && range[1] > range[0] ? range[1] : start;
  const dash = columnOf(text, keyRange[0]) + 2;
  return { text: `${text.slice(0, start).trimEnd()}\n${block(entry, dash)}${text.slice(end)}`, replaced: false };
}
