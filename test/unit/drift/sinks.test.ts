import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reportFromFailure, reportFromPlan, type DriftReport, type DriftStatus } from '../../../src/drift/report.js';
import { describeWebhookUrl, jsonLinesSink, reportFileSink, webhookSink } from '../../../src/drift/sinks.js';
import { PLAN_FORMAT, PLAN_FORMAT_VERSION, type WordedPlan as Plan } from '../../../src/plan/types.js';
import { driftText } from '../../../src/views/drift.js';

function report(status: DriftStatus): DriftReport {
  const timing = { startedAt: 0, finishedAt: 5, skippedTicks: 0 };
  if (status === 'failed') return reportFromFailure('server down', { server: null, sources: [] }, timing);
  const plan: Plan = {
    format: PLAN_FORMAT,
    format_version: PLAN_FORMAT_VERSION,
    created_at: 'x',
    server: 'http://s',
    sources: ['f.yaml'],
    limits: [],
    warnings: [],
    summary: { create: status === 'drift' ? 1 : 0, update: 0, delete: 0, replace: 0, cascade: 0 },
    changes:
      status === 'drift'
        ? [
            {
              id: 'user:a@example.com',
              kind: 'user',
              action: 'create',
              key: 'a@example.com',
              label: 'user a@example.com',
              phase: 0,
              fingerprint: null,
              fields: [],
            },
          ]
        : [],
  };
  return reportFromPlan(plan, timing);
}

interface Received {
  headers: IncomingHttpHeaders;
  body: DriftReport;
  url: string;
}

