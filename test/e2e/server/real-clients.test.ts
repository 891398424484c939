/**
 * The client-facing cases of shared/reviews/real-clients-2026-11.md section (a), against a real
 * `netform serve` process, each with the exact request body the library sends: the Go
 * firezone-client-go (jindrichskupa, e4c9895; `json.Marshal` of its structs, compact, in field
 * order) and the Python firezone-client (msterhuj, be1f520; requests' `json=`, that is
 * `json.dumps` with its `", "` and `": "` separators, in the order the library fills its dict).
 *
 * A1, A2, A3 and A7 assert Firezone 0.7.36's answer (netform follows it now). A4, A5, A6 and A8
 * assert netform's documented deviation (docs/api-v0.md sections 4 and 7).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type ApiResponse, type TestServer } from '../../helpers/server.js';

let server: TestServer;
let userId: string;

beforeAll(async () => {
  server = await startTestServer();
  const user = await server.api('POST', '/v0/users', { user: { email: 'clients@example.com' } });
  expect(user.status).toBe(201);
  userId = user.body.data.id;
});
afterAll(async () => {
  await server?.stop();
});

/** Python's `json.dumps` with its default separators (what requests sends for `json=`); ASCII values only. */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`)
      .join(', ')}}`;
  return JSON.stringify(value);
}

/** One request with a body sent byte for byte as given, as the library's HTTP client sends it. */
function send(method: string, path: string, body: string): Promise<ApiResponse> {
  return server.api(method, path, body, { headers: { 'content-type': 'application/json' } });
}

async function ruleCount(): Promise<number> {
  return (await server.api('GET', '/v0/rules')).body.data.length;
}

/** A fresh /16 for every rule, so that no two rules of this file overlap. */
let block = 0;
const fresh = () => `10.${100 + ++block}.0.0/16`;

