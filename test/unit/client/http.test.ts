/**
 * The /v0 client against a scripted HTTP server (node:http): retries, Retry-After, error shapes
 * of our server and of upstream Firezone 0.7.x, and creates whose outcome is unknown.
 * (A scripted server is needed here to produce dropped connections and 5xx on demand; the e2e
 * tests run the client against the real server.)
 */
import { hasOpenssl, writeSelfSignedCertificate } from '../../helpers/tls.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, ApiError, fetchLiveState } from '../../../src/client/index.js';
import { apiErrorText, retryLine } from '../../../src/views/api-error.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

interface Scripted {
  url: string;
  requests: {
    method: string;
    url: string;
    body: string;
    auth: string | undefined;
    headers: IncomingMessage['headers'];
  }[];
  close(): Promise<void>;
}

const servers: Scripted[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function scripted(handler: Handler, tls?: { key: string; cert: string }): Promise<Scripted> {
  const requests: Scripted['requests'] = [];
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        body,
        auth: req.headers.authorization,
        headers: req.headers,
      });
      handler(req, res, body);
    });
  };
  const server = tls ? createHttpsServer(tls, onRequest) : createHttpServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const s: Scripted = {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(s);
  return s;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

const TOKEN = 'nf_test_token_that_must_never_be_printed';
/** The client as the command line makes it: its errors worded by the view. */
const client = (url: string, extra: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}) =>
  new ApiClient({ url, token: TOKEN, retryBaseMs: 5, retries: 3, describeError: apiErrorText, ...extra });

const rule = (over: Record<string, unknown> = {}) => ({
  id: '6c4d3f2e-1111-4aaa-8bbb-000000000001',
  action: 'accept',
  destination: '10.0.0.0/8',
  port_type: null,
  port_range: null,
  user_id: null,
  inserted_at: '2024-01-01T00:00:00.000000Z',
  updated_at: '2024-01-01T00:00:00.000000Z',
  ...over,
});

