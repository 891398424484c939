/**
 * The device-field table: each field of a /v0 device once, with what it is to the server, to a
 * declaration and to an upstream 0.7.26+ update, and the `use_default_<x>` rule (docs/api-v0.md
 * section 5). The lists of device fields derive from here: the server's body checks, its
 * merged-device check, its response schema and its stores' columns; the desired-state reader and
 * its shorthand; the planner's comparison; the executor's answer checks; export.
 *
 * Three hot paths spell the fields out one by one instead, for speed, and must follow the table
 * by hand: the server's device answer (`deviceView`, server/services/views.ts, with the
 * `use_default_<x>` rule written per field), the SQLite reader's positional rows (`toDevice`,
 * server/store/sqlite.ts, in `DEVICE_COLUMNS` order) and the client's reading of an answer
 * (`readDevice`, src/client/resources.ts, which also restates the flags' create default). The
 * compiler checks their keys against `ApiDevice` and `DeviceRow`, not their order or the rule.
 */
import { addError, type FieldErrors } from './errors.js';
import { has, isBlank, type Mode, type RawInput } from './fields.js';
import { Messages } from './messages.js';

export interface ApiDevice {
  id: string;
  user_id: string;
  name: string;
  description: string | null;
  public_key: string;
  preshared_key: string | null;
  server_public_key: string;
  ipv4: string | null;
  ipv6: string | null;
  allowed_ips: string[] | null;
  dns: string[] | null;
  endpoint: string | null;
  mtu: number | null;
  persistent_keepalive: number | null;
  use_default_allowed_ips: boolean;
  use_default_dns: boolean;
  use_default_endpoint: boolean;
  use_default_mtu: boolean;
  use_default_persistent_keepalive: boolean;
  remote_ip: string | null;
  latest_handshake: string | null;
  rx_bytes: number | null;
  tx_bytes: number | null;
  inserted_at: string;
  updated_at: string;
}

/** What one device field is. Properties left out are false. */
interface DeviceField {
  /**
   * What the server does with it in a request body: reads it on `create` only (`user_id`; an
   * update ignores it), reads it on create and update (`always`), or never (`answer`: it is only
   * answered; a body carrying it is not refused, the key is ignored).
   */
  body: 'create' | 'always' | 'answer';
  /**
   * A declaration may manage it: the planner compares it with the live device and sends it. (The
   * name, the owner and the preshared key are managed too, each its own way: the name is the
   * device's key, the owner is where it is declared, the preshared key is a secret reference.)
   */
  writable?: true;
  /** Upstream Firezone 0.7.26+ still changes it on update; it silently ignores every other field there. */
  legacyUpdatable?: true;
  /** A list of strings (stored as JSON). */
  list?: true;
  /** The server's default stands in for it while its flag (the row naming it in `flagOf`) is on. */
  defaultable?: true;
  /** The flag of a defaultable field: on, the device uses the server's default for that field. */
  flagOf?: string;
  /** The value the server gives it on create when the body leaves it out. */
  createDefault?: boolean;
  /** Not kept per device: `server_public_key` is the server's own key, the same on every device. */
  notStored?: true;
}

/** The table, in the contract's key order (the order of a device response). */
export const DEVICE_FIELD_TABLE = {
  id: { body: 'answer' },
  user_id: { body: 'create' },
  name: { body: 'always', legacyUpdatable: true },
  description: { body: 'always', writable: true, legacyUpdatable: true },
  public_key: { body: 'always', writable: true },
  preshared_key: { body: 'always' },
  server_public_key: { body: 'answer', notStored: true },
  ipv4: { body: 'always', writable: true },
  ipv6: { body: 'always', writable: true },
  allowed_ips: { body: 'always', writable: true, defaultable: true, list: true },
  dns: { body: 'always', writable: true, defaultable: true, list: true },
  endpoint: { body: 'always', writable: true, defaultable: true },
  mtu: { body: 'always', writable: true, defaultable: true },
  persistent_keepalive: { body: 'always', writable: true, defaultable: true },
  use_default_allowed_ips: { body: 'always', writable: true, flagOf: 'allowed_ips', createDefault: true },
  use_default_dns: { body: 'always', writable: true, flagOf: 'dns', createDefault: true },
  use_default_endpoint: { body: 'always', writable: true, flagOf: 'endpoint', createDefault: true },
  use_default_mtu: { body: 'always', writable: true, flagOf: 'mtu', createDefault: true },
  use_default_persistent_keepalive: {
    body: 'always',
    writable: true,
    flagOf: 'persistent_keepalive',
    createDefault: true,
  },
  remote_ip: { body: 'answer' },
  latest_handshake: { body: 'answer' },
  rx_bytes: { body: 'answer' },
  tx_bytes: { body: 'answer' },
  inserted_at: { body: 'answer' },
  updated_at: { body: 'answer' },
} as const satisfies Record<keyof ApiDevice, DeviceField>;

