/**
 * The server bounds slow clients (review F5, F17), tested on a real `netform serve` process with
 * raw sockets: a request that drips in (headers or body, with a token or without) gets 408 once
 * `--request-timeout` has passed, and its connection closes; an answer given before the body
 * arrived (401, 413) closes the connection instead of reading the rest; SIGTERM stops accepting,
 * lets requests in flight finish for at most `--shutdown-timeout`, closes every connection and
 * exits 0; a request without Host gets the contract's JSON 400. The timeouts are made small with
 * the flags, and every wait is for an event (a bound only turns a hang into a failure).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type TestServer } from '../../helpers/server.js';

/** A server with these `serve` flags for the tests of the enclosing describe. */
function serverFor(args: string[]): () => TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServerProcess({ args: ['--log-level', 'info', ...args] });
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => server!;
}

interface Raw {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves with everything received once the server has closed the connection. */
  closed: Promise<string>;
  /** Writes one byte of `filler` every 50 ms until the connection closes (a client dripping a request). */
  drip(filler?: string): void;
}

async function open(server: TestServer, first: string): Promise<Raw> {
  const url = new URL(server.url);
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined); // a write racing the server's close
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  let timer: NodeJS.Timeout | undefined;
  const closed = new Promise<string>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      resolve(text);
    }),
  );
  socket.write(first);
  return {
    socket,
    received: () => text,
    closed,
    drip(filler = ' ') {
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(filler);
      }, 50);
    },
  };
}

/** Resolves once what `raw` received satisfies `done`. */
function until(raw: Raw, done: (text: string) => boolean): Promise<void> {
  return new Promise<void>((resolve) => {
    const check = () => {
      if (!done(raw.received())) return;
      raw.socket.off('data', check);
      resolve();
    };
    raw.socket.on('data', check);
    check();
  });
}

