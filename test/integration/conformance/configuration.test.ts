/**
 * Conformance of /v0/configuration (upstream 0.7.36's singleton, docs/api-v0.md §7) over real
 * HTTP: its fields, update, validation, 401, and that its `default_client_*` fields are the
 * server defaults `netform server defaults` manages (one store, two ways in).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { JSON_TYPE, TIMESTAMP, UUID_V4 } from '../../helpers/api-shapes.js';

const KEYS = [
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
];
const SECRET = 'oidc-client-secret-never-shown';
const METADATA = '<?xml version="1.0"?><md:EntityDescriptor entityID="http://idp.example.com"/>';

/** The values of upstream's own controller test (its first PUT), adapted where our checks are stricter. */
function fullUpdate() {
  return {
    local_auth_enabled: false,
    allow_unprivileged_device_management: false,
    allow_unprivileged_device_configuration: false,
    openid_connect_providers: [
      {
        id: 'google',
        label: 'google',
        scope: 'email openid',
        response_type: 'code',
        client_id: 'test-id',
        client_secret: SECRET,
        discovery_document_uri: 'https://accounts.google.com/.well-known/openid-configuration',
        redirect_uri: 'https://invalid',
        auto_create_users: false,
      },
    ],
    saml_identity_providers: [
      {
        id: 'okta',
        label: 'okta',
        base_url: 'https://saml',
        metadata: METADATA,
        sign_requests: false,
        sign_metadata: false,
        signed_assertion_in_resp: false,
        signed_envelopes_in_resp: false,
        auto_create_users: false,
      },
    ],
    disable_vpn_on_oidc_error: true,
    vpn_session_duration: 100,
    default_client_persistent_keepalive: 1,
    default_client_mtu: 1100,
    default_client_endpoint: 'new-endpoint',
    default_client_dns: ['1.1.1.1'],
    default_client_allowed_ips: ['1.1.1.1', '2.2.2.2'],
  };
}

let server: TestServer;

beforeAll(async () => {
  server = await startInProcessServer();
});
afterAll(async () => {
  await server?.stop();
});

async function configuration(target = server): Promise<Record<string, any>> {
  const res = await target.api('GET', '/v0/configuration');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

async function cli(args: string[], target = server): Promise<string> {
  const res = await runCli([...args, '--db', target.dbPath]);
  expect(res.code, res.stderr).toBe(0);
  return res.stdout;
}

/** A server of its own, for tests that change the configuration in ways others would see. */
async function withOwnServer(fn: (own: TestServer) => Promise<void>): Promise<void> {
  const own = await startInProcessServer();
  try {
    await fn(own);
  } finally {
    await own.stop();
  }
}

describe('GET /v0/configuration', () => {
  it('answers 200 {"data": …} with exactly upstream\'s keys, typed as upstream, and the server defaults', async () => {
    const res = await server.api('GET', '/v0/configuration');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual([...KEYS].sort());
    expect(data.id).toMatch(UUID_V4);
    expect(data.inserted_at).toMatch(TIMESTAMP);
    expect(data.updated_at).toMatch(TIMESTAMP);
    expect(data).toMatchObject({
      local_auth_enabled: true,
      allow_unprivileged_device_management: true,
      allow_unprivileged_device_configuration: true,
      disable_vpn_on_oidc_error: false,
      vpn_session_duration: 0,
      openid_connect_providers: [],
      saml_identity_providers: [],
      logo: {},
    });
    const defaults = JSON.parse(await cli(['server', 'defaults', 'show', '--json']));
    expect(data).toMatchObject({
      default_client_allowed_ips: defaults.allowed_ips,
      default_client_dns: defaults.dns,
      default_client_endpoint: defaults.endpoint,
      default_client_mtu: defaults.mtu,
      default_client_persistent_keepalive: defaults.persistent_keepalive,
    });
  });

  it('401 without a token on GET, PATCH and PUT, and nothing changes', async () => {
    const before = await configuration();
    for (const method of ['GET', 'PATCH', 'PUT']) {
      const body = method === 'GET' ? undefined : { configuration: { default_client_mtu: 1400 } };
      const res = await server.api(method, '/v0/configuration', body, { token: null });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ errors: { auth: 'unauthenticated' } });
    }
    expect(await configuration()).toEqual(before);
  });

  it('is a singleton: no create, no delete, no id in the path (404 not_found)', async () => {
    expect((await server.api('POST', '/v0/configuration', { configuration: {} })).body).toEqual({ error: 'not_found' });
    expect((await server.api('DELETE', '/v0/configuration')).status).toBe(404);
    expect((await server.api('GET', `/v0/configuration/${(await configuration()).id}`)).status).toBe(404);
  });
});

