/**
 * Comparing a declared device with a live one, field by field, after normalising both sides so
 * that spellings the server treats as the same never show as a change. Only the fields the files
 * mention are compared; with `use_default_<x>` on, `<x>` is not compared.
 */
import { normalizeAllowedIps, normalizeDns } from '../model/keys.js';
import { parseEndpoint, parseIpAddress } from '../model/net.js';
import type { DesiredDevice, DesiredDeviceFields } from '../model/state.js';
import { DEFAULTABLE_DEVICE_FIELDS, type ApiDevice, type DefaultableDeviceField } from '../model/types.js';

/** Fields a create body may carry besides user_id, name and preshared_key, in a stable order. */
export const WRITABLE_DEVICE_FIELDS = [
  'description',
  'public_key',
  'ipv4',
  'ipv6',
  'use_default_allowed_ips',
  'allowed_ips',
  'use_default_dns',
  'dns',
  'use_default_endpoint',
  'endpoint',
  'use_default_mtu',
  'mtu',
  'use_default_persistent_keepalive',
  'persistent_keepalive',
] as const satisfies readonly (keyof DesiredDeviceFields)[];
export type WritableDeviceField = (typeof WRITABLE_DEVICE_FIELDS)[number];

/** Fields upstream Firezone 0.7.26+ still changes on update; it silently ignores all others. */
export const LEGACY_UPDATABLE_DEVICE_FIELDS: ReadonlySet<string> = new Set(['name', 'description']);

const DEFAULTABLE: ReadonlySet<string> = new Set(DEFAULTABLE_DEVICE_FIELDS);

function normalizeEndpoint(value: unknown): unknown {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const parsed = parseEndpoint(value);
  if (!parsed) return value.trim();
  const host = parsed.host.toLowerCase();
  const shown = host.includes(':') && parsed.port !== null ? `[${host}]` : host;
  return parsed.port === null ? shown : `${shown}:${parsed.port}`;
}

function normalizeAddress(value: unknown): unknown {
  if (typeof value !== 'string' || value.trim() === '') return null;
  return parseIpAddress(value)?.text ?? value.trim();
}

const NORMALISERS: Record<WritableDeviceField, (value: unknown) => unknown> = {
  description: (v) => (typeof v === 'string' && v !== '' ? v : null),
  public_key: (v) => (typeof v === 'string' ? v.trim() : null),
  ipv4: normalizeAddress,
  ipv6: normalizeAddress,
  allowed_ips: (v) => normalizeAllowedIps(Array.isArray(v) ? (v as string[]) : null),
  dns: (v) => normalizeDns(Array.isArray(v) ? (v as string[]) : null),
  endpoint: normalizeEndpoint,
  mtu: (v) => (typeof v === 'number' ? v : null),
  persistent_keepalive: (v) => (typeof v === 'number' ? v : null),
  use_default_allowed_ips: (v) => v !== false,
  use_default_dns: (v) => v !== false,
  use_default_endpoint: (v) => v !== false,
  use_default_mtu: (v) => v !== false,
  use_default_persistent_keepalive: (v) => v !== false,
};

export function sameDeviceValue(field: WritableDeviceField, a: unknown, b: unknown): boolean {
  const normalise = NORMALISERS[field];
  return JSON.stringify(normalise(a)) === JSON.stringify(normalise(b));
}

/** The fields of a declaration that are managed: mentioned, and not governed by a default that is on. */
export function managedDeviceFields(fields: DesiredDeviceFields): WritableDeviceField[] {
  return WRITABLE_DEVICE_FIELDS.filter((field) => {
    if (fields[field] === undefined) return false;
    if (DEFAULTABLE.has(field) && fields[`use_default_${field as DefaultableDeviceField}`] === true) return false;
    return true;
  });
}

/** Managed fields whose declared value differs from the live one. */
export function changedDeviceFields(desired: DesiredDevice, live: ApiDevice): WritableDeviceField[] {
  return managedDeviceFields(desired.fields).filter(
    (field) => !sameDeviceValue(field, desired.fields[field], live[field]),
  );
}

/**
 * The writable fields of a live device as a create body would carry them, so that a replacement
 * keeps what the files do not mention: its keys, pinned addresses, and values set apart from the
 * server's defaults. A field under a default that is on is left to that default.
 */
export function liveDeviceBody(live: ApiDevice): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of WRITABLE_DEVICE_FIELDS) {
    if (DEFAULTABLE.has(field) && live[`use_default_${field as DefaultableDeviceField}`]) continue;
    const value = live[field];
    if (value !== null && value !== undefined) body[field] = value;
  }
  return body;
}
