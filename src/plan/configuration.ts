/**
 * The `configuration:` stage of the planner: the declared server configuration against the live
 * `/v0/configuration`, field by field. Only the fields the files give are compared (and sent);
 * values are normalised as the device fields they are the defaults of, so that spellings the
 * server treats as the same never show as a change. One `~ configuration` update, or nothing.
 */
import { DEFAULT_CLIENT_FIELDS, MANAGED_CONFIGURATION_FIELDS, type ApiConfiguration } from '../model/configuration.js';
import type { DesiredConfiguration } from '../model/state.js';
import type { DefaultableDeviceField } from '../model/types.js';
import { PlanError } from './context.js';
import { sameDeviceValue } from './device-fields.js';
import { fingerprintOf } from './fingerprint.js';
import type { Change, FieldChange } from './types.js';

export const CONFIGURATION_CHANGE_ID = 'configuration';

/** Whether a declared value and a live one are the same, in the server's terms. */
export function sameConfigurationValue(field: string, declared: unknown, live: unknown): boolean {
  const deviceField = (DEFAULT_CLIENT_FIELDS as Record<string, DefaultableDeviceField>)[field];
  if (deviceField) return sameDeviceValue(deviceField, declared, live);
  return JSON.stringify(declared ?? null) === JSON.stringify(live ?? null);
}

/**
 * The change that makes the live configuration hold the declared values, or null when it does.
 * `phase` is the planner's first (with users): devices created later in the same apply see the
 * new defaults. Throws when configuration is declared but the live state has none (the caller
 * reads it whenever the desired state declares it).
 */
export function planConfiguration(
  desired: DesiredConfiguration | undefined,
  live: ApiConfiguration | undefined,
  phase: number,
): Change | null {
  if (!desired) return null;
  if (!live) throw new PlanError([{ code: 'configuration_unread' }]);
  const fields: FieldChange[] = [];
  const body: Record<string, unknown> = {};
  for (const field of MANAGED_CONFIGURATION_FIELDS) {
    const wanted = desired.values[field];
    if (wanted === undefined || sameConfigurationValue(field, wanted, live[field])) continue;
    fields.push({ field, before: live[field] ?? null, after: wanted });
    body[field] = wanted;
  }
  if (fields.length === 0) return null;
  return {
    id: CONFIGURATION_CHANGE_ID,
    kind: 'configuration',
    action: 'update',
    key: CONFIGURATION_CHANGE_ID,
    label: 'configuration',
    phase,
    liveId: live.id,
    fingerprint: fingerprintOf('configuration', live),
    fields,
    body,
  };
}
