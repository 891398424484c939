/** Port ranges of rules: `"80"`, `"80-443"` or `"80 - 443"`, stored as `"lo - hi"`. */
import { Messages } from './messages.js';

export interface PortRange {
  low: number;
  high: number;
}

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

/** The contract's stored shape, also for a single port: `"80 - 80"`. */
export function formatPortRange(range: PortRange): string {
  return `${range.low} - ${range.high}`;
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
