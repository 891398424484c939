/**
 * The JSON Schemas of the /v0 routes: every request (documentation only) and every answer,
 * success and error. They serve two purposes and decide nothing:
 * - the OpenAPI document (`GET /v0/openapi.json`, @fastify/swagger) is generated from them;
 * - responses are serialised through them (fast-json-stringify), faster than JSON.stringify.
 * Requests are NOT validated with them: the app turns Fastify's validation off, because every
 * rule and its exact 422 message live once, in src/model.
 *
 * Every /v0 route must carry a schema from here (see ROUTE_SCHEMA_RULE in the OpenAPI test).
 */
import {
  CONFIGURATION_RESPONSE_KEYS,
  DEVICE_RESPONSE_KEYS,
  PORT_TYPES,
  ROLES,
  RULE_ACTIONS,
} from '../../src/model/index.js';

const TIMESTAMP = { type: 'string', description: 'UTC, microseconds, Z suffix: 2023-03-29T15:11:47.450107Z' };
const NULLABLE_TIMESTAMP = { type: ['string', 'null'], description: TIMESTAMP.description };
const UUID = { type: 'string', format: 'uuid' };

export const USER = {
  $id: 'User',
  type: 'object',
  description: 'A user. Password data is never returned.',
  properties: {
    id: UUID,
    email: { type: 'string' },
    role: { type: 'string', enum: [...ROLES] },
    last_signed_in_at: NULLABLE_TIMESTAMP,
    last_signed_in_method: { type: ['string', 'null'] },
    disabled_at: NULLABLE_TIMESTAMP,
    inserted_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  },
  required: [
    'id',
    'email',
    'role',
    'last_signed_in_at',
    'last_signed_in_method',
    'disabled_at',
    'inserted_at',
    'updated_at',
  ],
  additionalProperties: false,
} as const;

const DEVICE_FIELDS: Record<(typeof DEVICE_RESPONSE_KEYS)[number], object> = {
  id: UUID,
  user_id: UUID,
  name: { type: 'string' },
  description: { type: ['string', 'null'] },
  public_key: { type: 'string', description: 'WireGuard public key, base64 of 32 bytes' },
  preshared_key: { type: ['string', 'null'], description: 'base64 of 32 bytes' },
  server_public_key: {
    type: 'string',
    description: "the server's own WireGuard public key (the same on every device)",
  },
  ipv4: { type: ['string', 'null'] },
  ipv6: { type: ['string', 'null'] },
  allowed_ips: {
    type: ['array', 'null'],
    items: { type: 'string' },
    description: 'the default while use_default_allowed_ips is true',
  },
  dns: { type: ['array', 'null'], items: { type: 'string' }, description: 'the default while use_default_dns is true' },
  endpoint: { type: ['string', 'null'], description: 'the default while use_default_endpoint is true' },
  mtu: { type: ['integer', 'null'], description: 'the default while use_default_mtu is true' },
  persistent_keepalive: {
    type: ['integer', 'null'],
    description: 'the default while use_default_persistent_keepalive is true',
  },
  use_default_allowed_ips: { type: 'boolean' },
  use_default_dns: { type: 'boolean' },
  use_default_endpoint: { type: 'boolean' },
  use_default_mtu: { type: 'boolean' },
  use_default_persistent_keepalive: { type: 'boolean' },
  remote_ip: { type: ['string', 'null'] },
  latest_handshake: NULLABLE_TIMESTAMP,
  rx_bytes: { type: ['integer', 'null'] },
  tx_bytes: { type: ['integer', 'null'] },
  inserted_at: TIMESTAMP,
  updated_at: TIMESTAMP,
};

/** Properties in the contract's key order, which the serialiser keeps. */
export const DEVICE = {
  $id: 'Device',
  type: 'object',
  description: 'A WireGuard device of a user. Fields governed by a use_default_<x> flag show the effective value.',
  properties: Object.fromEntries(DEVICE_RESPONSE_KEYS.map((key) => [key, DEVICE_FIELDS[key]])),
  required: [...DEVICE_RESPONSE_KEYS],
  additionalProperties: false,
} as const;

export const RULE = {
  $id: 'Rule',
  type: 'object',
  description: 'An access rule; user_id null binds it to nobody.',
  properties: {
    id: UUID,
    action: { type: 'string', enum: [...RULE_ACTIONS] },
    destination: { type: 'string', description: 'IP address or CIDR block, echoed as given' },
    port_type: { type: ['string', 'null'], enum: [...PORT_TYPES, null] },
    port_range: {
      type: ['string', 'null'],
      description: '"lo - hi", or one number for a single port ("443"), as Firezone 0.7.36 answers',
    },
    user_id: { type: ['string', 'null'], format: 'uuid' },
    inserted_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  },
  required: ['id', 'action', 'destination', 'port_type', 'port_range', 'user_id', 'inserted_at', 'updated_at'],
  additionalProperties: false,
} as const;

