/**
 * Field rules of the server configuration (`/v0/configuration`, a singleton), as upstream
 * Firezone 0.7.36 has it. The five `default_client_*` fields are the server defaults devices use
 * (the same values `netform server defaults` manages); the others are stored and echoed.
 * See docs/api-v0.md section 7 for what the server does with each field.
 */
import { addError, hasErrors, type Checked, type FieldErrors } from './errors.js';
import {
  allowedIpKey,
  checkInteger,
  checkList,
  dnsEntryKey,
  MTU_BOUNDS,
  PERSISTENT_KEEPALIVE_BOUNDS,
} from './device.js';
import { has, isBlank, isPlainObject, isText, type RawInput } from './fields.js';
import { Messages } from './messages.js';
import { parseEndpoint } from './net.js';

/** Upstream keeps this in a 4-byte integer column. */
export const VPN_SESSION_DURATION_MAX = 2_147_483_647;
/** Provider ids upstream reserves for its own sign-in routes. */
export const RESERVED_PROVIDER_IDS = ['identity', 'saml', 'magic_link'] as const;

export interface OpenIdConnectProvider {
  id: string;
  label: string;
  scope: string;
  response_type: string;
  client_id: string;
  /** Secret: write-only, never returned, logged or shown in a plan. */
  client_secret: string | null;
  discovery_document_uri: string;
  redirect_uri: string | null;
  auto_create_users: boolean;
}

export interface SamlIdentityProvider {
  id: string;
  label: string;
  base_url: string | null;
  metadata: string;
  sign_requests: boolean;
  sign_metadata: boolean;
  signed_assertion_in_resp: boolean;
  signed_envelopes_in_resp: boolean;
  auto_create_users: boolean;
}

export interface ConfigurationLogo {
  url: string | null;
  data: string | null;
  type: string | null;
}

/** The values of the configuration, without its id and timestamps. */
export interface ConfigurationValues {
  local_auth_enabled: boolean;
  allow_unprivileged_device_management: boolean;
  allow_unprivileged_device_configuration: boolean;
  disable_vpn_on_oidc_error: boolean;
  vpn_session_duration: number;
  default_client_persistent_keepalive: number;
  default_client_mtu: number;
  default_client_endpoint: string;
  default_client_dns: string[];
  default_client_allowed_ips: string[];
  openid_connect_providers: OpenIdConnectProvider[];
  saml_identity_providers: SamlIdentityProvider[];
  logo: ConfigurationLogo | null;
}

/** `GET /v0/configuration`'s `data`: the values, an id and timestamps; `logo` is `{}` when unset. */
export interface ApiConfiguration extends Omit<ConfigurationValues, 'logo'> {
  id: string;
  logo: Partial<ConfigurationLogo>;
  inserted_at: string;
  updated_at: string;
}

export type ConfigurationInput = Partial<ConfigurationValues>;

export const CONFIGURATION_BOOLEAN_FIELDS = [
  'local_auth_enabled',
  'allow_unprivileged_device_management',
  'allow_unprivileged_device_configuration',
  'disable_vpn_on_oidc_error',
] as const;

/** The configuration fields that are the server's device defaults, with the device field each one stands for. */
export const DEFAULT_CLIENT_FIELDS = {
  default_client_allowed_ips: 'allowed_ips',
  default_client_dns: 'dns',
  default_client_endpoint: 'endpoint',
  default_client_mtu: 'mtu',
  default_client_persistent_keepalive: 'persistent_keepalive',
} as const;
export type DefaultClientField = keyof typeof DEFAULT_CLIENT_FIELDS;

/** The keys of `data`, in upstream's documented (alphabetical) order. */
export const CONFIGURATION_RESPONSE_KEYS = [
  'allow_unprivileged_device_configuration',
  'allow_unprivileged_device_management',
  'default_client_allowed_ips',
  'default_client_dns',
  'default_client_endpoint',
  'default_client_mtu',
  'default_client_persistent_keepalive',
  'disable_vpn_on_oidc_error',
  'id',
  'inserted_at',
  'local_auth_enabled',
  'logo',
  'openid_connect_providers',
  'saml_identity_providers',
  'updated_at',
  'vpn_session_duration',
] as const satisfies readonly (keyof ApiConfiguration)[];

/** What a configuration holds before anyone changes it: upstream's defaults (the device defaults are the server's). */
export function initialConfigurationExtras(): Omit<ConfigurationValues, DefaultClientField> {
  return {
    local_auth_enabled: true,
    allow_unprivileged_device_management: true,
    allow_unprivileged_device_configuration: true,
    disable_vpn_on_oidc_error: false,
    vpn_session_duration: 0,
    openid_connect_providers: [],
    saml_identity_providers: [],
    logo: null,
  };
}

function checkBoolean(errors: FieldErrors, field: string, value: unknown): boolean | undefined {
  if (isBlank(value)) addError(errors, field, Messages.blank);
  else if (typeof value !== 'boolean') addError(errors, field, Messages.invalid);
  else return value;
  return undefined;
}

