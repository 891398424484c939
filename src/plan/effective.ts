/**
 * Effective values: what a device's tunnel really gets for a field governed by a `use_default_<x>`
 * flag (the server's default while the flag is on, the device's own value while it is off). Two
 * kinds of change move them without naming the value (docs/netform.md, "Reading a plan"):
 * - a flip of `use_default_<x>` on a device: its `<x>` goes from its own value to the default, or back;
 * - a change of `configuration.default_client_<x>`: every device with `use_default_<x>` on after
 *   the plan gets the new default.
 * The default is read from `/v0/configuration` when the plan has it, else from live devices that
 * already use it (a device's answer shows the effective value), else it is unknown (`null`: "the
 * server default").
 */
import { DEFAULT_CLIENT_FIELDS, type ApiConfiguration } from '../model/configuration.js';
import {
  DEFAULTABLE_DEVICE_FIELDS,
  fieldOfFlag,
  useDefaultFlag,
  type ApiDevice,
  type DefaultableDeviceField,
} from '../model/device-fields.js';
import { sameDeviceValue } from './device-fields.js';
import type { Change, EffectiveValue } from './types.js';

type Defaults = Record<DefaultableDeviceField, unknown>;

export interface EffectiveInput {
  /** Every change of the plan (the configuration change among them, if any). */
  changes: readonly Change[];
  devices: readonly ApiDevice[];
  /** The key a live device is known by (`alice@example.com/laptop`). */
  keyOf: (device: ApiDevice) => string;
  configuration?: ApiConfiguration;
}

const CONFIGURATION_FIELD = Object.fromEntries(
  Object.entries(DEFAULT_CLIENT_FIELDS).map(([config, device]) => [device, config]),
) as Record<DefaultableDeviceField, keyof typeof DEFAULT_CLIENT_FIELDS>;

/** The server's defaults now: `/v0/configuration`, else a device that uses the default, else null. */
export function currentDefaults(devices: readonly ApiDevice[], configuration?: ApiConfiguration): Defaults {
  const defaults = {} as Defaults;
  for (const field of DEFAULTABLE_DEVICE_FIELDS) {
    const configured = configuration?.[CONFIGURATION_FIELD[field]];
    const user = devices.find((d) => d[useDefaultFlag(field)] === true && d[field] !== null && d[field] !== undefined);
    defaults[field] = configured ?? user?.[field] ?? null;
  }
  return defaults;
}

function same(field: DefaultableDeviceField, a: unknown, b: unknown): boolean {
  return a !== null && b !== null && sameDeviceValue(field, a, b);
}

/**
 * The flag a device has after the plan: as its change sets it; off when the change gives the field
 * a value of its own (the flag left out with its field given is off: src/plan/defaults.ts); else as it is.
 */
function flagAfter(device: ApiDevice, change: Change | undefined, field: DefaultableDeviceField): boolean {
  const flag = useDefaultFlag(field);
  const set = change?.fields.find((f) => f.field === flag);
  if (set) return set.after !== false;
  if (change?.fields.some((f) => f.field === field)) return false;
  return device[flag] === true;
}

/**
 * The effective values each change moves, by change id: a device change's own flips, and for the
 * configuration change every device following a changed default. Only real changes are listed
 * (a value known on both sides and equal is left out).
 */
export function effectiveValues(input: EffectiveInput): Map<string, EffectiveValue[]> {
  const result = new Map<string, EffectiveValue[]>();
  const before = currentDefaults(input.devices, input.configuration);
  const after: Defaults = { ...before };
  const configuration = input.changes.find((c) => c.kind === 'configuration');
  for (const f of configuration?.fields ?? []) {
    const field = (DEFAULT_CLIENT_FIELDS as Record<string, DefaultableDeviceField>)[f.field];
    if (field) after[field] = f.after;
  }
  const liveById = new Map(input.devices.map((d) => [d.id, d]));
  const gone = new Set<string>();
  const changeOf = new Map<string, Change>();
  for (const change of input.changes) {
    if (change.kind === 'user' && change.action === 'delete')
      for (const item of change.cascade ?? []) if (item.kind === 'device') gone.add(item.liveId);
    if (change.kind !== 'device' || !change.liveId) continue;
    if (change.action === 'delete') gone.add(change.liveId);
    else changeOf.set(change.liveId, change);
  }
  // A device's own flips.
  for (const [liveId, change] of changeOf) {
    const device = liveById.get(liveId);
    if (!device) continue;
    const values: EffectiveValue[] = [];
    for (const f of change.fields) {
      const field = fieldOfFlag(f.field);
      if (!field || (f.before !== false) === (f.after !== false)) continue;
      const own = change.body?.[field] ?? device[field];
      const value: EffectiveValue =
        f.after !== false
          ? { device: change.key, field, before: device[field] ?? null, after: after[field] }
          : { device: change.key, field, before: device[field] ?? null, after: own ?? null };
      if (!same(field, value.before, value.after)) values.push(value);
    }
    if (values.length > 0) result.set(change.id, values);
  }
  // Devices following a changed default.
  if (configuration) {
    const values: EffectiveValue[] = [];
    const changed = DEFAULTABLE_DEVICE_FIELDS.filter((field) =>
      configuration.fields.some((f) => f.field === CONFIGURATION_FIELD[field]),
    );
    for (const device of input.devices) {
      if (gone.has(device.id)) continue;
      const change = changeOf.get(device.id);
      for (const field of changed) {
        if (!flagAfter(device, change, field)) continue;
        const value = {
          device: change?.key ?? input.keyOf(device),
          field,
          before: device[field] ?? null,
          after: after[field],
        };
        if (!same(field, value.before, value.after)) values.push(value);
      }
    }
    if (values.length > 0) result.set(configuration.id, values);
  }
  return result;
}
