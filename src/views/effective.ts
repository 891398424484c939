/**
 * Effective values in words (src/plan/effective.ts computes them): what a device's tunnel gets
 * before and after the plan, for a `use_default_<x>` flip or a changed `default_client_<x>`.
 * Bounded like access changes: at most EFFECTIVE_LINES_SHOWN lines a change, then a count (the
 * json plan lists all).
 */
import type { Change, EffectiveValue, ResolvedChange } from '../plan/types.js';
import { inertText } from './escape.js';

export const EFFECTIVE_LINES_SHOWN = 100;

/** `10.0.0.0/8, ::/0`, `1380`, `vpn.example.com:51820`; `(none)`; null is the server's default, unread. */
function effectiveValueWords(value: unknown): string {
  if (value === null || value === undefined) return 'the server default';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map(String).join(', ');
  return String(value);
}

/** `allowed_ips (effective): 10.0.0.0/8 -> 0.0.0.0/0, ::/0` */
export function effectiveLine(value: EffectiveValue, withDevice = false): string {
  const what = withDevice ? `${value.field} of ${value.device}` : `${value.field} (effective)`;
  return inertText(`${what}: ${effectiveValueWords(value.before)} -> ${effectiveValueWords(value.after)}`);
}

/** The lines a change's effective values add under its fields. */
export function effectiveLines(change: Change | ResolvedChange): string[] {
  const values = 'effective' in change ? (change.effective ?? []) : [];
  if (values.length === 0) return [];
  if (change.kind !== 'configuration') return values.map((v) => effectiveLine(v));
  const shown = values.slice(0, EFFECTIVE_LINES_SHOWN).map((v) => `  ${effectiveLine(v, true)}`);
  const left = values.length - shown.length;
  const devices = new Set(values.map((v) => v.device)).size;
  return [
    `effective values that change (${devices === 1 ? '1 device uses' : `${devices} devices use`} the default):`,
    ...shown,
    ...(left > 0 ? [`  … and ${left} more (the json plan lists all)`] : []),
  ];
}
