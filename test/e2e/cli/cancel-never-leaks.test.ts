/**
 * Security review F1, recreated directly: a list read by the client is cancelled (the connection's
 * cancel signal aborted) in each state a read can be in: not started, in flight, ended, and
 * abandoned (the reading loop left early). Before the fix, an abort after the list stream had
 * ended or been abandoned made got emit an 'error' event nobody listened to: Node printed got's
 * options, `authorization: 'Bearer nf_…'` among them, and exited 1.
 *
 * Each case runs in its own node process (the built client, as the CLI uses it), because what is
 * tested is what Node does with an error nobody handles: the process must end by itself with 0,
 * and print nothing with the token in it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { builtCli } from '../../helpers/cli.js';

const CLIENT = fileURLToPath(new URL('../../../dist/src/client/index.js', import.meta.url));

/**
 * The child: reads /v0/users with a cancel signal, aborts it at the given moment, lets every
 * pending event run (two turns of the event loop: got emits its error on the next tick), and
 * prints what the read came to.
 */
const CHILD = `
const { ApiClient } = await import(process.env.CLIENT_MODULE);
const cancel = new AbortController();
const client = new ApiClient({ url: process.env.URL, token: process.env.TOKEN, cancel: cancel.signal, retries: 0 });
const when = process.env.WHEN;
if (when === 'before') cancel.abort();
const reading = client.list('users').then((users) => 'read ' + users.length, (error) => 'failed: ' + error.message);
// In flight: the test sends SIGUSR2 once the server has answered the head and the start of the list.
process.on('SIGUSR2', () => cancel.abort());
console.log('reading');
const outcome = await reading;
if (when === 'ended' || when === 'abandoned') cancel.abort();
await new Promise((resolve) => setImmediate(resolve));
await new Promise((resolve) => setImmediate(resolve));
console.log(outcome);
`;

function runChild(
  env: Record<string, string>,
  whileRunning?: (child: ChildProcess) => Promise<void>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
      env: { ...process.env, CLIENT_MODULE: CLIENT, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: stdout.replace(/^reading\n/, ''), stderr }));
    whileRunning?.(child).catch(reject);
  });
}

/** A stand-in for a broken server: answers 200 and the start of a list, then what `rest` says. */
async function startBrokenServer(
  rest: 'hold' | 'malformed',
): Promise<{ url: string; server: Server; seen: Promise<void> }> {
  let sawRequest!: () => void;
  const seen = new Promise<void>((resolve) => (sawRequest = resolve));
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    if (rest === 'malformed') {
      // The second item is not a user: the reader throws, and the client leaves the stream mid-way.
      const good = { id: 'u1', email: 'a@example.com', role: 'admin', disabled_at: null, last_signed_in_at: null };
      response.write(`{"data":[${JSON.stringify(good)},{"not":"a user"},`);
      response.write(
        `${Array.from({ length: 2000 }, (_, i) => JSON.stringify({ ...good, id: `u${i + 2}` })).join(',')}`,
      );
      response.end(']}');
    } else {
      response.write('{"data":[');
      response.flushHeaders();
    }
    sawRequest();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, seen };
}

let server: TestServer;

beforeAll(async () => {
  builtCli(); // refuses a dist/ built from other sources, by name
  server = await startTestServer();
  // Enough users that the list answer comes in several chunks.
  for (let i = 0; i < 150; i++) {
    const created = await server.api('POST', '/v0/users', { user: { email: `user${i}@example.com` } });
    expect(created.status).toBe(201);
  }
});

afterAll(async () => {
  await server.stop();
});

function expectQuiet(result: { code: number | null; stdout: string; stderr: string }, token: string): void {
  expect(result.stderr, 'nothing on stderr').toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout + result.stderr).not.toContain(token);
  expect(result.stdout + result.stderr).not.toContain('authorization');
}

describe('cancelling a list read never emits an unhandled error (security review F1)', () => {
  it('after the list has ended', async () => {
    const result = await runChild({ URL: server.url, TOKEN: server.token, WHEN: 'ended' });
    expectQuiet(result, server.token);
    expect(result.stdout.trim()).toBe('read 151');
  });

  it('before the read starts', async () => {
    const result = await runChild({ URL: server.url, TOKEN: server.token, WHEN: 'before' });
    expectQuiet(result, server.token);
    expect(result.stdout).toMatch(/^failed: /);
  });

  it('after the reading loop left the stream (an item that cannot be read)', async () => {
    const broken = await startBrokenServer('malformed');
    try {
      const result = await runChild({ URL: broken.url, TOKEN: server.token, WHEN: 'abandoned' });
      expectQuiet(result, server.token);
      // The library's message gives the reason as its code (the command line words it).
      expect(result.stdout).toMatch(/^failed: GET \/v0\/users: 200 missing_field/);
    } finally {
      broken.server.closeAllConnections();
      broken.server.close();
    }
  });

  it('while the answer is still arriving', async () => {
    const broken = await startBrokenServer('hold');
    try {
      const result = await runChild({ URL: broken.url, TOKEN: server.token, WHEN: 'in-flight' }, async (child) => {
        await broken.seen;
        child.kill('SIGUSR2');
      });
      expectQuiet(result, server.token);
      expect(result.stdout).toMatch(/^failed: /);
    } finally {
      broken.server.closeAllConnections();
      broken.server.close();
    }
  });
});
