/** The resources as the /v0 contract shows them. */
import {
  DEFAULTABLE_DEVICE_FIELDS,
  DEVICE_RESPONSE_KEYS,
  CONFIGURATION_RESPONSE_KEYS,
  type ApiConfiguration,
  type ApiDevice,
  type ApiRule,
  type ApiUser,
} from '../../src/model/index.js';
import type { DeviceRow, RuleRow, UserRow } from '../store/index.js';
import type { StoredConfiguration } from './configuration.js';
import type { ServerSettings } from './settings.js';

export function userView(row: UserRow): ApiUser {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    last_signed_in_at: row.last_signed_in_at,
    last_signed_in_method: row.last_signed_in_method,
    disabled_at: row.disabled_at,
    inserted_at: row.inserted_at,
    updated_at: row.updated_at,
  };
}

/** A device with the effective value of every field whose `use_default_<x>` flag is true. */
export function deviceView(row: DeviceRow, settings: ServerSettings): ApiDevice {
  const effective: Record<string, unknown> = { ...row, server_public_key: settings.serverPublicKey };
  for (const field of DEFAULTABLE_DEVICE_FIELDS) {
    if (row[`use_default_${field}`]) effective[field] = settings.defaults[field];
  }
  const view: Record<string, unknown> = {};
  for (const key of DEVICE_RESPONSE_KEYS) view[key] = effective[key] ?? null;
  return view as unknown as ApiDevice;
}

export function ruleView(row: RuleRow): ApiRule {
  return {
    id: row.id,
    action: row.action,
    destination: row.destination,
    port_type: row.port_type,
    port_range: row.port_range,
    user_id: row.user_id,
    inserted_at: row.inserted_at,
    updated_at: row.updated_at,
  };
}

/**
 * The configuration as upstream renders it, with one difference: OpenID Connect client secrets
 * are write-only (`null` here; upstream echoed them). `logo` is `{}` when no logo is set.
 */
export function configurationView(configuration: StoredConfiguration): ApiConfiguration {
  const { values } = configuration;
  const all: Record<string, unknown> = {
    ...values,
    id: configuration.id,
    inserted_at: configuration.inserted_at,
    updated_at: configuration.updated_at,
    openid_connect_providers: values.openid_connect_providers.map((p) => ({ ...p, client_secret: null })),
    logo: values.logo === null ? {} : { url: values.logo.url, data: values.logo.data, type: values.logo.type },
  };
  const view: Record<string, unknown> = {};
  for (const key of CONFIGURATION_RESPONSE_KEYS) view[key] = all[key];
  return view as unknown as ApiConfiguration;
}
