/**
 * Look-alike and invisible characters no email may hold (docs/netform.md, "Emails"), read from the
 * table scripts/email-table.mjs generates (email-characters.generated.ts). `validate` and the
 * server both judge an email with this one table.
 */
import { COMPATIBILITY, COMPOSED, INVISIBLE } from './email-characters.generated.js';

/** Why a character is refused: it is another code point's letter, a compatibility form, or shows as nothing. */
export type LookAlikeKind = 'composed' | 'compatibility' | 'invisible';

/** Code point ranges of one kind, sorted: [low0, high0, low1, high1, ...]. */
function parse(table: string): Uint32Array {
  const lines = table.split('\n').filter((line) => line !== '');
  const out = new Uint32Array(lines.length * 2);
  lines.forEach((line, i) => {
    const [low = '', high = low] = line.split('-');
    out[2 * i] = parseInt(low, 16);
    out[2 * i + 1] = parseInt(high, 16);
  });
  return out;
}

const KINDS: [LookAlikeKind, Uint32Array][] = [
  ['composed', parse(COMPOSED)],
  ['compatibility', parse(COMPATIBILITY)],
  ['invisible', parse(INVISIBLE)],
];

function within(ranges: Uint32Array, cp: number): boolean {
  let lo = 0;
  let hi = ranges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < ranges[2 * mid]!) hi = mid - 1;
    else if (cp > ranges[2 * mid + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

/** The kind of look-alike `char` (one code point) is, or null when it may stand in an email. */
export function lookAlikeKind(char: string): LookAlikeKind | null {
  const cp = char.codePointAt(0)!;
  if (cp < 0x80 && cp !== 0x7f && cp >= 0x20) return null;
  for (const [kind, ranges] of KINDS) if (within(ranges, cp)) return kind;
  return null;
}

/** The first character of `text` the table refuses, with its kind; undefined when there is none. */
export function firstLookAlike(text: string): { char: string; kind: LookAlikeKind } | undefined {
  if (/^[\x20-\x7e]*$/.test(text)) return undefined;
  for (const char of text) {
    const kind = lookAlikeKind(char);
    if (kind !== null) return { char, kind };
  }
  return undefined;
}