type Table = typeof DEVICE_FIELD_TABLE;
export type DeviceFieldName = keyof Table;
/** The names of the fields whose row has the properties `P`. */
type FieldsWith<P> = { [K in DeviceFieldName]: Table[K] extends P ? K : never }[DeviceFieldName];

function fieldsWhere<K extends DeviceFieldName>(test: (field: DeviceField) => boolean): readonly K[] {
  return (Object.keys(DEVICE_FIELD_TABLE) as DeviceFieldName[]).filter((name) => test(DEVICE_FIELD_TABLE[name])) as K[];
}

/** The 25 keys of a device response, in the contract's order. */
export const DEVICE_RESPONSE_KEYS: readonly DeviceFieldName[] = Object.keys(DEVICE_FIELD_TABLE) as DeviceFieldName[];

/** The fields a store keeps per device, in the contract's order: all but the server's own key. */
export type StoredDeviceField = Exclude<DeviceFieldName, FieldsWith<{ notStored: true }>>;
export const STORED_DEVICE_FIELDS = fieldsWhere<StoredDeviceField>((f) => !f.notStored);

/** The fields `use_default_<x>` flags govern. */
export type DefaultableDeviceField = FieldsWith<{ defaultable: true }>;
export const DEFAULTABLE_DEVICE_FIELDS = fieldsWhere<DefaultableDeviceField>((f) => f.defaultable === true);

/** The flags themselves. */
export type UseDefaultFlag = FieldsWith<{ flagOf: string }>;
export type UseDefaultFlags = Record<UseDefaultFlag, boolean>;

/** Each defaultable field with its flag, named once rather than on every check. */
export const USE_DEFAULT_FLAGS: readonly (readonly [DefaultableDeviceField, UseDefaultFlag])[] =
  fieldsWhere<UseDefaultFlag>((f) => f.flagOf !== undefined).map(
    (flag) => [DEVICE_FIELD_TABLE[flag].flagOf, flag] as const,
  );

const FLAG_OF = new Map<string, UseDefaultFlag>(USE_DEFAULT_FLAGS);
const FIELD_OF_FLAG = new Map<string, DefaultableDeviceField>(USE_DEFAULT_FLAGS.map(([field, flag]) => [flag, field]));

/** The flag of a defaultable field. */
export function useDefaultFlag(field: DefaultableDeviceField): UseDefaultFlag {
  return FLAG_OF.get(field)!;
}

export function isDefaultableField(name: string): name is DefaultableDeviceField {
  return FLAG_OF.has(name);
}

/** The field a flag governs, or undefined when `name` is no flag. */
export function fieldOfFlag(name: string): DefaultableDeviceField | undefined {
  return FIELD_OF_FLAG.get(name);
}

/**
 * The fields a declaration may manage and a create body may carry besides `user_id`, `name` and
 * `preshared_key`, in a stable order: the plain ones, then each defaultable field after its flag.
 */
export type WritableDeviceField = FieldsWith<{ writable: true }>;
export const WRITABLE_DEVICE_FIELDS: readonly WritableDeviceField[] = [
  ...fieldsWhere<WritableDeviceField>((f) => f.writable === true && !f.defaultable && f.flagOf === undefined),
  ...USE_DEFAULT_FLAGS.flatMap(([field, flag]) => [flag, field]),
];

const WRITABLE = new Set<string>(WRITABLE_DEVICE_FIELDS);

export function isWritableDeviceField(name: string): name is WritableDeviceField {
  return WRITABLE.has(name);
}

/** Fields upstream Firezone 0.7.26+ still changes on update; it silently ignores all others. */
export type LegacyUpdatableDeviceField = FieldsWith<{ legacyUpdatable: true }>;
export const LEGACY_UPDATABLE_DEVICE_FIELDS = fieldsWhere<LegacyUpdatableDeviceField>(
  (f) => f.legacyUpdatable === true,
);
const LEGACY_UPDATABLE = new Set<string>(LEGACY_UPDATABLE_DEVICE_FIELDS);

export function isLegacyUpdatable(field: string): boolean {
  return LEGACY_UPDATABLE.has(field);
}

/** The list-valued fields (each governed by a flag). */
export type ListDeviceField = FieldsWith<{ list: true }>;
export const LIST_DEVICE_FIELDS = fieldsWhere<ListDeviceField>((f) => f.list === true);

/** The flags as a create stores them: each as given, else its create default (on). */
export function flagsOnCreate(given: Partial<UseDefaultFlags>): UseDefaultFlags {
  const flags = {} as UseDefaultFlags;
  for (const [, flag] of USE_DEFAULT_FLAGS) flags[flag] = given[flag] ?? DEVICE_FIELD_TABLE[flag].createDefault;
  return flags;
}

