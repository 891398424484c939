/**
 * Failures the framework raises before our handlers run (docs/api-v0.md §2), over raw HTTP on a
 * socket so that nothing normalises the request first: each answers the contract's body, never a
 * framework error code, message or echo of the URL. And a 204 carries no body and no content type.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { JSON_TYPE } from '../../helpers/api-shapes.js';

const BAD_REQUEST = { error: 'Bad Request' };
const NOT_FOUND = { error: 'not_found' };
const UNAUTHENTICATED = { errors: { auth: 'unauthenticated' } };

let server: TestServer;

beforeAll(async () => {
  server = await startInProcessServer();
});
afterAll(async () => {
  await server?.stop();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Sends `head` (request line and headers, without the final blank line) as written, reads the whole answer. */
function rawRequest(requestLine: string, options: { token?: boolean; extra?: string[] } = {}): Promise<RawAnswer> {
  const { port, hostname } = new URL(server.url);
  const lines = [requestLine, `Host: ${hostname}`, 'Connection: close', ...(options.extra ?? [])];
  if (options.token !== false) lines.push(`Authorization: Bearer ${server.token}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, text: text.slice(split + 4) });
    });
  });
}

function expectBody(answer: RawAnswer, status: number, body: unknown): void {
  expect(answer.status, answer.text).toBe(status);
  expect(JSON.parse(answer.text)).toEqual(body);
  expect(answer.headers['content-type']).toBe(JSON_TYPE);
  expect(answer.text).not.toMatch(/FST_|"code"|"message"|statusCode/);
}

describe('malformed percent-encoding in a path: 400 {"error":"Bad Request"}', () => {
  it.each(['/v0/users/%zz', '/v0/users/%E0%A4%A', '/v0/devices/%', '/v0/rules/%G0', '/%zz', '/v0/configuration%zz'])(
    '%s',
    async (path) => {
      const answer = await rawRequest(`GET ${path} HTTP/1.1`);
      expectBody(answer, 400, BAD_REQUEST);
      expect(answer.text).not.toContain(path);
    },
  );

  it('on every method, and authentication still comes first: without a token it is 401', async () => {
    for (const method of ['PATCH', 'PUT', 'DELETE'])
      expectBody(await rawRequest(`${method} /v0/users/%zz HTTP/1.1`), 400, BAD_REQUEST);
    expectBody(await rawRequest('GET /v0/users/%zz HTTP/1.1', { token: false }), 401, UNAUTHENTICATED);
  });
});

describe('a path parameter over the length limit: 404 {"error":"not_found"} (no object has such an id)', () => {
  it.each(['users', 'devices', 'rules'])('/v0/%s/<1001 characters>', async (collection) => {
    const id = 'a'.repeat(1001);
    const answer = await rawRequest(`GET /v0/${collection}/${id} HTTP/1.1`);
    expectBody(answer, 404, NOT_FOUND);
    expect(answer.text).not.toContain('aaaa');
  });

  it('also on update and delete, and without a token it is 401', async () => {
    const path = `/v0/users/${'b'.repeat(2000)}@example.com`;
    for (const method of ['PATCH', 'DELETE'])
      expectBody(await rawRequest(`${method} ${path} HTTP/1.1`), 404, NOT_FOUND);
    expectBody(await rawRequest(`GET ${path} HTTP/1.1`, { token: false }), 401, UNAUTHENTICATED);
  });

  it('an email at the limit of its own rule (255 characters) is still looked up: an unknown one is the same 404', async () => {
    const email = `${'c'.repeat(243)}@example.com`;
    expectBody(await rawRequest(`GET /v0/users/${email} HTTP/1.1`), 404, NOT_FOUND);
  });
});

describe('requests the HTTP parser refuses: 400 {"error":"Bad Request"}, connection closed', () => {
  it('an over-long URL (beyond the 16 KiB of request line and headers)', async () => {
    const answer = await rawRequest(`GET /v0/users/${'d'.repeat(20_000)} HTTP/1.1`);
    expectBody(answer, 400, BAD_REQUEST);
    expect(answer.headers.connection).toBe('close');
  });

  it('an over-long query string, and an over-long header', async () => {
    expectBody(await rawRequest(`GET /v0/users?q=${'e'.repeat(20_000)} HTTP/1.1`), 400, BAD_REQUEST);
    expectBody(
      await rawRequest('GET /v0/users HTTP/1.1', { extra: [`X-Long: ${'f'.repeat(20_000)}`] }),
      400,
      BAD_REQUEST,
    );
  });

  it('broken framing: a Content-Length that is not a number, a request line without a path', async () => {
    expectBody(await rawRequest('POST /v0/users HTTP/1.1', { extra: ['Content-Length: abc'] }), 400, BAD_REQUEST);
    expectBody(await rawRequest('GET  HTTP/1.1'), 400, BAD_REQUEST);
  });

  it('the server keeps serving afterwards', async () => {
    expect((await server.api('GET', '/v0/users')).status).toBe(200);
  });
});

describe('unknown or unusable ids: 404 {"error":"not_found"}', () => {
  it.each([
    ['GET', '/v0/devices/not-a-uuid'],
    ['GET', '/v0/rules/00000000-0000-4000-8000-000000000000'],
    ['DELETE', '/v0/devices/%00'],
    ['GET', '/v0/users/%20'],
    ['DELETE', '/v0/rules/..%2F..%2Fetc'],
  ])('%s %s', async (method, path) => {
    expectBody(await rawRequest(`${method} ${path} HTTP/1.1`), 404, NOT_FOUND);
  });
});

describe('no framework code or URL echo in any error body', () => {
  it("bodies of the usual failures hold only the contract's keys", async () => {
    const cases: Array<[string, string, string?]> = [
      ['POST', '/v0/users', '{"user": '],
      ['POST', '/v0/users', '[]'],
      ['PUT', '/v0/configuration', '"x"'],
      ['PROPFIND', '/v0/users'],
      ['GET', '/v0/nothing/here'],
      ['GET', '/v0/users?email=%zz'],
    ];
    for (const [method, path, body] of cases) {
      const res = await server.api(method, path, body);
      expect(res.headers['content-type'], `${method} ${path}`).toBe(JSON_TYPE);
      const text = JSON.stringify(res.body);
      expect(text, `${method} ${path}`).not.toMatch(/FST_|"code"|"message"|statusCode/);
      expect(text).not.toContain('/v0/');
    }
  });
});

describe('204 No Content', () => {
  it('a delete answers 204 with no body, no Content-Type and no Content-Length of a body', async () => {
    const user = (
      await server.api('POST', '/v0/users', { user: { email: `gone-${randomBytes(3).toString('hex')}@example.com` } })
    ).body.data;
    const device = (
      await server.api('POST', '/v0/devices', {
        device: { user_id: user.id, public_key: randomBytes(32).toString('base64') },
      })
    ).body.data;
    const rule = (await server.api('POST', '/v0/rules', { rule: { destination: '198.51.100.0/24', user_id: user.id } }))
      .body.data;
    for (const path of [`/v0/rules/${rule.id}`, `/v0/devices/${device.id}`, `/v0/users/${user.id}`]) {
      const answer = await rawRequest(`DELETE ${path} HTTP/1.1`, { extra: ['Content-Type: application/json'] });
      expect(answer.status, answer.text).toBe(204);
      expect(answer.text).toBe('');
      expect(answer.headers['content-type']).toBeUndefined();
      expect(answer.headers['content-length'] ?? '0').toBe('0');
    }
  });
});