describe('ApiClient', () => {
  it('sends the bearer token and reads a list, tolerating extra keys and upstream spellings', async () => {
    const s = await scripted((req, res) => {
      if (req.url === '/v0/rules')
        json(res, 200, { data: [rule({ port_type: 'tcp', port_range: '80', destination: '10.0.0.1', extra_key: 1 })] });
      else json(res, 404, { error: 'not_found' });
    });
    const rules = await client(s.url + '/').list('rules');
    expect(rules).toEqual([
      {
        id: rule().id,
        action: 'accept',
        destination: '10.0.0.1',
        port_type: 'tcp',
        port_range: '80',
        user_id: null,
        inserted_at: rule().inserted_at,
        updated_at: rule().updated_at,
      },
    ]);
    expect(s.requests[0]?.auth).toBe(`Bearer ${TOKEN}`);
  });

  it('says it is netform, sends a body as JSON and asks for no compression', async () => {
    const s = await scripted((req, res, body) =>
      json(res, 201, { data: { ...rule(), ...(JSON.parse(body) as { rule: object }).rule } }),
    );
    const { resource } = await client(s.url).create('rules', { action: 'accept', destination: '10.0.0.0/8' });
    expect(resource.destination).toBe('10.0.0.0/8');
    const [sent] = s.requests;
    expect(sent?.headers['user-agent']).toBe('netform');
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.headers['content-length']).toBe(String(Buffer.byteLength(sent?.body ?? '')));
    expect(JSON.parse(sent?.body ?? '')).toEqual({ rule: { action: 'accept', destination: '10.0.0.0/8' } });
    expect(sent?.headers['accept-encoding']).toBeUndefined();
  });

  it('retries 5xx and network drops on GET with backoff, then succeeds', async () => {
    let n = 0;
    const s = await scripted((_req, res) => {
      n++;
      if (n === 1) json(res, 503, { error: 'Service Unavailable' });
      else if (n === 2) res.socket?.destroy();
      else json(res, 200, { data: [] });
    });
    await expect(client(s.url).list('users')).resolves.toEqual([]);
    expect(s.requests).toHaveLength(3);
  });

  it('honours Retry-After on 429', async () => {
    let n = 0;
    const s = await scripted((_req, res) => {
      n++;
      if (n === 1) json(res, 429, { error: 'Too Many Requests' }, { 'retry-after': '1' });
      else json(res, 200, { data: [] });
    });
    const started = Date.now();
    await client(s.url).list('devices');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(s.requests).toHaveLength(2);
  });

  it('gives up after the retry limit with the last status', async () => {
    const s = await scripted((_req, res) => json(res, 500, { error: 'Internal Server Error' }));
    const error = await client(s.url, { retries: 2 })
      .list('users')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(500);
    expect(s.requests).toHaveLength(3);
  });

  it('never retries other 4xx, and carries the errors map of a 422', async () => {
    const s = await scripted((_req, res) =>
      json(res, 422, {
        errors: {
          name: ['has already been taken'],
          base: ['Maximum device limit reached. Remove an existing device before creating a new one.'],
        },
      }),
    );
    const error = (await client(s.url)
      .create('devices', { user_id: 'u', name: 'laptop', public_key: 'k' })
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(422);
    expect(error.errors).toEqual({
      name: ['has already been taken'],
      base: ['Maximum device limit reached. Remove an existing device before creating a new one.'],
    });
    expect(error.message).toBe(
      'POST /v0/devices: 422 name has already been taken; Maximum device limit reached. Remove an existing device before creating a new one.',
    );
    expect(s.requests).toHaveLength(1);
  });

  it('reads upstream 401 and 404 bodies and never shows the token', async () => {
    const s = await scripted((req, res) => {
      if (req.url === '/v0/users') json(res, 401, { errors: { auth: 'invalid_token' } });
      else res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not Found</html>');
    });
    const unauthorized = (await client(s.url)
      .list('users')
      .catch((e: unknown) => e)) as ApiError;
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.errors).toEqual({ auth: ['invalid_token'] });
    expect(unauthorized.message).toMatch(/the token is unknown, revoked or expired/);
    const missing = (await client(s.url)
      .get('rules', 'x')
      .catch((e: unknown) => e)) as ApiError;
    expect(missing.isNotFound).toBe(true);
    await expect(client(s.url).find('rules', 'x')).resolves.toBeNull();
    for (const e of [unauthorized, missing]) {
      expect(`${e.message} ${String(e)} ${JSON.stringify(e)}`).not.toContain(TOKEN);
    }
    expect(s.requests).toHaveLength(3);
  });

  it('cuts the token out of an answer that echoes the Authorization header, and keeps its lines on one', async () => {
    // A broken server or proxy answering 500 with the request's header in its text (the W3.3 safety net found
    // the retry lines printing it).
    const s = await scripted((req, res) =>
      json(res, 500, {
        error: `boom\n::error::x ${req.headers.authorization}`,
        errors: { [String(req.headers.authorization)]: [`sent ${req.headers.authorization}`] },
      }),
    );
    const lines: string[] = [];
    const error = (await client(s.url, { retries: 1, onRetry: (e) => lines.push(retryLine(e)) })
      .list('users')
      .catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(500);
    expect(error.reason).toBe('boom\\u000a::error::x Bearer (secret)');
    expect(error.errors).toEqual({ 'Bearer (secret)': ['sent Bearer (secret)'] });
    expect(lines).toEqual([expect.stringMatching(/^retrying GET \/v0\/users in \d+ ms \(1\/1\): 500 boom\\u000a/)]);
    for (const text of [...lines, error.message, JSON.stringify(error)]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain('\n');
    }
  });

  it('reports a network failure with no status and no token', async () => {
    const s = await scripted((_req, res) => res.socket?.destroy());
    const error = (await client(s.url, { retries: 1 })
      .list('users')
      .catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBeNull();
    expect(error.message).toBe(`GET /v0/users: ${s.url} dropped the connection (ECONNRESET)`);
    expect(error.message).not.toContain(TOKEN);
  });

  it('does not send a create twice when the first attempt was applied but its answer was lost', async () => {
    const created = rule({ action: 'drop', destination: '10.9.0.0/16' });
    let stored = false;
    const s = await scripted((req, res) => {
      if (req.method === 'POST') {
        stored = true;
        res.socket?.destroy();
      } else if (req.url === '/v0/rules') json(res, 200, { data: stored ? [created] : [] });
    });
    const result = await client(s.url).create('rules', { action: 'drop', destination: '10.9.0.0/16' });
    expect(result.foundAfterRetry).toBe(true);
    expect(result.resource.id).toBe(created.id);
    expect(s.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('sends a create again when the earlier attempt is known not to have been applied', async () => {
    let posts = 0;
    const s = await scripted((req, res) => {
      if (req.method === 'POST') {
        posts++;
        if (posts === 1) json(res, 429, { error: 'Too Many Requests' });
        else if (posts === 2) json(res, 502, { error: 'Bad Gateway' });
        else
          json(
            res,
            201,
            { data: { id: 'a1b2c3d4-0000-4000-8000-000000000000', email: 'bob@example.com', role: 'unprivileged' } },
            { location: '/v0/users/x' },
          );
      } else json(res, 404, { error: 'not_found' });
    });
    const result = await client(s.url).create('users', { email: 'bob@example.com' });
    expect(result.foundAfterRetry).toBe(false);
    expect(result.resource.email).toBe('bob@example.com');
    // 429 is retried directly; the 502 left the outcome unknown, so the user was looked up first.
    expect(s.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v0/users',
      'POST /v0/users',
      'GET /v0/users/bob%40example.com',
      'POST /v0/users',
    ]);
    expect(JSON.parse(s.requests[0]!.body)).toEqual({ user: { email: 'bob@example.com' } });
  });

  it('treats a 404 on a retried delete as done, and a 404 on the first attempt as an error', async () => {
    let deleted = false;
    const s = await scripted((req, res) => {
      if (req.url?.endsWith('/gone')) return json(res, 404, { error: 'not_found' });
      if (!deleted) {
        deleted = true;
        res.socket?.destroy();
      } else json(res, 404, { error: 'not_found' });
    });
    await expect(client(s.url).remove('devices', 'abc')).resolves.toBeUndefined();
    await expect(client(s.url).remove('devices', 'gone')).rejects.toMatchObject({ status: 404 });
  });

  it('fetchLiveState reads each collection with exactly one list call', async () => {
    const s = await scripted((req, res) => json(res, 200, { data: req.url === '/v0/rules' ? [rule()] : [] }));
    const live = await fetchLiveState(client(s.url));
    expect(live.rules).toHaveLength(1);
    expect(s.requests.map((r) => r.url).sort()).toEqual(['/v0/devices', '/v0/rules', '/v0/users']);
  });

  describe.skipIf(!hasOpenssl())('TLS', () => {
    it('refuses an unknown certificate, accepts it with --ca-file or --insecure', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'netform-tls-'));
      try {
        writeSelfSignedCertificate(dir);
        const tls = {
          key: readFileSync(join(dir, 'key.pem'), 'utf8'),
          cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
        };
        const s = await scripted((_req, res) => json(res, 200, { data: [] }), tls);
        const refused = (await client(s.url, { retries: 0 })
          .list('users')
          .catch((e: unknown) => e)) as ApiError;
        expect(refused.status).toBeNull();
        await expect(client(s.url, { ca: tls.cert }).list('users')).resolves.toEqual([]);
        await expect(client(s.url, { insecure: true }).list('users')).resolves.toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

describe('ApiClient: errors a person can act on', () => {
  it('drops a trailing /v0 from the base URL', async () => {
    const s = await scripted((req, res) =>
      json(res, req.url === '/v0/users' ? 200 : 404, req.url === '/v0/users' ? { data: [] } : { error: 'not_found' }),
    );
    await expect(client(`${s.url}/v0/`).list('users')).resolves.toEqual([]);
    expect(s.requests.map((r) => r.url)).toEqual(['/v0/users']);
  });

  it('says an HTML answer or a missing collection is not a /v0 API, naming the URL, without retrying', async () => {
    const html = await scripted((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Welcome</title>'),
    );
    const error = (await client(html.url)
      .list('users')
      .catch((e: unknown) => e)) as ApiError;
    expect(error.problem).toBe('not_v0');
    expect(error.message).toBe(
      `GET /v0/users: ${html.url} answered 200, but this does not look like a /v0 API (the answer is an HTML page, not JSON). --url must be the server's base URL, such as https://vpn.example.com`,
    );
    expect(html.requests).toHaveLength(1);
    const elsewhere = await scripted((_req, res) => json(res, 404, { error: 'not_found' }));
    const missing = (await client(elsewhere.url)
      .list('rules')
      .catch((e: unknown) => e)) as ApiError;
    expect(missing.message).toContain('this does not look like a /v0 API (it has no /v0/rules)');
  });

  it('announces each retry with its delay and reason, and stops at the deadline', async () => {
    const s = await scripted((_req, res) => json(res, 503, { error: 'Service Unavailable' }));
    const lines: string[] = [];
    const error = (await client(s.url, { retries: 4, retryBaseMs: 20, onRetry: (e) => lines.push(retryLine(e)) })
      .list('users')
      .catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(503);
    expect(lines).toHaveLength(4);
    lines.forEach((line, i) =>
      expect(line).toMatch(new RegExp(`^retrying GET /v0/users in \\d+ ms \\(${i + 1}/4\\): 503 Service Unavailable$`)),
    );
    // A long backoff that would end after the call's deadline is not started.
    const bounded = await scripted((_req, res) => json(res, 503, { error: 'Service Unavailable' }));
    const started = Date.now();
    await client(bounded.url, { retries: 4, retryBaseMs: 5_000, totalTimeoutMs: 300 })
      .list('users')
      .catch(() => undefined);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(bounded.requests).toHaveLength(1);
  });

  it('times out a server that never answers, naming the URL and --timeout', async () => {
    const silent = await silentServer();
    const lines: string[] = [];
    const started = Date.now();
    const error = (await client(silent.url, {
      timeoutMs: 300,
      retryBaseMs: 10,
      onRetry: (e) => lines.push(retryLine(e)),
    })
      .list('users')
      .catch((e: unknown) => e)) as ApiError;
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(error.problem).toBe('timeout');
    expect(error.message).toBe(
      `GET /v0/users: no answer from ${silent.url} within 0.3 s. The server or a proxy in front of it is not answering; --timeout SECONDS waits longer`,
    );
    // The first attempt used the whole deadline: no retry could start.
    expect(lines).toEqual([]);
    await silent.close();
  });

  it('words the timeout to a tenth of a second, as --timeout was given: a clock tick does not make 1 s "1.0 s"', () => {
    const facts = (timeoutMs: number) => ({
      method: 'GET',
      path: '/v0/users',
      status: null,
      errors: {},
      reason: 'ETIMEDOUT',
      server: 'http://127.0.0.1:1',
      problem: 'timeout' as const,
      answer: undefined,
      timeoutMs,
    });
    const within = (ms: number) => /within (.+?)\. /.exec(apiErrorText(facts(ms)))?.[1];
    expect([1000, 999, 960, 300, 299, 250, 1500, 30_000, 20].map(within)).toEqual([
      '1 s',
      '1 s',
      '1 s',
      '0.3 s',
      '0.3 s',
      '0.3 s',
      '1.5 s',
      '30 s',
      '20 ms',
    ]);
  });

  it('says a refused connection and an unknown host apart', async () => {
    const closed = await closedPortUrl();
    const refused = (await client(closed, { retries: 1, retryBaseMs: 5 })
      .list('users')
      .catch((e: unknown) => e)) as ApiError;
    expect(refused.message).toBe(
      `GET /v0/users: connection refused by ${closed}: nothing is listening there. Is the server running, and is --url (NETFORM_URL) right?`,
    );
    const unknown = (await client('http://netform-no-such-host.invalid', { retries: 3 })
      .list('users')
      .catch((e: unknown) => e)) as ApiError;
    expect(unknown.problem).toBe('host_not_found');
    expect(unknown.message).toMatch(
      /^GET \/v0\/users: host not found: netform-no-such-host\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\)/,
    );
  });
});

/** A TCP server that accepts connections and never answers. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL whose port nothing listens on. */
async function closedPortUrl(): Promise<string> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('ApiClient: lists read as they arrive', () => {
  const rules = Array.from({ length: 50 }, (_, i) =>
    rule({ id: `6c4d3f2e-1111-4aaa-8bbb-${String(i).padStart(12, '0')}`, destination: `10.0.${i}.0/24` }),
  );

  it('reads a list sent a few bytes at a time, multi-byte characters cut in half included', async () => {
    // A user's email with characters of two, three and four bytes in UTF-8.
    const users = Array.from({ length: 20 }, (_, i) => ({
      id: `7c4d3f2e-1111-4aaa-8bbb-${String(i).padStart(12, '0')}`,
      email: `ünï-✓-𝄞-${i}@example.com`,
      role: 'unprivileged',
      last_signed_in_at: null,
      last_signed_in_method: null,
      disabled_at: null,
      inserted_at: '2024-01-01T00:00:00.000000Z',
      updated_at: '2024-01-01T00:00:00.000000Z',
    }));
    const bytes = Buffer.from(JSON.stringify({ data: users }));
    const s = await scripted((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let at = 0;
      const next = () => {
        if (at >= bytes.length) return res.end();
        // 1 to 5 bytes, then wait for the socket: each write leaves as its own piece.
        const size = 1 + (at % 5);
        res.write(bytes.subarray(at, (at += size)), next);
      };
      next();
    });
    await expect(client(s.url).list('users')).resolves.toEqual(users);
  });

  it('reads the list again from its start when the connection drops in the middle of it', async () => {
    const body = JSON.stringify({ data: rules });
    let n = 0;
    const s = await scripted((_req, res) => {
      n++;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      if (n === 1) res.write(body.slice(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
      else res.end(body);
    });
    const read = await client(s.url).list('rules');
    expect(read.map((r) => r.id)).toEqual(rules.map((r) => r.id));
    expect(s.requests).toHaveLength(2);
  });

  it('says which item of a list it cannot read, without retrying', async () => {
    const body = JSON.stringify({ data: [...rules.slice(0, 10), { action: 'accept' }, ...rules.slice(10)] });
    const s = await scripted((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    const error = (await client(s.url)
      .list('rules')
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain('GET /v0/rules');
    expect(error.message).toContain('unexpected answer: the server sent a rule without `id`');
    expect(s.requests).toHaveLength(1);
  });

  it('says a list that is not valid JSON is not a /v0 answer, whatever came before the mistake', async () => {
    const body = JSON.stringify({ data: rules }).replace(/\]\}$/, ',]}');
    const s = await scripted((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    const error = (await client(s.url)
      .list('rules')
      .catch((e: unknown) => e)) as ApiError;
    expect(error.problem).toBe('not_v0');
    expect(error.message).toContain('(the answer is not valid JSON)');
    expect(s.requests).toHaveLength(1);
  });

  it('reads a list laid out differently (pretty-printed) whole, with the same result', async () => {
    const s = await scripted((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: rules }, null, 2)),
    );
    const read = await client(s.url).list('rules');
    expect(read.map((r) => r.destination)).toEqual(rules.map((r) => r.destination));
  });
});
