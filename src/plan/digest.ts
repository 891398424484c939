/**
 * The digest of a plan document: SHA-256 over its canonical JSON (keys sorted, `digest` itself
 * left out). `netform plan -o` writes it; apply refuses a saved plan whose digest does not match,
 * so a plan edited by hand (showing one thing, sending another) is never applied. It guards
 * against edits, not against someone who recomputes it: the plan holds no secret to sign with.
 */
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(JSON.parse(JSON.stringify(value))));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}

export function planDigest(plan: object): string {
  const { digest: _ignored, ...rest } = plan as Record<string, unknown>;
  return `sha256:${createHash('sha256').update(canonicalJson(rest)).digest('hex')}`;
}
