/**
 * Live objects as desired-state YAML values (docs/netform.md section 1.1). The mapping is chosen
 * so that loading the output and planning it against the same server shows no change:
 * - a field at the server's default is left out (role unprivileged; a device field whose
 *   `use_default_<x>` flag is on: neither the flag nor the effective value the server shows);
 * - a field off its default is written; its `use_default_<x>: false` is written only when the
 *   value alone would not imply it (the value is null or an empty list);
 * - secrets are never written: passwords cannot be read, and preshared keys are left out
 *   (unmanaged) with a header comment saying how to manage them by reference;
 * - device tunnel addresses are pinned by default (see ExportOptions.addresses).
 */
import {
  initialConfigurationExtras,
  MANAGED_CONFIGURATION_FIELDS,
  type ApiConfiguration,
} from '../../model/configuration.js';
import { USE_DEFAULT_FLAGS } from '../../model/device-fields.js';
import { parsePortRange } from '../../model/ports.js';
import type { ApiDevice, ApiRule } from '../../model/types.js';
import type { UserEntry } from './grouping.js';

export type Plain = Record<string, unknown>;

export interface Mapping {
  pinAddresses: boolean;
  explicitDefaults: boolean;
}

export function userToYaml(entry: UserEntry, mapping: Mapping): Plain {
  const out: Plain = { email: entry.user.email };
  if (entry.user.role !== 'unprivileged' || mapping.explicitDefaults) out.role = entry.user.role;
  if (entry.devices.length > 0) out.devices = entry.devices.map((d) => deviceToYaml(d, mapping));
  if (entry.rules.length > 0) out.rules = entry.rules.map(ruleToYaml);
  return out;
}

export function deviceToYaml(device: ApiDevice, mapping: Mapping): Plain {
  const out: Plain = { name: device.name };
  if (device.description !== null && device.description !== '') out.description = device.description;
  out.public_key = device.public_key;
  if (mapping.pinAddresses) {
    if (device.ipv4 !== null && device.ipv4 !== '') out.ipv4 = device.ipv4;
    if (device.ipv6 !== null && device.ipv6 !== '') out.ipv6 = device.ipv6;
  }
  for (const [field, flag] of USE_DEFAULT_FLAGS) {
    if (device[flag]) {
      if (mapping.explicitDefaults) out[flag] = true;
      continue;
    }
    const value = device[field];
    const empty = value === null || value === '' || (Array.isArray(value) && value.length === 0);
    // A value given implies its flag false (the table's withImpliedFlags); with no value the flag must say so itself.
    if (empty) out[flag] = false;
    else out[field] = Array.isArray(value) ? [...value] : value;
  }
  return out;
}

export function ruleToYaml(rule: ApiRule): Plain {
  const out: Plain = { action: rule.action, destination: rule.destination };
  if (rule.port_type !== null) out.port_type = rule.port_type;
  if (rule.port_range !== null && rule.port_range !== '') out.port_range = shortPortRange(rule.port_range);
  return out;
}

/** `"443 - 443"` → `"443"`, `"80 - 443"` → `"80-443"`; the planner compares them normalised. */
function shortPortRange(text: string): string {
  const parsed = parsePortRange(text);
  if (!parsed.ok) return text;
  const { low, high } = parsed.range;
  return low === high ? String(low) : `${low}-${high}`;
}

/**
 * The server's configuration as `configuration:`: the device defaults and the two unprivileged-user
 * flags always (what a repository exists to own); the sign-in fields only when off upstream's
 * default or with --explicit-defaults. Sign-in providers and the logo are never exported.
 */
export function configurationToYaml(live: ApiConfiguration, mapping: Mapping): Plain {
  const initial = initialConfigurationExtras() as unknown as Plain;
  const out: Plain = {};
  for (const field of MANAGED_CONFIGURATION_FIELDS) {
    const value = live[field];
    if (value === null || value === undefined) continue;
    const core = field.startsWith('default_client_') || field.startsWith('allow_unprivileged_');
    if (core || mapping.explicitDefaults || JSON.stringify(value) !== JSON.stringify(initial[field]))
      out[field] = value;
  }
  return out;
}
