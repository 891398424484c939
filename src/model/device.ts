/** Field rules of devices (docs/api-v0.md section 5). */
import { addError, hasErrors, type Checked, type FieldErrors } from './errors.js';
import { charLength, has, isBlank, isText, type Mode, type RawInput } from './fields.js';
import { Messages } from './messages.js';
import { isHostname, parseCidrOrAddress, parseEndpoint, parseIpAddress, type IpFamily } from './net.js';
import { checkFlagsInBody, flagAsSent, USE_DEFAULT_FLAGS, type UseDefaultFlags } from './device-fields.js';

export const DEVICE_NAME_MAX_LENGTH = 255;
export const DEVICE_DESCRIPTION_MAX_LENGTH = 2048;
export const WIREGUARD_KEY_LENGTH = 44;
export const MTU_BOUNDS = { min: 576, max: 1500 } as const;
export const PERSISTENT_KEEPALIVE_BOUNDS = { min: 0, max: 120 } as const;
export const DEFAULT_MAX_DEVICES_PER_USER = 10;

/** A checked device body: the fields it carried, normalised. The flags are the table's (device-fields.ts). */
export interface DeviceInput extends Partial<UseDefaultFlags> {
  user_id?: string;
  name?: string;
  description?: string | null;
  public_key?: string;
  /** Secret. Never logged. */
  preshared_key?: string;
  allowed_ips?: string[] | null;
  dns?: string[] | null;
  endpoint?: string | null;
  mtu?: number | null;
  persistent_keepalive?: number | null;
  ipv4?: string | null;
  ipv6?: string | null;
}

/** Standard base64 of 32 bytes as Buffer writes it: 43 characters (the last carrying 2 zero bits), then `=`. */
const CANONICAL_KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** Messages for a WireGuard key: standard base64 of exactly 32 bytes, 44 characters. */
export function wireguardKeyMessages(value: unknown): string[] {
  if (typeof value !== 'string') return [Messages.base64];
  if (!isText(value)) return [Messages.invalid];
  // The common case, without decoding: a well-formed key has nothing to report.
  if (CANONICAL_KEY.test(value)) return [];
  const messages: string[] = [];
  const canonical = Buffer.from(value, 'base64').toString('base64') === value;
  if (!canonical) messages.push(Messages.base64);
  if (value.length !== WIREGUARD_KEY_LENGTH) messages.push(Messages.wrongLength(WIREGUARD_KEY_LENGTH));
  else if (canonical && Buffer.from(value, 'base64').length !== 32) messages.push(Messages.invalid);
  return messages;
}

/** An integer field within bounds; `is invalid` for anything else. Shared with the configuration's fields. */
export function checkInteger(
  field: string,
  value: unknown,
  bounds: { min: number; max: number },
  errors: FieldErrors,
): number | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    addError(errors, field, Messages.invalid);
    return undefined;
  }
  if (value < bounds.min) addError(errors, field, Messages.greaterOrEqual(bounds.min));
  if (value > bounds.max) addError(errors, field, Messages.lessOrEqual(bounds.max));
  return value;
}

/** A list of strings whose entries pass `entryValid` (its normal form, or null), without duplicates. */
export function checkList(
  field: string,
  value: unknown,
  entryValid: (s: string) => string | null,
  errors: FieldErrors,
): string[] | undefined {
  if (!Array.isArray(value)) {
    addError(errors, field, Messages.invalid);
    return undefined;
  }
  const seen = new Set<string>();
  const list: string[] = [];
  for (const entry of value) {
    const text = isText(entry) ? entry.trim() : null;
    const key = text === null ? null : entryValid(text);
    if (text === null || key === null) {
      addError(errors, field, Messages.invalid);
      continue;
    }
    if (seen.has(key)) addError(errors, field, Messages.duplicates);
    seen.add(key);
    list.push(text);
  }
  return list;
}

/** An allowed_ips entry: an address or a CIDR block; returns its normal form, or null. */
export function allowedIpKey(text: string): string | null {
  return parseCidrOrAddress(text)?.canonical ?? null;
}

/** A dns entry: an address or a host name, no port; returns its normal form, or null. */
export function dnsEntryKey(text: string): string | null {
  const address = parseIpAddress(text);
  if (address) return address.text;
  return isHostname(text) && !/^[\d.]+$/.test(text) ? text.toLowerCase() : null;
}

export function checkDeviceName(value: unknown): string | { message: string } {
  if (isBlank(value)) return { message: Messages.blank };
  if (!isText(value)) return { message: Messages.invalid };
  const name = value.trim();
  if (charLength(name) > DEVICE_NAME_MAX_LENGTH) return { message: Messages.tooLong(DEVICE_NAME_MAX_LENGTH) };
  return name;
}

/**
 * Checks a `device` body: formats and bounds that need no database. Existence of the user,
 * uniqueness, tunnel ranges and the device limit are the server's (see checkTunnelAddress).
 * On update `user_id` is ignored.
 */
