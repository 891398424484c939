/**
 * Fingerprints of live objects, for saved plans: apply refuses to act on an object whose
 * fingerprint changed since the plan saw it. A fingerprint covers every field a person or
 * netform can change. It leaves out what changes by itself: tunnel statistics (latest_handshake,
 * remote_ip, rx_bytes, tx_bytes), sign-in records, and `updated_at`, because upstream Firezone
 * bumps `updated_at` whenever it records statistics of an active device; any real edit changes
 * one of the covered fields anyway. Preshared keys enter only as a digest, so the fingerprint
 * (written into saved plans) cannot reveal them.
 */
import { createHash } from 'node:crypto';
import type { ApiConfiguration } from '../model/configuration.js';
import type { ApiDevice, ApiRule, ApiUser } from '../model/types.js';
import type { ResourceKind } from './types.js';

const VOLATILE = new Set([
  'latest_handshake',
  'remote_ip',
  'rx_bytes',
  'tx_bytes',
  'updated_at',
  'last_signed_in_at',
  'last_signed_in_method',
]);

type LiveObject = ApiUser | ApiDevice | ApiRule | ApiConfiguration;

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function fingerprintOf(kind: ResourceKind, object: LiveObject): string {
  const covered: Record<string, unknown> = {};
  for (const key of Object.keys(object).sort()) {
    if (VOLATILE.has(key)) continue;
    const value = (object as unknown as Record<string, unknown>)[key];
    covered[key] = key === 'preshared_key' && typeof value === 'string' ? digest(value) : value;
  }
  return `${kind}:${digest(JSON.stringify(covered)).slice(0, 32)}`;
}