/** An http(s) URL with a host; the message otherwise (upstream's wording). */
export function uriMessage(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return Messages.uriNoHost;
  }
  if (url.host === '') return Messages.uriNoHost;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Messages.uriScheme;
  return null;
}

type ItemErrors = string[];

/** One embedded object's fields; its errors are `<key> <message>` strings, as upstream words them. */
class ItemReader {
  readonly errors: ItemErrors = [];
  constructor(private readonly raw: RawInput) {}

  private add(key: string, message: string): void {
    const text = `${key} ${message}`;
    if (!this.errors.includes(text)) this.errors.push(text);
  }

  /**
   * A text field, kept exactly as sent (0.7.36 stores provider fields untrimmed: SAML metadata
   * keeps its final newline). Only white space still counts as blank.
   */
  text(key: string, required: boolean): string | null {
    const value = this.raw[key];
    if (isBlank(value)) {
      if (required) this.add(key, Messages.blank);
      return null;
    }
    if (!isText(value)) {
      this.add(key, Messages.invalid);
      return null;
    }
    return value;
  }

  flag(key: string, fallback: boolean | null): boolean {
    const value = this.raw[key];
    if (isBlank(value)) {
      if (fallback === null) this.add(key, Messages.blank);
      return fallback ?? false;
    }
    if (typeof value !== 'boolean') this.add(key, Messages.invalid);
    return value === true;
  }

  id(): string {
    const id = this.text('id', true) ?? '';
    if ((RESERVED_PROVIDER_IDS as readonly string[]).includes(id)) this.add('id', Messages.reserved);
    return id;
  }

  uri(key: string, value: string | null): void {
    const message = value === null ? null : uriMessage(value);
    if (message) this.add(key, message);
  }

  expect(key: string, ok: boolean, message: string): void {
    if (!ok) this.add(key, message);
  }
}

/**
 * An OpenID Connect provider. `client_secret` may be left out when a provider of the same id is
 * stored: the stored secret is kept (it is never returned, so a client that sends back what it
 * read must not erase it).
 */
function checkOidcProvider(
  raw: RawInput,
  storedSecret: (id: string) => string | null,
): { value: OpenIdConnectProvider; errors: ItemErrors } {
  const item = new ItemReader(raw);
  const id = item.id();
  const secret = isBlank(raw.client_secret) ? storedSecret(id) : item.text('client_secret', true);
  if (secret === null) item.text('client_secret', true);
  const value: OpenIdConnectProvider = {
    id,
    label: item.text('label', true) ?? '',
    scope: has(raw, 'scope') ? (item.text('scope', true) ?? '') : 'openid email profile',
    response_type: has(raw, 'response_type') ? (item.text('response_type', true) ?? '') : 'code',
    client_id: item.text('client_id', true) ?? '',
    client_secret: secret,
    discovery_document_uri: item.text('discovery_document_uri', true) ?? '',
    redirect_uri: item.text('redirect_uri', false),
    auto_create_users: item.flag('auto_create_users', null),
  };
  if (value.scope !== '') {
    item.expect('scope', /openid/.test(value.scope), Messages.scopeOpenid);
    item.expect('scope', /email/.test(value.scope), Messages.scopeEmail);
  }
  if (value.response_type !== '') item.expect('response_type', value.response_type === 'code', Messages.invalid);
  item.uri('discovery_document_uri', value.discovery_document_uri || null);
  item.uri('redirect_uri', value.redirect_uri);
  return { value, errors: item.errors };
}

function checkSamlProvider(raw: RawInput): { value: SamlIdentityProvider; errors: ItemErrors } {
  const item = new ItemReader(raw);
  const value: SamlIdentityProvider = {
    id: item.id(),
    label: item.text('label', true) ?? '',
    base_url: item.text('base_url', false),
    metadata: item.text('metadata', true) ?? '',
    sign_requests: item.flag('sign_requests', true),
    sign_metadata: item.flag('sign_metadata', true),
    signed_assertion_in_resp: item.flag('signed_assertion_in_resp', true),
    signed_envelopes_in_resp: item.flag('signed_envelopes_in_resp', true),
    auto_create_users: item.flag('auto_create_users', null),
  };
  item.uri('base_url', value.base_url);
  // Upstream parses the XML; this server signs no one in, so it only checks it is XML-shaped.
  if (value.metadata !== '') item.expect('metadata', value.metadata.trimStart().startsWith('<'), Messages.invalid);
  return { value, errors: item.errors };
}

function checkProviders<T extends { id: string }>(
  errors: FieldErrors,
  field: string,
  value: unknown,
  checkItem: (raw: RawInput) => { value: T; errors: ItemErrors },
): T[] | undefined {
  if (isBlank(value)) return [];
  if (!Array.isArray(value)) {
    addError(errors, field, Messages.invalid);
    return undefined;
  }
  const items: T[] = [];
  const ids = new Set<string>();
  for (const raw of value) {
    if (!isPlainObject(raw)) {
      addError(errors, field, Messages.invalid);
      continue;
    }
    const checked = checkItem(raw);
    for (const message of checked.errors) addError(errors, field, message);
    if (checked.value.id !== '' && ids.has(checked.value.id)) addError(errors, field, `id ${Messages.taken}`);
    ids.add(checked.value.id);
    items.push(checked.value);
  }
  return items;
}