describe('A1: "action": "" is the default, drop (0.7.36: Ecto cast turns "" into the default)', () => {
  it('Go CreateRule(Rule{Destination}) sends action, port_range and port_type as "": 201, a drop rule without ports', async () => {
    const destination = fresh();
    const res = await send(
      'POST',
      '/v0/rules',
      `{"rule":{"action":"","destination":"${destination}","port_range":"","port_type":""}}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({
      action: 'drop',
      destination,
      port_type: null,
      port_range: null,
      user_id: null,
    });
  });

  it('Python Rule(user_id, destination, action="").create(): 201, a drop rule', async () => {
    const destination = fresh();
    const body = pythonJson({
      rule: { user_id: userId, destination, port_range: null, port_type: null, action: '' },
    });
    expect(body).toBe(
      `{"rule": {"user_id": "${userId}", "destination": "${destination}", "port_range": null, "port_type": null, "action": ""}}`,
    );
    const res = await send('POST', '/v0/rules', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ action: 'drop', destination, user_id: userId });
  });

  it('PATCH {"rule":{"action":""}} turns an accept rule into drop (200), as 0.7.36 does', async () => {
    const created = await send('POST', '/v0/rules', `{"rule":{"action":"accept","destination":"${fresh()}"}}`);
    const res = await send('PATCH', `/v0/rules/${created.body.data.id}`, '{"rule":{"action":""}}');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.action).toBe('drop');
  });

  it('a device use_default_<x>: "" is the default, true, on create and on update', async () => {
    const key = randomBytes(32).toString('base64');
    const created = await send(
      'POST',
      '/v0/devices',
      `{"device":{"user_id":"${userId}","public_key":"${key}","use_default_mtu":"","use_default_dns":""}}`,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data).toMatchObject({ use_default_mtu: true, use_default_dns: true });
    const own = await send(
      'PATCH',
      `/v0/devices/${created.body.data.id}`,
      '{"device":{"use_default_mtu":false,"mtu":1400}}',
    );
    expect(own.body.data).toMatchObject({ use_default_mtu: false, mtu: 1400 });
    const back = await send('PATCH', `/v0/devices/${created.body.data.id}`, '{"device":{"use_default_mtu":""}}');
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body.data).toMatchObject({ use_default_mtu: true, mtu: 1280 });
  });
});

describe('A2: a single port is answered "443" (0.7.36: Int4Range.cast([n, n]) is "n")', () => {
  it('Go CreateRule with PortRange "443": 201 with "443", and GET and the list answer the same', async () => {
    const destination = fresh();
    const res = await send(
      'POST',
      '/v0/rules',
      `{"rule":{"action":"accept","destination":"${destination}","port_range":"443","port_type":"tcp"}}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // What the Terraform provider writes into its state: the value it was configured with.
    expect(res.body.data.port_range).toBe('443');
    expect((await server.api('GET', `/v0/rules/${res.body.data.id}`)).body.data.port_range).toBe('443');
    const listed = (await server.api('GET', '/v0/rules')).body.data.find(
      (r: { id: string }) => r.id === res.body.data.id,
    );
    expect(listed.port_range).toBe('443');
  });

  it("Go's example main.go prints the rule as 0.7.36 would: drop 1.1.1.0/24 80 tcp", async () => {
    const res = await send(
      'POST',
      '/v0/rules',
      '{"rule":{"action":"drop","destination":"1.1.1.0/24","port_range":"80","port_type":"tcp"}}',
    );
    expect(res.status).toBe(201);
    const r = res.body.data;
    // PrintRule: fmt.Sprintf("Rule: %s\t%s\t%s\t%s", Action, Destination, PortRange, PortType)
    expect(`Rule: ${r.action}\t${r.destination}\t${r.port_range}\t${r.port_type}`).toBe(
      'Rule: drop\t1.1.1.0/24\t80\ttcp',
    );
    expect((await server.api('DELETE', `/v0/rules/${r.id}`)).status).toBe(204);
  });

  it('Python Rule(user_id, destination, action="accept", port_range="443", port_type="tcp").create(): "443"', async () => {
    const destination = fresh();
    const res = await send(
      'POST',
      '/v0/rules',
      pythonJson({
        rule: { user_id: userId, destination, port_range: '443', port_type: 'tcp', action: 'accept' },
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.port_range).toBe('443');
  });

  it('a range written "8000-8100" is still answered "8000 - 8100", as 0.7.36', async () => {
    const res = await send(
      'POST',
      '/v0/rules',
      `{"rule":{"action":"accept","destination":"${fresh()}","port_range":"8000-8100","port_type":"udp"}}`,
    );
    expect(res.status).toBe(201);
    expect(res.body.data.port_range).toBe('8000 - 8100');
  });
});

describe('A3: a range reaching 65535 is refused (0.7.36: port_range <@ int4range(1, 65535) excludes 65535)', () => {
  const REFUSED = { errors: { port_range: ['port is not within valid range'] } };

  it('Go CreateRule with PortRange "1-65535": 422, nothing created', async () => {
    const before = await ruleCount();
    const res = await send(
      'POST',
      '/v0/rules',
      `{"rule":{"action":"accept","destination":"${fresh()}","port_range":"1-65535","port_type":"tcp"}}`,
    );
    expect(res.status).toBe(422);
    expect(res.body).toEqual(REFUSED);
    expect(await ruleCount()).toBe(before);
  });

  it('Python Rule(..., port_range="1 - 65535", port_type="tcp").create(): 422', async () => {
    const res = await send(
      'POST',
      '/v0/rules',
      pythonJson({
        rule: { user_id: userId, destination: fresh(), port_range: '1 - 65535', port_type: 'tcp', action: 'accept' },
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body).toEqual(REFUSED);
  });

  it('1-65534 is accepted', async () => {
    const res = await send(
      'POST',
      '/v0/rules',
      `{"rule":{"action":"accept","destination":"${fresh()}","port_range":"1-65534","port_type":"tcp"}}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.port_range).toBe('1 - 65534');
  });
});

describe('A4 (deviation, docs/api-v0.md section 4): an unknown role is refused; 0.7.36 made an unprivileged user', () => {
  it('Go CreateUser(User{Email, Role: "owner"}): 422 role is invalid', async () => {
    const res = await send('POST', '/v0/users', '{"user":{"email":"go-badrole@example.com","role":"owner"}}');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { role: ['is invalid'] } });
  });

  it('Python User(email, role="superuser").create(): 422 role is invalid', async () => {
    const res = await send(
      'POST',
      '/v0/users',
      pythonJson({ user: { email: 'py-badrole@example.com', role: 'superuser' } }),
    );
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { role: ['is invalid'] } });
  });
});

describe('A5 (deviation, section 4): an email with white space is refused; 0.7.36 accepted anything with an @', () => {
  it('Python User(email="has space@example.com").create(): 422 email is invalid', async () => {
    const res = await send(
      'POST',
      '/v0/users',
      pythonJson({ user: { email: 'has space@example.com', role: 'unprivileged' } }),
    );
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { email: ['is invalid'] } });
  });
});

/** What Python's Configuration.update sends: these twelve keys, in this order, from the object's attributes. */
function pythonConfigurationUpdate(cfg: Record<string, unknown>): string {
  const keys = [
    'allow_unprivileged_device_configuration',
    'allow_unprivileged_device_management',
    'default_client_allowed_ips',
    'default_client_dns',
    'default_client_endpoint',
    'default_client_mtu',
    'default_client_persistent_keepalive',
    'disable_vpn_on_oidc_error',
    'local_auth_enabled',
    'openid_connect_providers',
    'saml_identity_providers',
    'vpn_session_duration',
  ];
  return pythonJson({ configuration: Object.fromEntries(keys.map((k) => [k, cfg[k]])) });
}

async function readConfiguration(): Promise<Record<string, any>> {
  const res = await server.api('GET', '/v0/configuration');
  expect(res.status).toBe(200);
  return res.body.data;
}

const OIDC = {
  id: 'google',
  label: 'Google',
  scope: 'openid email profile',
  response_type: 'code',
  client_id: 'cid',
  client_secret: 'csecret',
  discovery_document_uri: 'https://accounts.google.com/.well-known/openid-configuration',
  redirect_uri: 'https://vpn.example.com/auth/oidc/google/callback/',
  auto_create_users: false,
};

describe('A6 (deviation, section 7): the OpenID Connect client_secret is write-only, answered null', () => {
  it('the PATCH of the review answers 200; reading back gives client_secret null', async () => {
    const res = await send(
      'PATCH',
      '/v0/configuration',
      JSON.stringify({ configuration: { openid_connect_providers: [OIDC] } }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const read = await readConfiguration();
    expect(read.openid_connect_providers).toEqual([{ ...OIDC, client_secret: null }]);
    expect(JSON.stringify(read)).not.toContain('csecret');
  });

  it("Python's read-modify-write (Configuration.update of what get returned) keeps the stored secret", async () => {
    const res = await send('PATCH', '/v0/configuration', pythonConfigurationUpdate(await readConfiguration()));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The secret is still there: the provider without one is accepted (a new one would be refused).
    const relabelled = { ...OIDC, label: 'Google 2' } as Record<string, unknown>;
    delete relabelled.client_secret;
    const kept = await send(
      'PATCH',
      '/v0/configuration',
      JSON.stringify({ configuration: { openid_connect_providers: [relabelled] } }),
    );
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
  });
});

describe('A7: provider text fields are stored and echoed exactly as sent (0.7.36 casts them untrimmed)', () => {
  const SAML = {
    id: 'okta',
    label: ' Okta ',
    metadata: '<?xml version="1.0"?><md:EntityDescriptor/>\n',
    auto_create_users: false,
  };

  it('the PATCH of the review: label " Okta " and the metadata\'s final newline come back unchanged', async () => {
    const body =
      '{"configuration":{"saml_identity_providers":[{"id":"okta","label":" Okta ","metadata":"<?xml version=\\"1.0\\"?><md:EntityDescriptor/>\\n","auto_create_users":false}]}}';
    expect(JSON.parse(body)).toEqual({ configuration: { saml_identity_providers: [SAML] } });
    const res = await send('PATCH', '/v0/configuration', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [saml] = (await readConfiguration()).saml_identity_providers;
    expect(saml).toMatchObject(SAML);
  });

  it('Python cfg.saml_identity_providers = [...]; client.update(cfg); get(Configuration): read back as sent', async () => {
    const cfg = await readConfiguration();
    const sent = { ...SAML, label: 'Okta\t', base_url: 'https://saml.example.com/' };
    const res = await send(
      'PATCH',
      '/v0/configuration',
      pythonConfigurationUpdate({ ...cfg, saml_identity_providers: [sent] }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await readConfiguration()).saml_identity_providers).toEqual([
      {
        ...sent,
        sign_requests: true,
        sign_metadata: true,
        signed_assertion_in_resp: true,
        signed_envelopes_in_resp: true,
      },
    ]);
  });
});

describe('A8 (deviation, section 7): a default_client_* null is refused; 0.7.36 stored null', () => {
  it("the PATCH of the review: 422 default_client_dns can't be blank, nothing changes", async () => {
    const before = await readConfiguration();
    const res = await send('PATCH', '/v0/configuration', '{"configuration":{"default_client_dns":null}}');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { default_client_dns: ["can't be blank"] } });
    expect(await readConfiguration()).toEqual(before);
  });

  it('Python cfg.default_client_dns = None; client.update(cfg): the same 422', async () => {
    const cfg = await readConfiguration();
    const res = await send(
      'PATCH',
      '/v0/configuration',
      pythonConfigurationUpdate({ ...cfg, default_client_dns: null }),
    );
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { default_client_dns: ["can't be blank"] } });
    expect((await readConfiguration()).default_client_dns).toEqual(cfg.default_client_dns);
  });
});
