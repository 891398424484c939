/**
 * Port ranges of rules: `"80"`, `"80-443"` or `"80 - 443"`, stored (and keyed) as `"lo - hi"`,
 * answered as Firezone 0.7.36 answers them: `"80"` for a single port, `"80 - 443"` for a range.
 */
import { Messages } from './messages.js';

export interface PortRange {
  low: number;
  high: number;
}

/**
 * The highest port a new rule may name. Firezone 0.7.36 checks `port_range <@ int4range(1, 65535)`,
 * and that range excludes its upper bound, so it refuses any range that reaches 65535. Rules
 * stored before netform followed it may still hold 65535: reading them (parsePortRange) accepts it.
 */
export const HIGHEST_RULE_PORT = 65534;

export type PortRangeResult = { ok: true; range: PortRange } | { ok: false; message: string };

const SHAPE = /^\s*(\d{1,10})\s*(?:-\s*(\d{1,10})\s*)?$/;

export function parsePortRange(text: unknown): PortRangeResult {
  if (typeof text !== 'string') return { ok: false, message: Messages.badFormat };
  const match = SHAPE.exec(text);
  if (!match) return { ok: false, message: Messages.badFormat };
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : Number(match[2]);
  if (low > high) return { ok: false, message: Messages.lowerHigher };
  if (low < 1 || high > 65535) return { ok: false, message: Messages.portRange };
  return { ok: true, range: { low, high } };
}

/** The stored (and keyed) shape, also for a single port: `"80 - 80"`. */
export function formatPortRange(range: PortRange): string {
  return `${range.low} - ${range.high}`;
}

/**
 * A stored range as the server answers it, as 0.7.36 does: one number for a single port
 * (`"80 - 80"` -> `"80"`), `"lo - hi"` otherwise; null stays null.
 */
export function answerPortRange(stored: string | null): string | null {
  if (stored === null) return null;
  const dash = stored.indexOf(' - ');
  if (dash > 0 && stored.slice(0, dash) === stored.slice(dash + 3)) return stored.slice(0, dash);
  return stored;
}

/** Whether a range reaches past HIGHEST_RULE_PORT (that is, includes 65535). */
export function reachesPortLimit(range: PortRange): boolean {
  return range.high > HIGHEST_RULE_PORT;
}

/**
 * Whether `text` is `"lo - hi"` as formatPortRange writes it (no leading zeros, at most five digits
 * each, lo <= hi <= 65535). Read character by character: every rule key asks, and a match array
 * per rule is garbage.
 */
function isCanonicalRange(text: string): boolean {
  const dash = text.indexOf(' - ');
  if (dash < 1 || dash > 5) return false;
  const low = digitsValue(text, 0, dash);
  const high = digitsValue(text, dash + 3, text.length);
  return low !== -1 && high !== -1 && low <= high && high <= 65535;
}

/** The number written in text[from, to): 1-5 digits without a leading zero; -1 otherwise. */
function digitsValue(text: string, from: number, to: number): number {
  if (to - from < 1 || to - from > 5 || text.charCodeAt(from) === 48) return -1;
  let value = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    value = value * 10 + c;
  }
  return value;
}

/** Normalises any accepted spelling (including upstream's `"80"`) to `"lo - hi"`; null stays null. */
export function normalizePortRange(text: string | null | undefined): string | null {
  if (text === null || text === undefined || text === '') return null;
  // Text already in the stored shape (the common case: what the server answers) is its own normal form.
  if (isCanonicalRange(text)) return text;
  const parsed = parsePortRange(text);
  return parsed.ok ? formatPortRange(parsed.range) : text;
}

export function portRangesIntersect(a: PortRange, b: PortRange): boolean {
  return a.low <= b.high && b.low <= a.high;
}