export function checkDeviceInput(input: RawInput, mode: Mode): Checked<DeviceInput> {
  const errors: FieldErrors = {};
  const value: DeviceInput = {};

  if (mode === 'create') {
    if (isBlank(input.user_id)) addError(errors, 'user_id', Messages.blank);
    else if (!isText(input.user_id)) addError(errors, 'user_id', Messages.invalid);
    else value.user_id = input.user_id.trim();
  }

  if (has(input, 'name') && !(mode === 'create' && isBlank(input.name))) {
    const name = checkDeviceName(input.name);
    if (typeof name === 'string') value.name = name;
    else addError(errors, 'name', name.message);
  }

  if (has(input, 'description')) {
    const d = input.description;
    if (isBlank(d)) value.description = null;
    else if (!isText(d)) addError(errors, 'description', Messages.invalid);
    else if (charLength(d) > DEVICE_DESCRIPTION_MAX_LENGTH)
      addError(errors, 'description', Messages.tooLong(DEVICE_DESCRIPTION_MAX_LENGTH));
    else value.description = d;
  }

  if (mode === 'create' || has(input, 'public_key')) {
    if (isBlank(input.public_key)) addError(errors, 'public_key', Messages.blank);
    else {
      const messages = wireguardKeyMessages(input.public_key);
      for (const m of messages) addError(errors, 'public_key', m);
      if (messages.length === 0) value.public_key = input.public_key as string;
    }
  }

  if (has(input, 'preshared_key')) {
    if (isBlank(input.preshared_key)) {
      if (mode === 'update') addError(errors, 'preshared_key', Messages.blank);
    } else {
      const messages = wireguardKeyMessages(input.preshared_key);
      for (const m of messages) addError(errors, 'preshared_key', m);
      if (messages.length === 0) value.preshared_key = input.preshared_key as string;
    }
  }

  for (const [, flag] of USE_DEFAULT_FLAGS) {
    if (has(input, flag) || mode === 'create') {
      const v = flagAsSent(input, flag, mode);
      if (typeof v === 'boolean') value[flag] = v;
      else addError(errors, flag, Messages.invalid);
    }
  }

  if (has(input, 'allowed_ips')) {
    if (isBlank(input.allowed_ips)) value.allowed_ips = null;
    else {
      const list = checkList('allowed_ips', input.allowed_ips, allowedIpKey, errors);
      if (list) value.allowed_ips = list;
    }
  }
  if (has(input, 'dns')) {
    if (isBlank(input.dns)) value.dns = null;
    else {
      const list = checkList('dns', input.dns, dnsEntryKey, errors);
      if (list) value.dns = list;
    }
  }
  if (has(input, 'endpoint')) {
    const e = input.endpoint;
    if (isBlank(e)) value.endpoint = null;
    else if (!isText(e) || parseEndpoint(e) === null) addError(errors, 'endpoint', Messages.invalid);
    else value.endpoint = e.trim();
  }
  if (has(input, 'mtu')) {
    if (isBlank(input.mtu)) value.mtu = null;
    else {
      const n = checkInteger('mtu', input.mtu, MTU_BOUNDS, errors);
      if (n !== undefined) value.mtu = n;
    }
  }
  if (has(input, 'persistent_keepalive')) {
    if (isBlank(input.persistent_keepalive)) value.persistent_keepalive = null;
    else {
      const n = checkInteger('persistent_keepalive', input.persistent_keepalive, PERSISTENT_KEEPALIVE_BOUNDS, errors);
      if (n !== undefined) value.persistent_keepalive = n;
    }
  }

  for (const [field, family] of [
    ['ipv4', 4],
    ['ipv6', 6],
  ] as const) {
    if (!has(input, field)) continue;
    const a = input[field];
    if (isBlank(a)) {
      if (mode === 'update') addError(errors, field, Messages.blank);
      continue;
    }
    const parsed = isText(a) ? parseIpAddress(a) : null;
    if (!parsed || parsed.family !== family) addError(errors, field, Messages.invalid);
    // Kept as written (the contract echoes bodies as sent); whoever compares addresses parses them.
    else value[field] = (a as string).trim();
  }

  // A field's value beside its default flag turned on; an endpoint when the default is off.
  checkFlagsInBody(input, mode, errors);

  return hasErrors(errors) ? { ok: false, errors, partial: value } : { ok: true, value };
}

/** The server's tunnel network of one family. */
export interface TunnelNetwork {
  cidr: string;
  serverAddress: string;
}

/**
 * Checks a device address against a tunnel network: inside it, and not its network, broadcast
 * or server address. Returns the message, or null when the address may be used.
 */
export function checkTunnelAddress(address: string, family: IpFamily, network: TunnelNetwork): string | null {
  const parsed = parseIpAddress(address);
  const block = parseCidrOrAddress(network.cidr);
  if (!parsed || parsed.family !== family || !block) return Messages.invalid;
  if (parsed.value < block.start || parsed.value > block.end) return Messages.notInCidr(block.network);
  const server = parseIpAddress(network.serverAddress);
  if (parsed.value === block.start || parsed.value === block.end || (server && server.value === parsed.value))
    return Messages.reserved;
  return null;
}
