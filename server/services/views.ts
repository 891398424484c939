/** The resources as the /v0 contract shows them. */
import {
  CONFIGURATION_RESPONSE_KEYS,
  answerPortRange,
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

/**
 * A device with the effective value of every field whose `use_default_<x>` flag is true, keys in
 * the contract's order (DEVICE_RESPONSE_KEYS), absent values as null. Written out field by
 * field: lists of 60,000 devices go through it.
 */
export function deviceView(row: DeviceRow, settings: ServerSettings): ApiDevice {
  const defaults = settings.defaults;
  return {
    id: row.id ?? null,
    user_id: row.user_id ?? null,
    name: row.name ?? null,
    description: row.description ?? null,
    public_key: row.public_key ?? null,
    preshared_key: row.preshared_key ?? null,
    server_public_key: settings.serverPublicKey ?? null,
    ipv4: row.ipv4 ?? null,
    ipv6: row.ipv6 ?? null,
    allowed_ips: (row.use_default_allowed_ips ? defaults.allowed_ips : row.allowed_ips) ?? null,
    dns: (row.use_default_dns ? defaults.dns : row.dns) ?? null,
    endpoint: (row.use_default_endpoint ? defaults.endpoint : row.endpoint) ?? null,
    mtu: (row.use_default_mtu ? defaults.mtu : row.mtu) ?? null,
    persistent_keepalive:
      (row.use_default_persistent_keepalive ? defaults.persistent_keepalive : row.persistent_keepalive) ?? null,
    use_default_allowed_ips: row.use_default_allowed_ips ?? null,
    use_default_dns: row.use_default_dns ?? null,
    use_default_endpoint: row.use_default_endpoint ?? null,
    use_default_mtu: row.use_default_mtu ?? null,
    use_default_persistent_keepalive: row.use_default_persistent_keepalive ?? null,
    remote_ip: row.remote_ip ?? null,
    latest_handshake: row.latest_handshake ?? null,
    rx_bytes: row.rx_bytes ?? null,
    tx_bytes: row.tx_bytes ?? null,
    inserted_at: row.inserted_at ?? null,
    updated_at: row.updated_at ?? null,
  };
}

/**
 * The view of a device row the store keeps (frozen, shared between requests until anything
 * commits: see the SQLite store's reader), made once per row and settings and frozen in turn, so
 * that a route can keep its answer's bytes with it (routes/answer.ts). Any other row (read
 * afresh, on PostgreSQL or inside a write) gets a view of its own, as deviceView makes it.
 */
export function shownDevice(row: DeviceRow, settings: ServerSettings): ApiDevice {
  if (!Object.isFrozen(row) || !Object.isFrozen(settings)) return deviceView(row, settings);
  const kept = keptDeviceViews.get(row);
  if (kept !== undefined && kept.settings === settings) return kept.view;
  const view = Object.freeze(deviceView(row, settings));
  keptDeviceViews.set(row, { settings, view });
  return view;
}

/** Views of kept device rows, forgotten with the rows (see shownDevice). */
const keptDeviceViews = new WeakMap<DeviceRow, { settings: ServerSettings; view: ApiDevice }>();

/** A rule as 0.7.36 answers it: a single port as one number (`"443"`), stored as `"443 - 443"`. */
export function ruleView(row: RuleRow): ApiRule {
  return {
    id: row.id,
    action: row.action,
    destination: row.destination,
    port_type: row.port_type,
    port_range: answerPortRange(row.port_range),
    user_id: row.user_id,
    inserted_at: row.inserted_at,
    updated_at: row.updated_at,
  };
}

/** The view of a rule row the store keeps (frozen), made once per row and frozen (see shownDevice). */
export function shownRule(row: RuleRow): ApiRule {
  if (!Object.isFrozen(row)) return ruleView(row);
  let view = keptRuleViews.get(row);
  if (view === undefined) keptRuleViews.set(row, (view = Object.freeze(ruleView(row))));
  return view;
}

const keptRuleViews = new WeakMap<RuleRow, ApiRule>();

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
