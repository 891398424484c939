/**
 * HTTPS: `netform serve --tls-cert --tls-key` (or NETFORM_TLS_CERT/KEY) with a certificate made
 * here by a throwaway CA (the `openssl` CLI), and netform's own client trusting that CA through
 * `--ca-file`. The server is a real process (TLS is its subject); the client commands and the
 * refused starts run in-process through run(argv, io): the same code without a process each. The
 * bin's path of a refused `serve` (exit 1, one line, no stack) stays covered by process.test.ts
 * ("reads NETFORM_DB, ... refuses a busy port").
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startServerProcess, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';

let dir: string;
let ca: string;
let cert: string;
let key: string;
let fifo: string;
let huge: string;

/** A CA, and a certificate it signs for 127.0.0.1 and localhost (P-256 keys: RSA's take openssl a second). */
function makeCertificates(folder: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: folder, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=netform test CA',
  );
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(join(folder, 'san.ext'), 'subjectAltName = IP:127.0.0.1, DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-tls-'));
  makeCertificates(dir);
  ca = join(dir, 'ca.pem');
  cert = join(dir, 'server.pem');
  key = join(dir, 'server.key');
  fifo = join(dir, 'key.fifo');
  execFileSync('mkfifo', [fifo]);
  huge = join(dir, 'huge.pem');
  writeFileSync(huge, `${readFileSync(cert, 'utf8')}${'#'.repeat(1024 * 1024)}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const started: TestServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

/** One GET over HTTPS trusting only `caPem`; resolves with the status or rejects with the TLS error. */
function httpsGet(url: string, caPem: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: caPem }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('TLS', () => {
  it('serves HTTPS; netform plan works against it with --ca-file and refuses the certificate without it', async () => {
    const server = await startServerProcess({ args: ['--tls-cert', cert, '--tls-key', key] });
    started.push(server);
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    // A key only its owner reads (openssl writes 0600): no warning.
    expect(statSync(key).mode & 0o077).toBe(0);
    expect(server.stderr()).not.toContain('warning');
    expect(await httpsGet(`${server.url}/healthz`, readFileSync(ca, 'utf8'))).toBe(200);
    await expect(httpsGet(`${server.url}/healthz`, undefined)).rejects.toThrow(
      /unable to verify|self[- ]signed|local issuer/i,
    );

    const desired = join(dir, 'desired.yaml');
    // The server's admin is declared too: an undeclared admin would keep the plan pending (W3.5).
    writeFileSync(
      desired,
      `version: 1\nusers:\n  - email: tls@example.com\n  - { email: ${TEST_ADMIN_EMAIL}, role: admin }\n`,
    );
    const env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
    const applied = await runCli(['apply', '-f', desired, '--yes', '--ca-file', ca], { env });
    expect(applied.code, applied.stderr).toBe(0);
    const planned = await runCli(['plan', '-f', desired, '--ca-file', ca], { env });
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);

    const untrusted = await runCli(['plan', '-f', desired], { env });
    expect(untrusted.code).toBe(1);
    // The client names the TLS failure, the URL, its code, and the way out.
    expect(untrusted.stderr).toMatch(
      /TLS failure talking to https:\/\/127\.0\.0\.1:\d+.*\((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|DEPTH_ZERO|UNABLE_TO_GET_ISSUER)/,
    );
    expect(untrusted.stderr).toContain('--ca-file');
    expect(untrusted.stderr).not.toContain(server.token);
  });

  it('warns at start when the key is readable by every user of the machine (and still serves)', async () => {
    const open = join(dir, 'open.key');
    copyFileSync(key, open);
    chmodSync(open, 0o644);
    const server = await startServerProcess({ args: ['--tls-cert', cert, '--tls-key', open] });
    started.push(server);
    await server.waitForStderr('warning: the TLS key');
    expect(server.stderr()).toContain(
      `warning: the TLS key ${open} is readable by every user of this machine (mode 0644); ` +
        'make it readable by the server only (chmod 600, or 640 with a group of its own)\n',
    );
    expect(server.stderr()).not.toMatch(/BEGIN|PRIVATE KEY/);
    expect(await httpsGet(`${server.url}/healthz`, readFileSync(ca, 'utf8'))).toBe(200);
  });

  it('reads the certificate and key from NETFORM_TLS_CERT and NETFORM_TLS_KEY', async () => {
    const server = await startServerProcess({ env: { NETFORM_TLS_CERT: cert, NETFORM_TLS_KEY: key } });
    started.push(server);
    expect(server.url).toMatch(/^https:/);
    const listed = await runCli(['export', '--ca-file', ca], {
      env: { NETFORM_URL: server.url, NETFORM_TOKEN: server.token },
    });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('admin@example.com');
  });

  it.each([
    [['--tls-cert', 'CERT'], '--tls-cert and --tls-key (NETFORM_TLS_CERT, NETFORM_TLS_KEY) go together'],
    [['--tls-cert', 'CERT', '--tls-key', 'MISSING'], '--tls-key: cannot read'],
    [['--tls-cert', '/dev/zero', '--tls-key', 'KEY'], '--tls-cert: /dev/zero is not a regular file (it is a device)'],
    [['--tls-cert', 'CERT', '--tls-key', 'FIFO'], 'is not a regular file (it is a FIFO)'],
    [['--tls-cert', 'HUGE', '--tls-key', 'KEY'], 'is larger than 1 MiB, the limit for a PEM file'],
    [['--tls-cert', 'CA_KEY', '--tls-key', 'KEY'], 'is not usable'],
    [['--tls-cert', 'CA', '--tls-key', 'KEY'], 'is not usable'],
  ])('refuses %j with one clear line and no key material', async (args, message) => {
    const files: Record<string, string> = {
      CERT: cert,
      KEY: key,
      CA: ca,
      CA_KEY: join(dir, 'ca.key'),
      MISSING: join(dir, 'missing.pem'),
      FIFO: fifo,
      HUGE: huge,
    };
    const db = join(dir, `refused-${Math.random().toString(36).slice(2)}.db`);
    const res = await runCli(['serve', '--port', '0', '--db', db, ...args.map((a) => files[a] ?? a)]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(message);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).not.toMatch(/BEGIN|PRIVATE KEY|\n\s+at /);
  });
});
