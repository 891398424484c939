/**
 * The /docs page's answers and the OpenAPI document, on a server that builds them on their first
 * request (server/openapi.ts): the same statuses, headers and bodies as when @fastify/swagger-ui
 * ran on the app itself, the page's Content-Security-Policy on every /docs answer (its 404s and
 * errors included), files with their caching headers, conditional and range requests, HEAD, and
 * the contract's bodies for a missing file and a refused range. The first requests arrive
 * together, before anything is built.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';

const CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; frame-ancestors 'self'; " +
  "img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'";
const UI_STATIC = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static');
const CSS = readFileSync(join(UI_STATIC, 'swagger-ui.css'));

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let server: TestServer;
beforeAll(async () => {
  server = await startInProcessServer();
});
afterAll(async () => {
  await server?.stop();
});

function ask(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The answer's headers but those of the connection (date, connection, keep-alive). */
function headersOf(answer: Answer): Record<string, string | string[] | undefined> {
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...rest } = answer.headers;
  return rest;
}

const FILE_HEADERS = {
  'accept-ranges': 'bytes',
  'cache-control': 'public, max-age=0',
  'content-security-policy': CSP,
};

describe('the /docs answers, built on first request', () => {
  it('first requests arriving together each get their answer', async () => {
    const [page, css, document] = await Promise.all([
      ask('GET', '/docs'),
      ask('GET', '/docs/static/swagger-ui.css'),
      ask('GET', '/v0/openapi.json'),
    ]);
    expect(page.status).toBe(200);
    expect(headersOf(page)).toEqual({
      'content-length': String(page.body.length),
      'content-security-policy': CSP,
      'content-type': 'text/html; charset=utf-8',
    });
    expect(page.body.toString()).toContain('<script src="/docs/static/swagger-initializer.js"');
    expect(css.status).toBe(200);
    expect(css.body.equals(CSS)).toBe(true);
    expect(headersOf(css)).toEqual({
      ...FILE_HEADERS,
      'content-length': String(CSS.length),
      'content-type': 'text/css; charset=utf-8',
      etag: expect.stringMatching(/^W\/"/),
      'last-modified': expect.any(String),
    });
    expect(document.status).toBe(200);
    expect(headersOf(document)).toEqual({
      'content-length': String(document.body.length),
      'content-type': 'application/json; charset=utf-8',
    });
    expect(JSON.parse(document.body.toString()).openapi).toBe('3.1.0');
  });

  it('the page, its scripts, its redirect and its two documents', async () => {
    const slash = await ask('GET', '/docs/');
    expect(slash.status).toBe(200);
    expect(slash.body.toString()).toContain('./static/swagger-initializer.js');
    expect(headersOf(slash)['content-security-policy']).toBe(CSP);

    const redirect = await ask('GET', '/docs/static/index.html?x=1');
    expect([redirect.status, headersOf(redirect), redirect.body.length]).toEqual([
      302,
      { 'content-length': '0', 'content-security-policy': CSP, location: '/docs/static/index.html?x=1' },
      0,
    ]);
    expect(headersOf(await ask('GET', '/docs/static/index.html')).location).toBe('/docs/');

    const initializer = await ask('GET', '/docs/static/swagger-initializer.js');
    expect(initializer.status).toBe(200);
    expect(headersOf(initializer)).toEqual({
      'content-length': String(initializer.body.length),
      'content-security-policy': CSP,
      'content-type': 'application/javascript; charset=utf-8',
    });
    expect(initializer.body.toString()).toContain('SwaggerUIBundle');

    const document = await ask('GET', '/v0/openapi.json');
    const json = await ask('GET', '/docs/json');
    expect(json.body.equals(document.body)).toBe(true);
    expect(headersOf(json)).toEqual({
      'content-length': String(json.body.length),
      'content-security-policy': CSP,
      'content-type': 'application/json; charset=utf-8',
    });
    const yaml = await ask('GET', '/docs/yaml');
    expect(headersOf(yaml)).toEqual({
      'content-length': String(yaml.body.length),
      'content-security-policy': CSP,
      'content-type': 'application/x-yaml',
    });
    expect(yaml.body.toString()).toMatch(/^openapi: 3\.1\.0\n/);
    for (const path of Object.keys(JSON.parse(document.body.toString()).paths as object)) {
      expect(yaml.body.toString()).toContain(`\n  ${path}:\n`);
    }
  });

  it('files: HEAD, a conditional request, a range, a refused range, a missing file', async () => {
    const head = await ask('HEAD', '/docs/static/swagger-ui.css');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const etag = head.headers.etag as string;
    expect(headersOf(head)).toEqual({
      ...FILE_HEADERS,
      'content-length': String(CSS.length),
      'content-type': 'text/css; charset=utf-8',
      etag,
      'last-modified': expect.any(String),
    });

    const notModified = await ask('GET', '/docs/static/swagger-ui.css', { 'if-none-match': etag });
    expect([notModified.status, notModified.body.length]).toEqual([304, 0]);
    expect(headersOf(notModified)).toEqual({ ...FILE_HEADERS, etag, 'last-modified': expect.any(String) });

    const range = await ask('GET', '/docs/static/swagger-ui.css', { range: 'bytes=0-99' });
    expect(range.status).toBe(206);
    expect(range.body.equals(CSS.subarray(0, 100))).toBe(true);
    expect(headersOf(range)).toEqual({
      ...FILE_HEADERS,
      'content-length': '100',
      'content-range': `bytes 0-99/${CSS.length}`,
      'content-type': 'text/css; charset=utf-8',
      etag,
      'last-modified': expect.any(String),
    });

    // What the app's error handler makes of @fastify/static's 416: the contract's 400.
    const refused = await ask('GET', '/docs/static/swagger-ui.css', { range: 'bytes=999999999-' });
    expect([refused.status, refused.body.toString(), headersOf(refused)]).toEqual([
      400,
      '{"error":"Bad Request"}',
      { 'content-length': '23', 'content-security-policy': CSP, 'content-type': 'application/json; charset=utf-8' },
    ]);

    for (const path of ['/docs/static/missing.js', '/docs/static/.hidden', '/docs/static/..%2f..%2fpackage.json']) {
      const missing = await ask('GET', path);
      expect([missing.status, missing.body.toString(), headersOf(missing)], path).toEqual([
        404,
        '{"error":"not_found"}',
        { 'content-length': '21', 'content-security-policy': CSP, 'content-type': 'application/json; charset=utf-8' },
      ]);
    }

    const logo = await ask('GET', '/docs/static/logo.svg');
    expect(logo.body.equals(readFileSync(join(UI_STATIC, 'logo.svg')))).toBe(true);
    expect(headersOf(logo)['content-type']).toBe('image/svg+xml');
  });

  it('what is not a /docs route still needs a token', async () => {
    for (const [method, path] of [
      ['HEAD', '/docs'],
      ['POST', '/docs/json'],
      ['GET', '/docs/nothing'],
      ['GET', '/docs/static/'],
    ] as const) {
      const answer = await ask(method, path);
      expect([answer.status, headersOf(answer)['content-security-policy']], `${method} ${path}`).toEqual([
        401,
        undefined,
      ]);
    }
  });
});