const USER_INPUT = {
  type: 'object',
  description: 'Unknown keys are ignored; an empty string counts as null.',
  properties: {
    email: {
      type: 'string',
      description:
        'local@domain, at most 255 characters, unique by its Unicode lower case; no control or invisible (bidi, zero-width, Hangul filler) characters, no non-ASCII character whose lower case is an ASCII letter (the Kelvin sign), no character that Unicode writes as another (the Angstrom and Ohm signs) or whose lower case is a compatibility form (fullwidth letters), and letters in composed form (NFC)',
    },
    role: { type: 'string', enum: [...ROLES], description: 'unprivileged when omitted on create' },
    password: { type: ['string', 'null'], description: '12 to 64 characters; needs password_confirmation' },
    password_confirmation: { type: ['string', 'null'] },
  },
};

const DEVICE_INPUT = {
  type: 'object',
  description:
    'Unknown keys are ignored; an empty string counts as null, except that use_default_<x> "" is its default, true. On update user_id is ignored.',
  properties: {
    user_id: UUID,
    name: { type: 'string', description: '1 to 255 characters, unique per user; generated when omitted' },
    description: { type: ['string', 'null'], description: 'at most 2048 characters' },
    public_key: { type: 'string', description: 'base64 of 32 bytes (44 characters), unique' },
    preshared_key: { type: ['string', 'null'], description: 'base64 of 32 bytes; generated when omitted' },
    ipv4: { type: ['string', 'null'], description: 'inside the tunnel network; assigned when omitted' },
    ipv6: { type: ['string', 'null'], description: 'inside the tunnel network; assigned when omitted' },
    allowed_ips: { type: ['array', 'null'], items: { type: 'string' } },
    dns: { type: ['array', 'null'], items: { type: 'string' } },
    endpoint: { type: ['string', 'null'], description: 'host, host:port, IPv4:port, IPv6 or [IPv6]:port' },
    mtu: { type: ['integer', 'null'], minimum: 576, maximum: 1500 },
    persistent_keepalive: { type: ['integer', 'null'], minimum: 0, maximum: 120 },
    use_default_allowed_ips: { type: 'boolean', default: true },
    use_default_dns: { type: 'boolean', default: true },
    use_default_endpoint: { type: 'boolean', default: true },
    use_default_mtu: { type: 'boolean', default: true },
    use_default_persistent_keepalive: { type: 'boolean', default: true },
  },
};

const RULE_INPUT = {
  type: 'object',
  description: 'Unknown keys are ignored; an empty string counts as null, except that action "" is its default, drop.',
  properties: {
    destination: { type: 'string', description: 'IP address or CIDR block' },
    action: { type: 'string', enum: [...RULE_ACTIONS], default: 'drop' },
    port_type: { type: ['string', 'null'], enum: [...PORT_TYPES, null], description: 'goes with port_range' },
    port_range: {
      type: ['string', 'null'],
      description: '"80", "80-443" or "80 - 443"; ports 1 to 65534 (Firezone 0.7.36 refuses a range reaching 65535)',
    },
    user_id: { type: ['string', 'null'], format: 'uuid', description: 'null binds the rule to nobody' },
  },
};

const ERROR_TEXT = (text: string, description: string) => ({
  description,
  type: 'object',
  // enum, not const: the serialiser writes a const whatever the value, which would hide a wrong answer.
  properties: { error: { type: 'string', enum: [text] } },
  required: ['error'],
  additionalProperties: false,
});

/** The error bodies of docs/api-v0.md section 2, by status. */
export const ERRORS = {
  400: ERROR_TEXT(
    'Bad Request',
    'Malformed JSON, a missing wrapper key, a wrapper that is not an object, or a path that is not valid percent-encoding.',
  ),
  401: {
    description:
      'No token, a malformed, unknown, revoked or expired token, or a token whose owner is no longer an active admin.',
    anyOf: [
      {
        type: 'object',
        properties: {
          errors: {
            type: 'object',
            properties: { auth: { type: 'string', enum: ['unauthenticated', 'invalid_token', 'no_resource_found'] } },
            required: ['auth'],
            additionalProperties: false,
          },
        },
        required: ['errors'],
        additionalProperties: false,
      },
      ERROR_TEXT('Unauthorized', 'The token owner is not an active admin.'),
    ],
  },
  404: ERROR_TEXT('not_found', 'No such id (or email, for users).'),
  413: ERROR_TEXT('Payload Too Large', 'The body is larger than the server accepts (1 MiB by default).'),
  422: {
    description: 'Validation failed: every problem of the request, by field; problems of no field under "base".',
    type: 'object',
    properties: { errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } },
    required: ['errors'],
    additionalProperties: false,
  },
  429: ERROR_TEXT('Too Many Requests', 'Too many failed authentications from this client address; see Retry-After.'),
  500: ERROR_TEXT('Internal Server Error', 'Anything unexpected; never a stack trace.'),
  503: ERROR_TEXT(
    'Service Unavailable',
    'The database cannot be reached now (restart, failover, outage); retry after Retry-After seconds.',
  ),
} as const;