function checkLogo(errors: FieldErrors, value: unknown): ConfigurationLogo | null | undefined {
  if (isBlank(value)) return null;
  if (!isPlainObject(value)) {
    addError(errors, 'logo', Messages.invalid);
    return undefined;
  }
  const logo: ConfigurationLogo = { url: null, data: null, type: null };
  // `file` (a path on the server that upstream copies) is ignored: no request may read server files.
  for (const key of ['url', 'data', 'type'] as const) {
    const v = value[key];
    if (isBlank(v)) continue;
    if (!isText(v)) addError(errors, 'logo', `${key} ${Messages.invalid}`);
    else logo[key] = v.trim();
  }
  if (logo.url !== null && uriMessage(logo.url)) addError(errors, 'logo', `url ${uriMessage(logo.url)}`);
  return logo.url === null && logo.data === null && logo.type === null ? null : logo;
}

export interface ConfigurationCheckOptions {
  /** The stored secret of an OpenID Connect provider by id, kept when an update leaves it out. */
  storedClientSecret?: (id: string) => string | null;
}

/**
 * Checks a `configuration` body (a partial update: only keys present change). Unknown keys are
 * ignored. Every field's null is `can't be blank` (upstream let nulls through to the database),
 * except the provider lists and the logo, where null clears them.
 */
export function checkConfigurationInput(
  input: RawInput,
  options: ConfigurationCheckOptions = {},
): Checked<ConfigurationInput> {
  const errors: FieldErrors = {};
  const value: ConfigurationInput = {};

  for (const field of CONFIGURATION_BOOLEAN_FIELDS) {
    if (!has(input, field)) continue;
    const flag = checkBoolean(errors, field, input[field]);
    if (flag !== undefined) value[field] = flag;
  }
  const integers = [
    ['vpn_session_duration', { min: 0, max: VPN_SESSION_DURATION_MAX }],
    ['default_client_mtu', MTU_BOUNDS],
    ['default_client_persistent_keepalive', PERSISTENT_KEEPALIVE_BOUNDS],
  ] as const;
  for (const [field, bounds] of integers) {
    if (!has(input, field)) continue;
    if (isBlank(input[field])) addError(errors, field, Messages.blank);
    else {
      const n = checkInteger(field, input[field], bounds, errors);
      if (n !== undefined && !errors[field]) value[field] = n;
    }
  }
  if (has(input, 'default_client_endpoint')) {
    const e = input.default_client_endpoint;
    if (isBlank(e)) addError(errors, 'default_client_endpoint', Messages.blank);
    else if (isText(e) && parseEndpoint(e) !== null) value.default_client_endpoint = e.trim();
    else addError(errors, 'default_client_endpoint', Messages.invalid);
  }
  const lists = [
    ['default_client_allowed_ips', allowedIpKey],
    ['default_client_dns', dnsEntryKey],
  ] as const;
  for (const [field, entryKey] of lists) {
    if (!has(input, field)) continue;
    if (input[field] === null) addError(errors, field, Messages.blank);
    else {
      const list = checkList(field, input[field], entryKey, errors);
      if (list && !errors[field]) value[field] = list;
    }
  }
  if (has(input, 'openid_connect_providers')) {
    const secret = options.storedClientSecret ?? (() => null);
    const checkItem = (raw: RawInput) => checkOidcProvider(raw, secret);
    const list = checkProviders(errors, 'openid_connect_providers', input.openid_connect_providers, checkItem);
    if (list) value.openid_connect_providers = list;
  }
  if (has(input, 'saml_identity_providers')) {
    const list = checkProviders(errors, 'saml_identity_providers', input.saml_identity_providers, checkSamlProvider);
    if (list) value.saml_identity_providers = list;
  }
  if (has(input, 'logo')) {
    const logo = checkLogo(errors, input.logo);
    if (logo !== undefined) value.logo = logo;
  }
  return hasErrors(errors) ? { ok: false, errors, partial: value } : { ok: true, value };
}

/**
 * The configuration fields a desired state may own (`configuration:` in YAML and CDKTF): the
 * device defaults and the plain flags and numbers. The sign-in providers and the logo are left
 * to the server (they hold secrets and files a repository should not carry).
 */
export const MANAGED_CONFIGURATION_FIELDS = [
  'default_client_allowed_ips',
  'default_client_dns',
  'default_client_endpoint',
  'default_client_mtu',
  'default_client_persistent_keepalive',
  'allow_unprivileged_device_management',
  'allow_unprivileged_device_configuration',
  'local_auth_enabled',
  'disable_vpn_on_oidc_error',
  'vpn_session_duration',
] as const satisfies readonly (keyof ConfigurationValues)[];
export type ManagedConfigurationField = (typeof MANAGED_CONFIGURATION_FIELDS)[number];
export type ManagedConfiguration = Partial<Pick<ConfigurationValues, ManagedConfigurationField>>;
