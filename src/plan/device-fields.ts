/**
 * Comparing a declared device with a live one, field by field, after normalising both sides so
 * that spellings the server treats as the same never show as a change. The fields compared are
 * those of the declaration as src/plan/defaults.ts gives it (a flag left out with its field is on);
 * with a field's default flag on, the field is not compared. Which fields
 * are writable and which a flag governs is the device-field table's (model/device-fields.ts).
 */
import {
  isDefaultableField,
  USE_DEFAULT_FLAGS,
  useDefaultFlag,
  WRITABLE_DEVICE_FIELDS,
  type ApiDevice,
  type UseDefaultFlag,
  type WritableDeviceField,
} from '../model/device-fields.js';
import { normalizeAllowedIps, normalizeDns } from '../model/keys.js';
import { parseEndpoint, parseIpAddress } from '../model/net.js';
import type { DesiredDevice, DesiredDeviceFields } from '../model/state.js';

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

type Normaliser = (value: unknown) => unknown;

/** A default flag is on unless false (on, its create default, when left out). */
const FLAG_NORMALISERS = Object.fromEntries(
  USE_DEFAULT_FLAGS.map(([, flag]) => [flag, (v: unknown) => v !== false]),
) as Record<UseDefaultFlag, Normaliser>;

const NORMALISERS: Record<WritableDeviceField, Normaliser> = {
  description: (v) => (typeof v === 'string' && v !== '' ? v : null),
  public_key: (v) => (typeof v === 'string' ? v.trim() : null),
  ipv4: normalizeAddress,
  ipv6: normalizeAddress,
  allowed_ips: (v) => normalizeAllowedIps(Array.isArray(v) ? (v as string[]) : null),
  dns: (v) => normalizeDns(Array.isArray(v) ? (v as string[]) : null),
  endpoint: normalizeEndpoint,
  mtu: (v) => (typeof v === 'number' ? v : null),
  persistent_keepalive: (v) => (typeof v === 'number' ? v : null),
  ...FLAG_NORMALISERS,
};

/** A value whose JSON text is equal to another such value's exactly when the two are ===. */
function plain(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value);
}

export function sameDeviceValue(field: WritableDeviceField, a: unknown, b: unknown): boolean {
  const normalise = NORMALISERS[field];
  const x = normalise(a);
  const y = normalise(b);
  // Texts, flags, finite numbers and nulls compare as their JSON texts do; anything else (lists) by those texts.
  if (plain(x) && plain(y)) return x === y;
  return JSON.stringify(x) === JSON.stringify(y);
}

/** The fields of a declaration that are managed: mentioned, and not governed by a default that is on. */
export function managedDeviceFields(fields: DesiredDeviceFields): WritableDeviceField[] {
  return WRITABLE_DEVICE_FIELDS.filter((field) => {
    if (fields[field] === undefined) return false;
    if (isDefaultableField(field) && fields[useDefaultFlag(field)] === true) return false;
    return true;
  });
}

/**
 * Managed fields whose declared value differs from the live one. `fields` is the declaration as
 * compared (src/plan/defaults.ts: defaults filled in, ignored fields taken out); the device's own
 * fields when not given.
 */
export function changedDeviceFields(
  desired: DesiredDevice,
  live: ApiDevice,
  fields: DesiredDeviceFields = desired.fields,
): WritableDeviceField[] {
  return managedDeviceFields(fields).filter((field) => !sameDeviceValue(field, fields[field], live[field]));
}

/**
 * The writable fields of a live device as a create body would carry them, so that a replacement
 * keeps what the files do not mention: its keys, pinned addresses, and values set apart from the
 * server's defaults. A field under a default that is on is left to that default.
 */
export function liveDeviceBody(live: ApiDevice): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of WRITABLE_DEVICE_FIELDS) {
    if (isDefaultableField(field) && live[useDefaultFlag(field)]) continue;
    const value = live[field];
    if (value !== null && value !== undefined) body[field] = value;
  }
  return body;
}