export type Status = keyof typeof ERRORS;

/** `{ "data": ... }`, the envelope of every success with a body. */
export function envelope(data: object, description: string) {
  return { description, type: 'object', properties: { data }, required: ['data'], additionalProperties: false };
}

const ref = (id: string) => ({ $ref: `${id}#` });

interface Resource {
  /** The wrapper key and the schema id: user / User. */
  key: 'user' | 'device' | 'rule';
  id: 'User' | 'Device' | 'Rule';
  collection: string;
  input: object;
  idParam: object;
  /** Statuses beyond the common ones that a delete can answer (the last admin: 422). */
  deleteErrors: Status[];
  createRequired: string[];
}

/** A route's answers: its successes, the error bodies it names, and those every /v0 route can give (401, 429, 500, 503). */
export function responses(success: Record<number, object>, errors: Status[]) {
  const all: Record<string, object> = { ...success };
  for (const status of [...errors, 401, 429, 500, 503] as Status[]) all[status] = ERRORS[status];
  return all;
}

function resourceSchemas(r: Resource) {
  const tags = [r.collection];
  const params = { type: 'object', properties: { id: r.idParam }, required: ['id'] };
  const body = (required: string[]) => ({
    type: 'object',
    properties: { [r.key]: { ...r.input, ...(required.length ? { required } : {}) } },
    required: [r.key],
  });
  const one = envelope(ref(r.id), `The ${r.key}.`);
  return {
    list: {
      summary: `List ${r.collection}`,
      description: 'Every row, ordered by inserted_at then id (no pagination in v0).',
      tags,
      response: responses({ 200: envelope({ type: 'array', items: ref(r.id) }, `Every ${r.key}.`) }, []),
    },
    create: {
      summary: `Create a ${r.key}`,
      tags,
      body: body(r.createRequired),
      response: responses(
        { 201: { ...envelope(ref(r.id), `Created; Location: /v0/${r.collection}/{uuid}.`) } },
        [400, 413, 422],
      ),
    },
    show: { summary: `Show a ${r.key}`, tags, params, response: responses({ 200: one }, [400, 404]) },
    update: {
      summary: `Update a ${r.key} (PATCH and PUT are the same partial update)`,
      tags,
      params,
      body: body([]),
      response: responses({ 200: one }, [400, 404, 413, 422]),
    },
    remove: {
      summary: `Delete a ${r.key}`,
      tags,
      params,
      response: responses({ 204: { description: 'Deleted; no body.', type: 'null' } }, [400, 404, ...r.deleteErrors]),
    },
  };
}

export const USER_SCHEMAS = resourceSchemas({
  key: 'user',
  id: 'User',
  collection: 'users',
  input: USER_INPUT,
  idParam: { type: 'string', description: 'a UUID, or else an email (case-insensitive)' },
  deleteErrors: [422],
  createRequired: ['email'],
});
USER_SCHEMAS.remove.summary = 'Delete a user, with its devices, rules and tokens';

export const DEVICE_SCHEMAS = resourceSchemas({
  key: 'device',
  id: 'Device',
  collection: 'devices',
  input: DEVICE_INPUT,
  idParam: { type: 'string', description: 'a UUID (anything else: 404)' },
  deleteErrors: [],
  createRequired: ['user_id', 'public_key'],
});

export const RULE_SCHEMAS = resourceSchemas({
  key: 'rule',
  id: 'Rule',
  collection: 'rules',
  input: RULE_INPUT,
  idParam: { type: 'string', description: 'a UUID (anything else: 404)' },
  deleteErrors: [],
  createRequired: ['destination'],
});