/** `promise`, or a failure naming `what` after `ms` (a safety bound: the tests wait for events). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]);
}

function statusLine(text: string): string {
  return text.split('\r\n')[0] ?? '';
}

function bodyOf(text: string): string {
  return text.slice(text.indexOf('\r\n\r\n') + 4);
}

describe('--request-timeout 1', () => {
  const current = serverFor(['--request-timeout', '1']);

  it('headers that drip in: 408 {"error":"Request Timeout"} once the timeout has passed, then the connection closes', async () => {
    const server = current();
    const raw = await open(server, 'GET /v0/users HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const began = Date.now();
    raw.drip('a');
    const text = await within(raw.closed, 10_000, 'the connection closing');
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
    expect(statusLine(text)).toBe('HTTP/1.1 408 Request Timeout');
    expect(text).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
    expect(JSON.parse(bodyOf(text))).toEqual({ error: 'Request Timeout' });
    expect((await server.api('GET', '/healthz')).status).toBe(200);
  });

  it('a body that drips in, with a valid token: 408 once the timeout has passed, the connection closes; nothing written', async () => {
    const server = current();
    const raw = await open(
      server,
      `POST /v0/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"user": {"email": "slow@example.com"}',
    );
    raw.drip();
    const text = await within(raw.closed, 10_000, 'the connection closing');
    expect(statusLine(text)).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(bodyOf(text))).toEqual({ error: 'Request Timeout' });
    expect((await server.api('GET', '/v0/users/slow@example.com')).status).toBe(404);
  });
});

describe('default timeouts, --body-limit 100', () => {
  const current = serverFor(['--body-limit', '100']);

  it('401 without a token: answered at once, the connection closed, the declared body not read', async () => {
    // The default request timeout (60 s): what closes the connection here is the 401.
    const server = current();
    const raw = await open(server, 'POST /v0/users HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n{');
    raw.drip();
    const text = await within(raw.closed, 10_000, 'the connection closing after the 401');
    expect(statusLine(text)).toBe('HTTP/1.1 401 Unauthorized');
    expect(text).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(bodyOf(text))).toEqual({ errors: { auth: 'unauthenticated' } });
  });

  it('413 for a declared length over the body limit, and for chunks that go over it: the connection closes at once', async () => {
    const server = current();
    const auth = `Authorization: Bearer ${server.token}\r\nContent-Type: application/json\r\n`;
    const declared = await open(server, `POST /v0/users HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 5000\r\n\r\n{`);
    declared.drip();
    const chunked = await open(
      server,
      `POST /v0/users HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\n\r\nc8\r\n${' '.repeat(200)}\r\n`,
    );
    chunked.drip('');
    for (const [name, raw] of [
      ['declared', declared],
      ['chunked', chunked],
    ] as const) {
      const text = await within(raw.closed, 10_000, `${name}: the connection closing after the 413`);
      expect(statusLine(text), name).toBe('HTTP/1.1 413 Payload Too Large');
      expect(text).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(bodyOf(text))).toEqual({ error: 'Payload Too Large' });
    }
  });

  it('a request whose body arrived keeps its keep-alive connection', async () => {
    const server = current();
    const body = '{"user": {}}';
    const raw = await open(
      server,
      `POST /v0/users HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    await within(
      until(raw, (text) => text.includes('"ok"')),
      10_000,
      'both answers',
    );
    expect(statusLine(raw.received())).toBe('HTTP/1.1 401 Unauthorized');
    expect(raw.socket.destroyed).toBe(false);
    raw.socket.destroy();
  });

  it('HTTP/1.1 without Host: the contract 400 {"error":"Bad Request"} as JSON, and the connection closes', async () => {
    const server = current();
    const raw = await open(server, 'GET /healthz HTTP/1.1\r\n\r\n');
    const text = await within(raw.closed, 10_000, 'the connection closing');
    expect(statusLine(text)).toBe('HTTP/1.1 400 Bad Request');
    expect(text).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
    expect(JSON.parse(bodyOf(text))).toEqual({ error: 'Bad Request' });
    // Before any token is looked at, as for every malformed request.
    const v0 = await open(server, `GET /v0/users HTTP/1.1\r\nAuthorization: Bearer ${server.token}\r\n\r\n`);
    expect(statusLine(await within(v0.closed, 10_000, 'the connection closing'))).toBe('HTTP/1.1 400 Bad Request');
  });

  it('HTTP/1.0 needs no Host', async () => {
    const server = current();
    const raw = await open(server, 'GET /healthz HTTP/1.0\r\n\r\n');
    const text = await within(raw.closed, 10_000, 'the answer');
    expect(statusLine(text)).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(bodyOf(text))).toEqual({ status: 'ok' });
  });
});

describe('SIGTERM', () => {
  const current = serverFor(['--shutdown-timeout', '1']);

  it('stops accepting, finishes a request in flight, closes a dripping connection after --shutdown-timeout, exits 0', async () => {
    const server = current();
    const url = new URL(server.url);
    // In flight: the server has its headers (it answered 100 Continue); the body comes after SIGTERM.
    const body = '{"user": {"email": "in-flight@example.com"}}';
    const inFlight = await open(
      server,
      `POST /v0/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await within(
      until(inFlight, (text) => text.startsWith('HTTP/1.1 100 Continue\r\n')),
      10_000,
      '100 Continue',
    );
    // Dripping a body that never ends, with a token (the request timeout is 60 s), once in flight.
    const dripping = await open(
      server,
      `POST /v0/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n',
    );
    await within(
      until(dripping, (text) => text.startsWith('HTTP/1.1 100 Continue\r\n')),
      10_000,
      '100 Continue',
    );
    dripping.drip();
    const signalled = Date.now();
    process.kill(server.pid()!, 'SIGTERM');
    await server.waitForStderr('SIGTERM: finishing requests in flight');
    inFlight.socket.write(body);
    const answer = await within(inFlight.closed, 10_000, 'the answer in flight');
    expect(answer).toMatch(/HTTP\/1\.1 201 Created\r\n/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    // No longer accepting.
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname);
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    expect(refused).toBe('ECONNREFUSED');
    await within(dripping.closed, 10_000, 'the dripping connection closing');
    expect(await within(server.exited(), 10_000, 'the process exiting')).toEqual({ code: 0, signal: null });
    // It waited for the in-flight requests, but not longer than the shutdown timeout.
    const took = Date.now() - signalled;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(8000);
  });
});