/** A webhook receiver on port 0 that answers each request with the next planned status (200 when none is left). */
async function receiver(plannedStatuses: number[] = []) {
  const received: Received[] = [];
  let attempts = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (c: string) => (body += c))
      .on('end', () => {
        attempts += 1;
        const status = plannedStatuses.shift() ?? 200;
        if (status === 200) received.push({ headers: req.headers, body: JSON.parse(body), url: req.url ?? '' });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    attempts: () => attempts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netform-drift-sinks-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('report sinks', () => {
  it('writes one JSON line per report', async () => {
    const lines: string[] = [];
    const sink = jsonLinesSink((t) => lines.push(t));
    await sink.deliver(report('clean'));
    await sink.deliver(report('drift'));
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    expect(JSON.parse(lines[1]!).status).toBe('drift');
  });

  it('keeps the latest report in a file, replaced atomically, with no temporary file left', async () => {
    const path = join(dir, 'drift.json');
    const sink = reportFileSink(path);
    await sink.deliver(report('drift'));
    expect(JSON.parse(await readFile(path, 'utf8')).status).toBe('drift');
    await sink.deliver(report('clean'));
    expect(JSON.parse(await readFile(path, 'utf8')).status).toBe('clean');
    expect(await readdir(dir)).toEqual(['drift.json']);
  });

  it('fails clearly when the report file cannot be written', async () => {
    await expect(reportFileSink(join(dir, 'missing', 'drift.json')).deliver(report('clean'))).rejects.toThrow(/ENOENT/);
  });
});

describe('webhook sink', () => {
  it('POSTs the first report and each change of status, not repeats', async () => {
    const hook = await receiver();
    try {
      const sink = webhookSink({ text: driftText, url: `${hook.url}/hooks/T000/B000/secretpath`, backoffMs: 1 });
      for (const s of ['clean', 'clean', 'drift', 'drift', 'failed', 'clean'] as const) await sink.deliver(report(s));
      expect(hook.received.map((r) => r.body.status)).toEqual(['clean', 'drift', 'failed', 'clean']);
      expect(hook.received[0]!.url).toBe('/hooks/T000/B000/secretpath');
      expect(hook.received[0]!.headers['content-type']).toMatch(/application\/json/);
      expect(hook.received[0]!.headers.authorization).toBeUndefined();
    } finally {
      await hook.close();
    }
  });

  it('POSTs when the set of differences changes during open drift, with a text summary', async () => {
    const hook = await receiver();
    try {
      const sink = webhookSink({ text: driftText, url: hook.url, backoffMs: 1 });
      const drifted = (changes: { id: string; label: string; after: number }[]) => ({
        ...report('drift'),
        changes: changes.map((c) => ({
          id: c.id,
          kind: 'device' as const,
          action: 'update' as const,
          key: c.id,
          label: c.label,
          fields: [{ field: 'mtu', before: 1, after: c.after }],
          observed: 'differs' as const,
        })),
      });
      const a = { id: 'device:a/laptop', label: 'device a/laptop', after: 1380 };
      const b = { id: 'device:b/phone', label: 'device b/phone', after: 1280 };
      for (const r of [
        drifted([a]),
        drifted([a]),
        drifted([a, b]),
        drifted([b, a]),
        drifted([{ ...a, after: 1400 }, b]),
        report('clean'),
      ])
        await sink.deliver(r);
      expect(hook.received.map((r) => r.body.changes.length)).toEqual([1, 2, 2, 0]);
      expect(hook.received.map((r) => (r.body as unknown as { text: string }).text)).toEqual([
        'netform drift on http://s: 1 difference from the desired state: `device a/laptop`: `mtu` is `1` on the server, the files say `1380`',
        'netform drift on http://s: 2 differences from the desired state: `device a/laptop`: `mtu` is `1` on the server, the files say `1380`; `device b/phone`: `mtu` is `1` on the server, the files say `1280`',
        'netform drift on http://s: 2 differences from the desired state: `device a/laptop`: `mtu` is `1` on the server, the files say `1400`; `device b/phone`: `mtu` is `1` on the server, the files say `1280`',
        'netform drift on http://s: back to clean: the server matches the desired state',
      ]);
    } finally {
      await hook.close();
    }
  });

  it('POSTs every drifted run with always', async () => {
    const hook = await receiver();
    try {
      const sink = webhookSink({ text: driftText, url: hook.url, always: true, backoffMs: 1 });
      for (const s of ['drift', 'drift', 'clean', 'clean', 'drift'] as const) await sink.deliver(report(s));
      expect(hook.received.map((r) => r.body.status)).toEqual(['drift', 'drift', 'clean', 'drift']);
    } finally {
      await hook.close();
    }
  });

  it('retries on 5xx and 429 with backoff, then delivers', async () => {
    const hook = await receiver([503, 429, 500]);
    const logs: string[] = [];
    try {
      const sink = webhookSink({ text: driftText, url: hook.url, retries: 3, backoffMs: 5, log: (m) => logs.push(m) });
      await sink.deliver(report('drift'));
      expect(hook.attempts()).toBe(4);
      expect(hook.received).toHaveLength(1);
      expect(sink.lastDeliveredStatus()).toBe('drift');
      expect(logs).toHaveLength(3);
      expect(logs[0]).toMatch(/attempt 1 failed \(answered 503\); retrying/);
    } finally {
      await hook.close();
    }
  });

  it('gives up after the retries without leaking the URL path or the token, and tries again on the next run', async () => {
    const hook = await receiver([500, 500, 500]);
    const secretUrl = `${hook.url}/hook/s3cr3t-path`;
    try {
      const sink = webhookSink({
        text: driftText,
        url: secretUrl,
        retries: 2,
        backoffMs: 1,
        secrets: ['nf_api_token_value'],
      });
      const failure = await sink.deliver(report('drift')).then(
        () => null,
        (e: Error) => e,
      );
      expect(failure?.message).toMatch(/POST failed after 3 attempt\(s\): answered 500/);
      expect(failure?.message).not.toContain('s3cr3t');
      expect(sink.name).toBe(`webhook ${hook.url}`);
      expect(sink.lastDeliveredStatus()).toBeNull();
      // Same status again: the change was never delivered, so it is tried again.
      await sink.deliver(report('drift'));
      expect(hook.received.map((r) => r.body.status)).toEqual(['drift']);
    } finally {
      await hook.close();
    }
  });

  it('a 3xx is not a delivery: not followed, not retried, reported, and the report is sent again next time', async () => {
    const hook = await receiver([302, 301]);
    try {
      const sink = webhookSink({ text: driftText, url: hook.url, retries: 3, backoffMs: 1 });
      await expect(sink.deliver(report('drift'))).rejects.toThrow(
        'POST failed after 1 attempt(s): answered 302 (a redirect, which is not followed: give the final URL)',
      );
      expect(hook.attempts()).toBe(1);
      expect(sink.lastDeliveredStatus()).toBeNull();
      // Not counted as delivered: the same report is tried again on the next run.
      await expect(sink.deliver(report('drift'))).rejects.toThrow(/answered 301/);
      await sink.deliver(report('drift'));
      expect(hook.received.map((r) => r.body.status)).toEqual(['drift']);
      expect(sink.lastDeliveredStatus()).toBe('drift');
    } finally {
      await hook.close();
    }
  });

  it('does not retry a 4xx other than 408 and 429', async () => {
    const hook = await receiver([404]);
    try {
      const sink = webhookSink({ text: driftText, url: hook.url, retries: 3, backoffMs: 1 });
      await expect(sink.deliver(report('clean'))).rejects.toThrow(/answered 404/);
      expect(hook.attempts()).toBe(1);
    } finally {
      await hook.close();
    }
  });

  it('bounds the whole delivery when the receiver never answers', async () => {
    const server = createServer(() => {
      /* never answers */
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const sink = webhookSink({
        text: driftText,
        url: `http://127.0.0.1:${port}/x`,
        retries: 5,
        backoffMs: 1,
        attemptTimeoutMs: 10_000,
        totalTimeoutMs: 300,
      });
      const started = Date.now();
      await expect(sink.deliver(report('drift'))).rejects.toThrow(
        /POST failed after \d+ attempt\(s\): no answer within 300 ms/,
      );
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('costs a run at most 5 s by default when the receiver never answers', async () => {
    const server = createServer(() => {
      /* never answers */
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const started = Date.now();
      await expect(
        webhookSink({ text: driftText, url: `http://127.0.0.1:${port}/x` }).deliver(report('drift')),
      ).rejects.toThrow(/no answer within 5000 ms/);
      expect(Date.now() - started).toBeLessThan(6_000);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('shows only the origin of a webhook URL', () => {
    expect(describeWebhookUrl('https://hooks.slack.com/services/T0/B0/XYZ?token=1')).toBe('https://hooks.slack.com');
    expect(describeWebhookUrl('not a url')).toBe('(webhook)');
  });
});