// ---------------------------------------------------------------------------------------------
// The `use_default_<x>` rule.

function isEmptyValue(value: unknown): boolean {
  return isBlank(value) || (Array.isArray(value) && value.length === 0);
}

/**
 * Giving `<x>` (allowed_ips, dns, endpoint, mtu, persistent_keepalive) in a declaration means the
 * device does not use the server's default for it: its flag becomes false unless the declaration
 * states it. A stated `true` is kept, so that the contradiction is reported rather than hidden.
 */
export function withImpliedFlags<T extends Partial<Record<DefaultableDeviceField, unknown> & UseDefaultFlags>>(
  fields: T,
): T {
  const result: T = { ...fields };
  for (const [field, flag] of USE_DEFAULT_FLAGS) {
    if (result[field] !== undefined && result[flag] === undefined) (result as Partial<UseDefaultFlags>)[flag] = false;
  }
  return result;
}

/**
 * A flag as a body gives it: its value when sent; left out, its create default on create and
 * nothing on update. Whatever is not a boolean is the caller's to refuse.
 */
export function flagAsSent(input: RawInput, flag: UseDefaultFlag, mode: Mode): unknown {
  if (!has(input, flag)) return mode === 'create' ? DEVICE_FIELD_TABLE[flag].createDefault : undefined;
  // `""` is the flag's default, as at 0.7.36, whose cast turns `""` into the field's default.
  return input[flag] === '' ? DEVICE_FIELD_TABLE[flag].createDefault : input[flag];
}

/**
 * The rule on one body: a flag that is on together with a value for its field is refused (on
 * create an omitted flag is on, so a value sent without its flag set false is refused too: it
 * would be stored but never shown, the default being shown instead); and an endpoint is needed
 * when the default one is not used.
 */
export function checkFlagsInBody(input: RawInput, mode: Mode, errors: FieldErrors): void {
  for (const [field, flag] of USE_DEFAULT_FLAGS) {
    if (flagAsSent(input, flag, mode) === true && !isEmptyValue(input[field]))
      addError(errors, field, Messages.mustNotBePresent);
  }
  if (
    input[useDefaultFlag('endpoint')] === false &&
    isBlank(input.endpoint) &&
    (mode === 'create' || has(input, 'endpoint'))
  ) {
    addError(errors, 'endpoint', Messages.blank);
  }
}

type FlaggedDevice = Record<DefaultableDeviceField, unknown> & UseDefaultFlags;

/**
 * The list fields a device must hold as `[]`: those whose flag is off and that have no list (none
 * given, or null). Upstream 0.7.36 stores and returns `[]` there, not null.
 */
export function emptyOwnLists(
  device: Pick<FlaggedDevice, ListDeviceField | (typeof USE_DEFAULT_FLAGS)[number][1]>,
): Partial<Record<ListDeviceField, string[]>> {
  const fill: Partial<Record<ListDeviceField, string[]>> = {};
  for (const field of LIST_DEVICE_FIELDS)
    if (!device[useDefaultFlag(field)] && device[field] === null) fill[field] = [];
  return fill;
}

/**
 * A new device's own values under the rule (its body already checked): a field whose flag is on
 * keeps no value of its own (null), and a list whose flag is off and that has none is `[]`.
 */
export function settleNewDevice(row: FlaggedDevice): Partial<FlaggedDevice> {
  const settled: Partial<FlaggedDevice> = {};
  for (const [field, flag] of USE_DEFAULT_FLAGS) if (row[flag] && isEmptyValue(row[field])) settled[field] = null;
  return { ...settled, ...emptyOwnLists({ ...row, ...settled }) };
}

/**
 * The rule on a whole device: the stored device with an update's patch applied (`merged`, which
 * this updates), against the body that was sent. A value sent for a field whose flag is on is
 * refused; turning a flag on drops the field's own value, which would otherwise linger unseen;
 * turning a list's flag off without a list of its own leaves it `[]` (as upstream); an endpoint is
 * needed while the default one is not used (unless the one sent was refused already). Returns
 * what the patch must change besides.
 */
export function checkMergedDevice(merged: FlaggedDevice, sent: RawInput, errors: FieldErrors): Partial<FlaggedDevice> {
  const changes: Partial<FlaggedDevice> = {};
  for (const [field, flag] of USE_DEFAULT_FLAGS) {
    if (!merged[flag]) continue;
    if (field in sent && !isEmptyValue(sent[field])) addError(errors, field, Messages.mustNotBePresent);
    else if (merged[field] !== null) changes[field] = merged[field] = null;
  }
  Object.assign(changes, emptyOwnLists(merged as Pick<FlaggedDevice, ListDeviceField | UseDefaultFlag>));
  if (!merged[useDefaultFlag('endpoint')] && isBlank(merged.endpoint) && !errors.endpoint)
    addError(errors, 'endpoint', Messages.blank);
  return changes;
}
