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

/** `"lo - hi"` as formatPortRange writes it (no leading zeros). */
const CANONICAL_RANGE = /^([1-9]\d{0,4}) - ([1-9]\d{0,4})$/;

/** Normalises any accepted spelling (including upstream's `"80"`) to `"lo - hi"`; null stays null. */
export function normalizePortRange(text: string | null | undefined): string | null {
  if (text === null || text === undefined || text === '') return null;
  // Text already in the stored shape (the common case: what the server answers) is its own normal form.
  const canonical = CANONICAL_RANGE.exec(text);
  if (canonical && Number(canonical[1]) <= Number(canonical[2]) && Number(canonical[2]) <= 65535) return text;
  const parsed = parsePortRange(text);
  return parsed.ok ? formatPortRange(parsed.range) : text;
}

export function portRangesIntersect(a: PortRange, b: PortRange): boolean {
  return a.low <= b.high && b.low <= a.high;
}
