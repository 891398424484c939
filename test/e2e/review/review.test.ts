/**
 * `netform review` end to end on SQLite (test/helpers/review-scenario.ts; PostgreSQL runs the same in
 * test/integration/postgres/review.test.ts), and with --embedded.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { parseCsv } from '../../helpers/csv.js';
import { reviewFixture, runReviewScenario, type ReviewFixture } from '../../helpers/review-scenario.js';

describe('netform review (SQLite)', () => {
  let fixture: ReviewFixture;
  beforeAll(async () => {
    fixture = await reviewFixture();
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  it('reports users, reach and findings; telemetry "unknown" until the server records it, then "never"', async () => {
    await runReviewScenario(fixture, parseCsv);
  }, 180_000); // about ten runs of the CLI, each with its own Node start

  it('-o to a FIFO (or a device such as /dev/null) writes into it and leaves it in place', async () => {
    const fifo = join(fixture.dir, 'review.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    let read = '';
    const reader = new Promise<void>((resolve, reject) => {
      const stream = createReadStream(fifo, { encoding: 'utf8' });
      stream.on('data', (chunk) => (read += chunk));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    const review = await runCli(['review', '-o', fifo], { env: fixture.env });
    await reader;
    expect(review.code, review.stderr).toBe(0);
    expect(read.startsWith('# Access review')).toBe(true);
    // Not replaced by a regular file (renaming over /dev/null as root would replace the device).
    expect(statSync(fifo).isFIFO()).toBe(true);
  });
});

/**
 * In front of netform's server, a proxy that answers `GET /v0/openapi.json` with 404 as a Firezone
 * 0.7 server does (its API has no such route) and forwards everything else: to the client, a
 * server that is not netform's own.
 */
async function firezoneLike(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    if (req.url === '/v0/openapi.json') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    const forward = request(
      { host: upstream.hostname, port: Number(upstream.port), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('netform review against a server that is not netform’s own', () => {
  let fixture: ReviewFixture;
  beforeAll(async () => {
    fixture = await reviewFixture();
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  it('reads null telemetry as "never" there, even when no row has a value', async () => {
    const proxy = await firezoneLike(fixture.server.url);
    try {
      const review = await runCli(['review', '--format', 'json'], { env: { ...fixture.env, NETFORM_URL: proxy.url } });
      expect(review.code).toBe(0);
      const report = JSON.parse(review.stdout);
      expect(report.telemetry).toEqual({ handshakes: 'recorded', sign_ins: 'recorded' });
      expect(report.findings.never_signed_in).toHaveLength(4);
      // The devices are new: never connected, but not older than the period.
      expect(report.findings.stale_device).toEqual([]);
      expect(
        report.users.flatMap((u: { devices: { handshake: string }[] }) => u.devices.map((d) => d.handshake)),
      ).toEqual(['never', 'never', 'never']);
      // The same server without the proxy: netform's own, so "unknown".
      const direct = JSON.parse((await runCli(['review', '--format', 'json'], { env: fixture.env })).stdout);
      expect(direct.telemetry).toEqual({ handshakes: 'not recorded', sign_ins: 'not recorded' });
    } finally {
      await proxy.close();
    }
  });
});

describe('netform completion', () => {
  it('offers review and its options', async () => {
    const script = await runCli(['completion', 'bash']);
    expect(script.code).toBe(0);
    expect(script.stdout).toMatch(/\breview\b/);
    expect(script.stdout).toContain('--stale-days');
  });
});

describe('netform review --embedded', () => {
  it('reads the bundled server in-process: telemetry is "unknown" there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netform-review-embedded-'));
    try {
      const applied = await runCli(['apply', '--embedded', '-f', join(process.cwd(), 'examples/basic'), '--yes'], {
        cwd: dir,
      });
      expect(applied.code).toBe(0);
      const review = await runCli(['review', '--embedded', '--format', 'json'], { cwd: dir });
      expect(review.code).toBe(0);
      const report = JSON.parse(review.stdout);
      expect(report.telemetry).toEqual({ handshakes: 'not recorded', sign_ins: 'not recorded' });
      expect(report.users[0].role).toBe('admin');
      expect(
        report.users.flatMap((u: { devices: { handshake: string }[] }) => u.devices.map((d) => d.handshake)),
      ).toContain('unknown');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
