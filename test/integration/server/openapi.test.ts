/**
 * GET /v0/openapi.json describes the whole API, and the server's real answers match it: every
 * registered route is in the document with its schemas, and every (operation, status) the
 * document lists (but 429, 500 and 503) is produced here by a real request whose body is validated
 * with ajv against the document's schema for it.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken, startServer, type RunningServer } from '../../../server/index.js';
import { registeredRoutes } from '../../../server/openapi.js';

const BODY_LIMIT = 4096;
let dir: string;
let server: RunningServer;
let token: string;
let doc: any;
let ajv: Ajv2020;

/** One answer seen: the document's path template, method, status and what came back. */
interface Seen {
  template: string;
  method: string;
  status: number;
  contentType: string | null;
  text: string;
}
const seen: Seen[] = [];

async function call(
  method: string,
  template: string,
  path: string,
  body?: unknown,
  auth: string | null = token,
): Promise<Seen & { json: any }> {
  const headers: Record<string, string> = {};
  if (auth !== null) headers.authorization = `Bearer ${auth}`;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${server.url}${path}`, { method, headers, body: payload });
  const text = await res.text();
  const entry = {
    template,
    method: method.toLowerCase(),
    status: res.status,
    contentType: res.headers.get('content-type'),
    text,
  };
  seen.push(entry);
  let json: any;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = text;
  }
  return { ...entry, json };
}

const key = () => randomBytes(32).toString('base64');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netform-openapi-'));
  const dbPath = join(dir, 'netform.db');
  token = (await issueToken({ dbPath, email: 'admin@example.com' })).token;
  server = await startServer({ dbPath, port: 0, host: '127.0.0.1', bodyLimit: BODY_LIMIT, authFailureLimit: false });
  const res = await fetch(`${server.url}/v0/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addSchema(doc, 'openapi');
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `/v0/users/:id` -> `/v0/users/{id}`. */
const toTemplate = (url: string) => url.replace(/:(\w+)/g, '{$1}');
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1, needs no token, and lists every registered route with its request and every answer', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['Configuration', 'Device', 'Rule', 'User']);
    const routes = registeredRoutes(server.app).filter((r) => !(r.schema as { hide?: boolean } | undefined)?.hide);
    const v0 = routes.filter((r) => r.url.startsWith('/v0/'));
    expect(v0.length).toBeGreaterThanOrEqual(16);
    for (const route of routes) {
      const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toLowerCase());
      const schema = route.schema as { response?: Record<string, unknown>; body?: unknown } | undefined;
      // The rule for every route, new ones included: it carries its response schemas (and its body's).
      expect(schema?.response, `${methods} ${route.url} has no response schema`).toBeDefined();
      for (const method of methods) {
        const operation = doc.paths[toTemplate(route.url)]?.[method];
        expect(operation, `${method} ${route.url} is not in the document`).toBeDefined();
        expect(operation.summary, `${method} ${route.url} has no summary`).toBeTruthy();
        if (route.url.startsWith('/v0/') && route.url !== '/v0/openapi.json') {
          expect(Object.keys(operation.responses), `${method} ${route.url}`).toEqual(
            expect.arrayContaining(['401', '429', '500', '503']),
          );
          if (['post', 'put', 'patch'].includes(method)) {
            expect(operation.requestBody, `${method} ${route.url} documents no body`).toBeDefined();
            expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '413', '422']));
          }
        } else {
          expect(operation.security, `${method} ${route.url} should need no token`).toEqual([]);
        }
      }
    }
  });

  it('every documented answer is produced by the real server, and every real answer matches the document', async () => {
    // Operations.
    await call('GET', '/healthz', '/healthz', undefined, null);
    await call('GET', '/readyz', '/readyz', undefined, null);
    const raw = new Database(join(dir, 'netform.db'));
    const saved = raw.prepare("SELECT value FROM settings WHERE key = 'server_public_key'").get() as { value: string };
    raw.prepare("DELETE FROM settings WHERE key = 'server_public_key'").run();
    expect((await call('GET', '/readyz', '/readyz', undefined, null)).status).toBe(503);
    raw.prepare("INSERT INTO settings (key, value) VALUES ('server_public_key', ?)").run(saved.value);
    raw.close();
    await call('GET', '/metrics', '/metrics', undefined, null);
    await call('GET', '/v0/openapi.json', '/v0/openapi.json', undefined, null);

    const big = 'x'.repeat(BODY_LIMIT + 1);
    const missing = '7d6a0a4e-8f5b-4c1e-9d2a-1b3c4d5e6f70';
    const admin = (await call('GET', '/v0/users/{id}', '/v0/users/admin@example.com')).json.data;
    const user = (await call('POST', '/v0/users', '/v0/users', { user: { email: 'doc@example.com', role: 'admin' } }))
      .json.data;
    const device = (
      await call('POST', '/v0/devices', '/v0/devices', {
        device: { user_id: user.id, public_key: key(), mtu: 1400, use_default_mtu: false },
      })
    ).json.data;
    const rule = (
      await call('POST', '/v0/rules', '/v0/rules', {
        rule: { destination: '10.0.0.0/8', action: 'accept', port_type: 'tcp', port_range: '443' },
      })
    ).json.data;
    const ids = { users: user.id, devices: device.id, rules: rule.id };
    const invalid = {
      users: { user: { email: 'not an email' } },
      devices: { device: { public_key: 'short' } },
      rules: { rule: { destination: 'nowhere' } },
    };
    const valid = {
      users: { user: { role: 'admin' } },
      devices: { device: { name: 'renamed' } },
      rules: { rule: { port_range: '80-90' } },
    };
    const wrapper = { users: 'user', devices: 'device', rules: 'rule' } as const;

    for (const collection of ['users', 'devices', 'rules'] as const) {
      const list = `/v0/${collection}`;
      const one = `/v0/${collection}/{id}`;
      await call('GET', list, list);
      await call('GET', list, list, undefined, null);
      await call('POST', list, list, '{not json');
      await call('POST', list, list, { [wrapper[collection]]: big });
      await call('POST', list, list, invalid[collection]);
      await call('POST', list, list, {}, null);
      await call('GET', one, `${list}/${ids[collection]}`);
      await call('GET', one, `${list}/${missing}`);
      await call('GET', one, `${list}/${ids[collection]}`, undefined, null);
      for (const method of ['PATCH', 'PUT']) {
        await call(method, one, `${list}/${ids[collection]}`, valid[collection]);
        await call(method, one, `${list}/${ids[collection]}`, '{not json');
        await call(method, one, `${list}/${missing}`, valid[collection]);
        await call(method, one, `${list}/${ids[collection]}`, { [wrapper[collection]]: big });
        await call(method, one, `${list}/${ids[collection]}`, invalid[collection]);
        await call(method, one, `${list}/${ids[collection]}`, valid[collection], null);
      }
      await call('GET', one, `${list}/%zz`);
      await call('DELETE', one, `${list}/%zz`);
      await call('DELETE', one, `${list}/${missing}`);
      await call('DELETE', one, `${list}/${ids[collection]}`, undefined, null);
    }
    // The configuration singleton: show and update, with every error it can give.
    await call('GET', '/v0/configuration', '/v0/configuration');
    await call('GET', '/v0/configuration', '/v0/configuration', undefined, null);
    for (const method of ['PATCH', 'PUT']) {
      const path = '/v0/configuration';
      await call(method, path, path, {
        configuration: {
          default_client_mtu: 1400,
          logo: { url: 'https://example.com/logo.png' },
          openid_connect_providers: [
            {
              id: 'okta',
              label: 'Okta',
              scope: 'openid email',
              response_type: 'code',
              client_id: 'netform',
              client_secret: 'secret',
              discovery_document_uri: 'https://example.com/.well-known/openid-configuration',
              redirect_uri: null,
              auto_create_users: false,
            },
          ],
        },
      });
      await call(method, path, path, '{not json');
      await call(method, path, path, { configuration: big });
      await call(method, path, path, { configuration: { local_auth_enabled: 'maybe' } });
      await call(method, path, path, { configuration: {} }, null);
    }
    // The last admin cannot be deleted (422), then deletes of each kind (204, no body).
    await call('DELETE', '/v0/rules/{id}', `/v0/rules/${rule.id}`);
    await call('DELETE', '/v0/devices/{id}', `/v0/devices/${device.id}`);
    await call('PATCH', '/v0/users/{id}', `/v0/users/${user.id}`, { user: { role: 'unprivileged' } });
    expect((await call('DELETE', '/v0/users/{id}', `/v0/users/${admin.id}`)).status).toBe(422);
    expect((await call('DELETE', '/v0/users/{id}', `/v0/users/${user.id}`)).status).toBe(204);

    const failures: string[] = [];
    for (const answer of seen) {
      const where = `${answer.method.toUpperCase()} ${answer.template} ${answer.status}`;
      const documented = doc.paths[answer.template]?.[answer.method]?.responses?.[String(answer.status)];
      if (!documented) {
        failures.push(`${where}: not in the document (${answer.text.slice(0, 120)})`);
        continue;
      }
      if (answer.status === 204) {
        if (answer.text !== '' || documented.content) failures.push(`${where}: a 204 has no body`);
        continue;
      }
      const [mediaType, entry] = Object.entries(documented.content ?? {})[0] ?? [];
      if (!mediaType || !answer.contentType?.startsWith(mediaType)) {
        failures.push(`${where}: content type ${answer.contentType}, documented ${mediaType}`);
        continue;
      }
      const ref = `openapi#/${pointer('paths', answer.template, answer.method, 'responses', String(answer.status), 'content', mediaType, 'schema')}`;
      const validate = ajv.compile({ $ref: ref });
      const value = mediaType === 'application/json' ? JSON.parse(answer.text) : answer.text;
      if (!validate(value))
        failures.push(`${where}: ${ajv.errorsText(validate.errors)} in ${answer.text.slice(0, 200)}`);
      void entry;
    }
    expect(failures).toEqual([]);

    // And the other way round: every documented answer was seen (429 below; 500 and 503, the
    // database away, in postgres-resilience.test.ts).
    const unseen: string[] = [];
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        for (const status of Object.keys(operation.responses)) {
          if (status === '429' || status === '500' || status === '503') continue;
          if (!seen.some((s) => s.template === template && s.method === method && String(s.status) === status)) {
            unseen.push(`${method.toUpperCase()} ${template} ${status}`);
          }
        }
      }
    }
    expect(unseen).toEqual([]);
  });

  it('the 429 of the failed-authentication limit matches the document', async () => {
    const limitedDir = mkdtempSync(join(tmpdir(), 'netform-openapi-429-'));
    const limited = await startServer({
      dbPath: join(limitedDir, 'netform.db'),
      port: 0,
      host: '127.0.0.1',
      authFailureLimit: { max: 1, windowMs: 60_000, exempt: [] },
    });
    try {
      await fetch(`${limited.url}/v0/rules`);
      const res = await fetch(`${limited.url}/v0/rules`);
      expect(res.status).toBe(429);
      const validate = ajv.compile({
        $ref: `openapi#/${pointer('paths', '/v0/rules', 'get', 'responses', '429', 'content', 'application/json', 'schema')}`,
      });
      expect(validate(await res.json()), ajv.errorsText(validate.errors)).toBe(true);
    } finally {
      await limited.close();
      rmSync(limitedDir, { recursive: true, force: true });
    }
  });
});