const OIDC_PROVIDER = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    label: { type: 'string' },
    scope: { type: 'string' },
    response_type: { type: 'string' },
    client_id: { type: 'string' },
    client_secret: {
      type: ['string', 'null'],
      description: 'write-only: always null in answers; kept when an update leaves it out',
    },
    discovery_document_uri: { type: 'string' },
    redirect_uri: { type: ['string', 'null'] },
    auto_create_users: { type: 'boolean' },
  },
  required: [
    'id',
    'label',
    'scope',
    'response_type',
    'client_id',
    'client_secret',
    'discovery_document_uri',
    'redirect_uri',
    'auto_create_users',
  ],
  additionalProperties: false,
};

const SAML_PROVIDER = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    label: { type: 'string' },
    base_url: { type: ['string', 'null'] },
    metadata: { type: 'string' },
    sign_requests: { type: 'boolean' },
    sign_metadata: { type: 'boolean' },
    signed_assertion_in_resp: { type: 'boolean' },
    signed_envelopes_in_resp: { type: 'boolean' },
    auto_create_users: { type: 'boolean' },
  },
  required: [
    'id',
    'label',
    'base_url',
    'metadata',
    'sign_requests',
    'sign_metadata',
    'signed_assertion_in_resp',
    'signed_envelopes_in_resp',
    'auto_create_users',
  ],
  additionalProperties: false,
};

const CONFIGURATION_FIELDS = {
  allow_unprivileged_device_configuration: { type: 'boolean' },
  allow_unprivileged_device_management: { type: 'boolean' },
  default_client_allowed_ips: {
    type: 'array',
    items: { type: 'string' },
    description: 'the server default of allowed_ips',
  },
  default_client_dns: { type: 'array', items: { type: 'string' }, description: 'the server default of dns' },
  default_client_endpoint: { type: 'string', description: 'the server default of endpoint' },
  default_client_mtu: { type: 'integer', minimum: 576, maximum: 1500 },
  default_client_persistent_keepalive: { type: 'integer', minimum: 0, maximum: 120 },
  disable_vpn_on_oidc_error: { type: 'boolean' },
  id: UUID,
  inserted_at: TIMESTAMP,
  local_auth_enabled: { type: 'boolean' },
  logo: {
    type: 'object',
    description: '{} when no logo is set',
    properties: {
      url: { type: ['string', 'null'] },
      data: { type: ['string', 'null'] },
      type: { type: ['string', 'null'] },
    },
    additionalProperties: false,
  },
  openid_connect_providers: { type: 'array', items: OIDC_PROVIDER },
  saml_identity_providers: { type: 'array', items: SAML_PROVIDER },
  updated_at: TIMESTAMP,
  vpn_session_duration: { type: 'integer', minimum: 0 },
};

/** `/v0/configuration`'s `data`, keys in CONFIGURATION_RESPONSE_KEYS order (upstream's, alphabetical). */
export const CONFIGURATION = {
  $id: 'Configuration',
  type: 'object',
  description: 'The server configuration (a singleton). Its default_client_* fields are the server device defaults.',
  properties: Object.fromEntries(CONFIGURATION_RESPONSE_KEYS.map((key) => [key, CONFIGURATION_FIELDS[key]])),
  required: [...CONFIGURATION_RESPONSE_KEYS],
  additionalProperties: false,
} as const;

const CONFIGURATION_INPUT = {
  type: 'object',
  description: 'Only the keys present change. Unknown keys are ignored. id and the timestamps are read-only.',
  properties: Object.fromEntries(
    Object.entries(CONFIGURATION_FIELDS).filter(([key]) => !['id', 'inserted_at', 'updated_at'].includes(key)),
  ),
};

export const CONFIGURATION_SCHEMAS = {
  show: {
    summary: 'Show the configuration',
    tags: ['configuration'],
    response: responses({ 200: envelope(ref('Configuration'), 'The configuration.') }, []),
  },
  update: {
    summary: 'Update the configuration (PATCH and PUT are the same partial update)',
    tags: ['configuration'],
    body: { type: 'object', properties: { configuration: CONFIGURATION_INPUT }, required: ['configuration'] },
    response: responses(
      { 200: envelope(ref('Configuration'), 'The configuration after the update.') },
      [400, 413, 422],
    ),
  },
};

/** The shared schemas, added to the app once (referenced as `User#`, `Device#`, `Rule#`, `Configuration#`). */
export const SHARED_SCHEMAS = [USER, DEVICE, RULE, CONFIGURATION];

/**
 * The serialiser of the list routes: V8's JSON.stringify, which on lists of 60,000 objects is
 * several times faster than the schema-compiled one (measured in bench/server-throughput.mjs);
 * single objects keep the compiled one, which is faster there.
 */
export const stringifyLists = () => (data: unknown) => JSON.stringify(data);