describe('PUT and PATCH /v0/configuration', () => {
  it("PUT with every field (upstream's own test values) answers them back, keeps id and inserted_at, moves updated_at", () =>
    withOwnServer(async (own) => {
      const before = await configuration(own);
      const sent = fullUpdate();
      const res = await own.api('PUT', '/v0/configuration', { configuration: sent });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const { id, inserted_at, updated_at, logo, ...echoed } = res.body.data;
      const expected = {
        ...sent,
        openid_connect_providers: [{ ...sent.openid_connect_providers[0], client_secret: null }],
      };
      expect(echoed).toEqual(expected);
      expect({ id, inserted_at, logo }).toEqual({ id: before.id, inserted_at: before.inserted_at, logo: {} });
      expect(updated_at > before.updated_at).toBe(true);
      expect(await configuration(own)).toEqual(res.body.data);
      // Survives a restart: it is in the database, not in memory.
      await own.restart();
      expect(await configuration(own)).toEqual(res.body.data);
    }));

  it('PATCH is the same partial update: only keys sent change; an empty object changes nothing, updated_at included', () =>
    withOwnServer(async (own) => {
      const before = await configuration(own);
      const patched = await own.api('PATCH', '/v0/configuration', {
        configuration: { default_client_mtu: 1420, unknown_key: 1 },
      });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toEqual({
        ...before,
        default_client_mtu: 1420,
        updated_at: patched.body.data.updated_at,
      });
      const same = await own.api('PUT', '/v0/configuration', { configuration: {} });
      expect(same.body.data).toEqual(patched.body.data);
      const again = await own.api('PATCH', '/v0/configuration', { configuration: { default_client_mtu: 1420 } });
      expect(again.body.data.updated_at).toBe(patched.body.data.updated_at);
    }));

  it('values are normalised as upstream does: endpoint and list entries trimmed', () =>
    withOwnServer(async (own) => {
      const res = await own.api('PATCH', '/v0/configuration', {
        configuration: {
          default_client_endpoint: '  vpn.example.com:51820 ',
          default_client_dns: [' 9.9.9.9 ', 'dns.example.com'],
        },
      });
      expect(res.body.data).toMatchObject({
        default_client_endpoint: 'vpn.example.com:51820',
        default_client_dns: ['9.9.9.9', 'dns.example.com'],
      });
    }));

  // As 0.7.36 (its provider changesets cast without trimming); the upstream docs' own SAML example ends in "\n".
  it('provider text fields are stored and echoed exactly as sent: nothing trimmed, metadata keeps its final newline', () =>
    withOwnServer(async (own) => {
      const saml = {
        id: 'okta',
        label: ' Okta ',
        base_url: 'https://saml.example.com/ ',
        metadata: '<?xml version="1.0"?><md:EntityDescriptor/>\n',
        sign_requests: true,
        sign_metadata: true,
        signed_assertion_in_resp: true,
        signed_envelopes_in_resp: true,
        auto_create_users: false,
      };
      const oidc = {
        id: 'google',
        label: 'Google\t',
        scope: ' openid email profile ',
        response_type: 'code',
        client_id: ' cid ',
        client_secret: ' csecret ',
        discovery_document_uri: 'https://accounts.google.com/.well-known/openid-configuration',
        redirect_uri: 'https://vpn.example.com/auth/oidc/google/callback/',
        auto_create_users: false,
      };
      const res = await own.api('PATCH', '/v0/configuration', {
        configuration: { saml_identity_providers: [saml], openid_connect_providers: [oidc] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const expected = { saml: [saml], oidc: [{ ...oidc, client_secret: null }] };
      expect({ saml: res.body.data.saml_identity_providers, oidc: res.body.data.openid_connect_providers }).toEqual(
        expected,
      );
      await own.restart();
      const read = await configuration(own);
      expect({ saml: read.saml_identity_providers, oidc: read.openid_connect_providers }).toEqual(expected);
    }));

  it("a provider field of only white space is still blank: required ones can't be blank, optional ones are null", () =>
    withOwnServer(async (own) => {
      const before = await configuration(own);
      const res = await own.api('PATCH', '/v0/configuration', {
        configuration: {
          saml_identity_providers: [
            { id: 'okta', label: '  ', metadata: '\n\t', base_url: ' ', auto_create_users: true },
          ],
          openid_connect_providers: [
            {
              id: ' ',
              label: 'Google',
              client_id: '\n',
              client_secret: 's',
              discovery_document_uri: 'https://accounts.google.com/.well-known/openid-configuration',
              auto_create_users: true,
            },
          ],
        },
      });
      expect(res.status).toBe(422);
      expect(res.body.errors.saml_identity_providers.sort()).toEqual([
        "label can't be blank",
        "metadata can't be blank",
      ]);
      expect(res.body.errors.openid_connect_providers.sort()).toEqual([
        "client_id can't be blank",
        "id can't be blank",
      ]);
      expect(await configuration(own)).toEqual(before);
      const optional = await own.api('PATCH', '/v0/configuration', {
        configuration: {
          saml_identity_providers: [
            { id: 'okta', label: 'Okta', metadata: '<x/>', base_url: ' ', auto_create_users: true },
          ],
        },
      });
      expect(optional.status, JSON.stringify(optional.body)).toBe(200);
      expect(optional.body.data.saml_identity_providers[0].base_url).toBeNull();
    }));

  it('a logo is echoed as {url, data, type}; null clears it back to {}; a file path on the server is ignored', () =>
    withOwnServer(async (own) => {
      const set = await own.api('PATCH', '/v0/configuration', {
        configuration: { logo: { url: 'https://example.com/logo.png', file: '/etc/passwd' } },
      });
      expect(set.body.data.logo).toEqual({ url: 'https://example.com/logo.png', data: null, type: null });
      const cleared = await own.api('PATCH', '/v0/configuration', { configuration: { logo: null } });
      expect(cleared.body.data.logo).toEqual({});
    }));

  it('400 {"error":"Bad Request"} without the configuration wrapper, or with another resource\'s wrapper', async () => {
    for (const body of [
      { default_client_mtu: 1400 },
      { user: { default_client_mtu: 1400 } },
      { configuration: [] },
      '',
    ]) {
      const res = await server.api('PUT', '/v0/configuration', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ error: 'Bad Request' });
    }
  });
});

describe('validation (422, the shape of every other resource)', () => {
  it('upstream\'s own case: local_auth_enabled 123 is {"local_auth_enabled": ["is invalid"]}', async () => {
    const res = await server.api('PUT', '/v0/configuration', { configuration: { local_auth_enabled: 123 } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { local_auth_enabled: ['is invalid'] } });
  });

  it("every error of a request at once, with the contract's messages, and nothing changes", async () => {
    const before = await configuration();
    const res = await server.api('PATCH', '/v0/configuration', {
      configuration: {
        default_client_mtu: 575,
        default_client_persistent_keepalive: 121,
        default_client_endpoint: 'not a host:99999',
        default_client_dns: ['1.1.1.1', '1.1.1.1'],
        default_client_allowed_ips: ['10.0.0.0/33'],
        vpn_session_duration: -1,
        allow_unprivileged_device_management: 'yes',
        disable_vpn_on_oidc_error: null,
      },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      errors: {
        default_client_mtu: ['must be greater than or equal to 576'],
        default_client_persistent_keepalive: ['must be less than or equal to 120'],
        default_client_endpoint: ['is invalid'],
        default_client_dns: ['should not contain duplicates'],
        default_client_allowed_ips: ['is invalid'],
        vpn_session_duration: ['must be greater than or equal to 0'],
        allow_unprivileged_device_management: ['is invalid'],
        disable_vpn_on_oidc_error: ["can't be blank"],
      },
    });
    expect(await configuration()).toEqual(before);
  });

  it('null or "" for a device default is "can\'t be blank" (a server needs a default to show devices)', async () => {
    const res = await server.api('PATCH', '/v0/configuration', {
      configuration: {
        default_client_mtu: null,
        default_client_endpoint: '',
        default_client_dns: null,
        default_client_allowed_ips: null,
      },
    });
    expect(res.body).toEqual({
      errors: {
        default_client_mtu: ["can't be blank"],
        default_client_endpoint: ["can't be blank"],
        default_client_dns: ["can't be blank"],
        default_client_allowed_ips: ["can't be blank"],
      },
    });
  });

  it('sign-in providers: each problem as "<key> <message>" under the list\'s field, as upstream words them', async () => {
    const res = await server.api('PATCH', '/v0/configuration', {
      configuration: {
        openid_connect_providers: [
          {
            id: 'saml',
            label: 'x',
            scope: 'profile',
            response_type: 'token',
            client_id: 'c',
            client_secret: 's',
            discovery_document_uri: 'ftp://x',
            auto_create_users: true,
          },
        ],
        saml_identity_providers: [{ id: 'okta', label: 'okta', auto_create_users: 'no' }],
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors.openid_connect_providers.sort()).toEqual([
      'discovery_document_uri only http, https schemes are supported',
      'id is reserved',
      'response_type is invalid',
      'scope must include email scope',
      'scope must include openid scope',
    ]);
    expect(res.body.errors.saml_identity_providers.sort()).toEqual([
      'auto_create_users is invalid',
      "metadata can't be blank",
    ]);
  });
});

describe('secrets', () => {
  it('an OpenID Connect client_secret is write-only: never answered, kept when an update leaves it out, never logged', () =>
    withOwnServer(async (own) => {
      const put = await own.api('PUT', '/v0/configuration', { configuration: fullUpdate() });
      expect(put.status).toBe(200);
      expect(JSON.stringify(put.body)).not.toContain(SECRET);
      // A client that sends back what it read (client_secret null) keeps the stored secret.
      const read = await configuration(own);
      const relabelled = { ...read.openid_connect_providers[0], label: 'Google' };
      const res = await own.api('PATCH', '/v0/configuration', {
        configuration: { openid_connect_providers: [relabelled] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.openid_connect_providers[0]).toMatchObject({ label: 'Google', client_secret: null });
      // A new provider without a secret is refused: there is none to keep.
      const added = { ...relabelled, id: 'other' };
      const refused = await own.api('PATCH', '/v0/configuration', {
        configuration: { openid_connect_providers: [relabelled, added] },
      });
      expect(refused.body).toEqual({ errors: { openid_connect_providers: ["client_secret can't be blank"] } });
      expect(JSON.stringify(await configuration(own))).not.toContain(SECRET);
      expect(own.stderr()).not.toContain(SECRET);
    }));
});

describe('one store, two ways in: the server defaults', () => {
  it('`netform server defaults set` is seen through GET /v0/configuration, with a new updated_at', () =>
    withOwnServer(async (own) => {
      const before = await configuration(own);
      await cli(['server', 'defaults', 'set', 'mtu', '1420'], own);
      await cli(['server', 'defaults', 'set', 'dns', '9.9.9.9'], own);
      await cli(['server', 'defaults', 'set', 'endpoint', 'vpn.example.com:51820'], own);
      const after = await configuration(own);
      expect(after).toMatchObject({
        default_client_mtu: 1420,
        default_client_dns: ['9.9.9.9'],
        default_client_endpoint: 'vpn.example.com:51820',
      });
      expect(after.updated_at > before.updated_at).toBe(true);
    }));

  it('a PATCH of /v0/configuration is seen by `netform server defaults show`', () =>
    withOwnServer(async (own) => {
      const res = await own.api('PATCH', '/v0/configuration', {
        configuration: {
          default_client_allowed_ips: ['10.0.0.0/8'],
          default_client_persistent_keepalive: 0,
          default_client_dns: [],
        },
      });
      expect(res.status).toBe(200);
      const shown = JSON.parse(await cli(['server', 'defaults', 'show', '--json'], own));
      expect(shown).toMatchObject({ allowed_ips: ['10.0.0.0/8'], persistent_keepalive: 0, dns: [] });
    }));

  it('a device created after a configuration change gets the new defaults; an older one shows them too', () =>
    withOwnServer(async (own) => {
      const owner = (await own.api('GET', '/v0/users/admin@example.com')).body.data;
      const create = async () =>
        (
          await own.api('POST', '/v0/devices', {
            device: { user_id: owner.id, public_key: randomBytes(32).toString('base64') },
          })
        ).body.data;
      const older = await create();
      const changed = {
        default_client_allowed_ips: ['10.20.0.0/16'],
        default_client_dns: ['10.20.0.53'],
        default_client_endpoint: 'gw.example.com:51821',
        default_client_mtu: 1380,
        default_client_persistent_keepalive: 15,
      };
      expect((await own.api('PUT', '/v0/configuration', { configuration: changed })).status).toBe(200);
      const expected = {
        allowed_ips: ['10.20.0.0/16'],
        dns: ['10.20.0.53'],
        endpoint: 'gw.example.com:51821',
        mtu: 1380,
        persistent_keepalive: 15,
      };
      expect(await create()).toMatchObject(expected);
      expect((await own.api('GET', `/v0/devices/${older.id}`)).body.data).toMatchObject(expected);
    }));
});
