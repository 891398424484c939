/**
 * Network failures as the CLI reports them: each names the URL and says what to do; retries are
 * announced one line each; a server that does not answer fails the command within its timeout.
 * Loopback servers stand in for the failures: a closed port, one that never answers, one that
 * answers HTML, a TLS server with a self-signed certificate, and a host that does not exist.
 *
 * The subject is what the client says, not the process: the runs are in this process through
 * run(argv, io) (runCli). Their process path (the bin's stderr, its exit code) is covered by the
 * safety-net table's processes (safety-net.test.ts): `plan × connection refused` (a failed
 * connection, the host not found included: the same path), `plan × slower than --timeout`,
 * `plan × 500 HTML page echoing the Authorization header`, `plan × happy path` (the base URL,
 * --verbose's lines on stderr), and for TLS, integration/server/tls.test.ts's "serves HTTPS;
 * netform plan works against it with --ca-file and refuses the certificate without it".
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { closedPortUrl, startFixedAnswerServer, startSilentServer } from '../../helpers/net.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { hasOpenssl, writeSelfSignedCertificate } from '../../helpers/tls.js';
import { describeResult } from '../../helpers/workspace.js';

let dir: string;
let file: string;
const env = { NETFORM_TOKEN: 'nf_network_test_token', NETFORM_RETRY_DELAY_MS: '5' };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-network-'));
  file = join(dir, 'netform.yaml');
  writeFileSync(file, 'version: 1\nusers:\n  - email: alice@example.com\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const plan = (url: string, extra: string[] = [], extraEnv: Record<string, string> = {}) =>
  runCli(['plan', '-f', file, ...extra], { env: { ...env, NETFORM_URL: url, ...extraEnv } });

describe('network errors', () => {
  it('connection refused: retried quietly (one "retrying" line for all calls), then the URL and what to check', async () => {
    const url = await closedPortUrl();
    const result = await plan(url);
    expect(result.code, describeResult(result)).toBe(1);
    const retrying = result.stderr.split('\n').filter((line) => line.startsWith('retrying '));
    expect(retrying).toEqual([
      expect.stringMatching(/^retrying GET \/v0\/\w+ in \d+ ms \(1\/4\): connection refused$/),
    ]);
    expect(result.stderr).toContain(
      `connection refused by ${url}: nothing is listening there. Is the server running, and is --url (NETFORM_URL) right?`,
    );
    expect(result.stderr).not.toContain(env.NETFORM_TOKEN);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('host not found: names the host, no retries for a misspelt name', async () => {
    const result = await plan('https://netform-no-such-host.invalid');
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr).toMatch(
      /host not found: netform-no-such-host\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\)\. Check the host name in --url/,
    );
  });

  it('a server that never answers: fails within --timeout, naming the URL', async () => {
    const silent = await startSilentServer();
    try {
      const started = Date.now();
      const result = await plan(silent.url, ['--timeout', '1']);
      expect(result.code, describeResult(result)).toBe(1);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(result.stderr).toContain(
        `no answer from ${silent.url} within 1 s. The server or a proxy in front of it is not answering; --timeout SECONDS waits longer`,
      );
    } finally {
      await silent.close();
    }
  });

  it('an HTML answer: "this does not look like a /v0 API"', async () => {
    const page = await startFixedAnswerServer(
      200,
      'text/html; charset=utf-8',
      '<!doctype html><html><body>Welcome to nginx!</body></html>',
    );
    try {
      const result = await plan(page.url);
      expect(result.code, describeResult(result)).toBe(1);
      expect(result.stderr).toContain(
        `${page.url} answered 200, but this does not look like a /v0 API (the answer is an HTML page, not JSON). --url must be the server's base URL`,
      );
      expect(result.stderr).not.toContain('retrying');
    } finally {
      await page.close();
    }
  });

  it.skipIf(!hasOpenssl())('TLS failure: says so, with the --ca-file / --insecure hint', async () => {
    writeSelfSignedCertificate(dir);
    const server = createHttpsServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const result = await plan(url);
      expect(result.code, describeResult(result)).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(
          `TLS failure talking to ${url.replace(/\./g, '\\.')} \\([A-Z_]+\\)\\. If the server uses a private or self-signed certificate, pass --ca-file CA\\.pem; --insecure skips verification`,
        ),
      );
      expect(result.stderr).not.toContain('retrying');
      const trusted = await plan(url, ['--ca-file', join(dir, 'cert.pem')]);
      expect(trusted.code, describeResult(trusted)).toBe(2);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('the base URL', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  it('works the same with a trailing /v0', async () => {
    for (const url of [`${server.url}/v0`, `${server.url}/v0/`]) {
      const result = await plan(url, [], { NETFORM_TOKEN: server.token });
      expect(result.code, describeResult(result)).toBe(2);
      expect(result.stdout).toContain(`netform plan for ${server.url} (from`);
    }
  });

  it('--verbose logs method, path, status and time of each request, never the token', async () => {
    const result = await plan(server.url, ['--verbose'], { NETFORM_TOKEN: server.token });
    expect(result.code, describeResult(result)).toBe(2);
    for (const path of ['/v0/users', '/v0/devices', '/v0/rules'])
      expect(result.stderr).toMatch(new RegExp(`^debug: GET ${path} 200 \\d+ ms$`, 'm'));
    expect(result.stderr).not.toContain(server.token);
  });
});
