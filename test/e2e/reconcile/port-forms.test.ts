/**
 * Single ports and the 65535 limit, end to end with the real CLI: the server answers a single
 * port as Firezone 0.7.36 does (`"443"`), an older netform answered `"443 - 443"` (emulated by a
 * proxy that rewrites the answers), and plans keep one key form whichever the server gives and
 * whichever the files or `--target` write. A rule an earlier netform stored with a range reaching
 * 65535 is replaced by the declared 1-65534.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../server/store/index.js';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  type Workspace,
} from '../../helpers/workspace.js';
import { runCli } from '../../helpers/cli.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

// The server's admin is declared: an admin in no file keeps a plan pending (W3.5).
const YAML = `version: 1
users:
  - { email: admin@example.com, role: admin }
  - email: alice@ports.test
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "443" }
      - { action: accept, destination: 10.2.0.0/16, port_type: udp, port_range: 8000-8100 }
rules:
  - { action: drop, destination: 10.3.0.0/16, port_type: tcp, port_range: "22 - 22" }
`;

/**
 * A proxy answering as an earlier netform did: every single port in a rule answer written
 * `"N - N"`. Everything else passes through unchanged.
 */
async function olderNetform(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target);
  const proxy: Server = createServer((req, res) => {
    const forward = request(
      { host: upstream.hostname, port: Number(upstream.port), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          let body = Buffer.concat(chunks);
          if (req.url?.startsWith('/v0/rules') && body.length > 0) {
            const text = body.toString('utf8').replace(/"port_range":"(\d+)"/g, '"port_range":"$1 - $1"');
            body = Buffer.from(text, 'utf8');
          }
          const headers = { ...answer.headers };
          if (headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
          res.writeHead(answer.statusCode ?? 502, headers).end(body);
        });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

describe('single ports', () => {
  let older: Awaited<ReturnType<typeof olderNetform>>;
  beforeAll(async () => {
    older = await olderNetform(server.url);
  });
  afterAll(async () => {
    await older?.close();
  });
  const viaOlder = (args: string[]) =>
    runCli(args, {
      env: { NETFORM_URL: older.url, NETFORM_TOKEN: server.token, NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL },
    });

  it('apply, then the server answers "443" as 0.7.36 does and a second plan finds nothing to change', async () => {
    const file = ws.write('netform.yaml', YAML);
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const ports = (await serverState(server)).rules.map((r) => r.port_range).sort();
    expect(ports).toEqual(['22', '443', '8000 - 8100']);
    const again = await netform(server, ['plan', '-f', file]);
    expect(again.code, describeResult(again)).toBe(0);
    const drift = await netform(server, ['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(0);
  });

  it('a server answering "443 - 443" (an earlier netform) matches the same files: plan and drift find nothing', async () => {
    const file = ws.path('netform.yaml');
    const listed = await fetch(`${older.url}/v0/rules`, { headers: { authorization: `Bearer ${server.token}` } });
    const answered = ((await listed.json()) as { data: { port_range: string }[] }).data.map((r) => r.port_range);
    expect(answered.sort()).toEqual(['22 - 22', '443 - 443', '8000 - 8100']);
    const plan = await viaOlder(['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(0);
    const drift = await viaOlder(['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(0);
  });

  it('--target names a single-port rule in any spelling, against either server', async () => {
    const file = ws.write(
      'netform.yaml',
      YAML.replace(
        'port_range: "443" }',
        'port_range: "443" }\n      - { action: accept, destination: 10.4.0.0/16, port_type: tcp, port_range: "8443" }',
      ),
    );
    for (const [run, ports] of [
      [(args: string[]) => netform(server, args), 'tcp:8443'],
      [viaOlder, 'tcp:8443-8443'],
      [viaOlder, 'tcp:8443 - 8443'],
    ] as const) {
      const res = await run([
        'plan',
        '-f',
        file,
        '--format',
        'json',
        '--target',
        `rule:Alice@Ports.test|accept|10.4.0.0/16|${ports}`,
      ]);
      expect(res.code, describeResult(res)).toBe(2);
      const doc = JSON.parse(res.stdout);
      expect(doc.changes.map((c: { id: string }) => c.id)).toEqual([
        'rule:alice@ports.test|accept|10.4.0.0/16|tcp:8443 - 8443',
      ]);
      expect(doc.warnings.join('\n')).not.toContain('no change is planned');
    }
  });
});

describe('the 65535 limit', () => {
  it('validate refuses a range reaching 65535, saying what to write', async () => {
    const file = ws.write(
      'limit.yaml',
      'version: 1\nrules:\n  - { action: accept, destination: 10.9.0.0/16, port_type: tcp, port_range: 1-65535 }\n',
    );
    const res = await runCli(['validate', '-f', file]);
    expect(res.code, describeResult(res)).toBe(1);
    expect(res.stdout + res.stderr).toContain(
      'limit.yaml:3:77: rules[0].port_range: port is not within valid range: 1-65535 reaches 65535, which Firezone 0.7.36 refuses (its ranges end at 65534); write 1-65534, or a portless rule',
    );
  });

  it('a rule an earlier netform stored with 1-65535 is replaced by the declared 1-65534', async () => {
    const now = '2025-01-01T00:00:00.000000Z';
    const stored = {
      id: randomUUID(),
      action: 'accept' as const,
      destination: '10.8.0.0/16',
      port_type: 'tcp' as const,
      port_range: '1 - 65535',
      user_id: null,
      inserted_at: now,
      updated_at: now,
    };
    const store = await openStore(server.dbPath);
    try {
      await store.transaction((tx) => tx.insertRule(stored));
    } finally {
      await store.close();
    }
    const file = ws.write(
      'limit.yaml',
      'version: 1\nsettings: { manage: { users: [], rules: [10.8.0.0/16] } }\nrules:\n  - { action: accept, destination: 10.8.0.0/16, port_type: tcp, port_range: 1-65534 }\n',
    );
    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stdout).toContain('      port_range: "1 - 65535" -> "1-65534"\n');
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 1 to replace, 0 to delete.');
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const rules = (await serverState(server)).rules.filter((r) => r.destination === '10.8.0.0/16');
    expect(rules.map((r) => r.port_range)).toEqual(['1 - 65534']);
    expect((await netform(server, ['plan', '-f', file])).code).toBe(0);
  });
});
