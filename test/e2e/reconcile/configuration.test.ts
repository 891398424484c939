/**
 * `configuration:` in the desired state against a real server process: planned as
 * `~ configuration` with field-level changes, applied (a device created in the same apply gets
 * the new defaults), drift-checked (a hand change through the API shows), exported and planned
 * back with no change; and against a server without /v0/configuration, through a recording
 * proxy: a plan that declares it fails clearly, one that does not never asks for it.
 */
import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { describeResult, netform, useServerAndWorkspace, wgKey, type Workspace } from '../../helpers/workspace.js';

const LAPTOP = wgKey();

const DESIRED = `version: 1
configuration:
  default_client_mtu: 1380
  default_client_dns: [10.0.0.53]
  default_client_allowed_ips: [10.0.0.0/8]
  default_client_endpoint: vpn.corp.test:51820
  default_client_persistent_keepalive: 15
  allow_unprivileged_device_management: false
  allow_unprivileged_device_configuration: false
users:
  - { email: admin@example.com, role: admin }
  - email: ann@corp.test
    devices:
      - { name: laptop, public_key: "${LAPTOP}" }
`;

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

async function liveConfiguration(): Promise<Record<string, any>> {
  return (await server.api('GET', '/v0/configuration')).body.data;
}

describe('configuration: planned, applied, drifted, exported', () => {
  it('plan shows `~ configuration` first, with one line per managed field, and no other field', async () => {
    const file = ws.write('desired.yaml', DESIRED);
    const res = await netform(server, ['plan', '-f', file]);
    expect(res.code, describeResult(res)).toBe(2);
    const lines = res.stdout.split('\n').map((l) => l.trim());
    const head = lines.indexOf('~ configuration');
    expect(head, res.stdout).toBeGreaterThan(0);
    expect(lines.findIndex((l) => l.startsWith('+ user ann@corp.test'))).toBeGreaterThan(head);
    expect(lines).toContain('default_client_mtu: 1280 -> 1380');
    expect(lines).toContain('default_client_dns: ["1.1.1.1","1.0.0.1"] -> ["10.0.0.53"]');
    expect(lines).toContain('allow_unprivileged_device_management: true -> false');
    expect(res.stdout).not.toContain('local_auth_enabled');
    expect(res.stdout).toMatch(/Plan: 2 to create, 1 to update/);
  });

  it('plan --format json: one update of kind configuration holding exactly the fields to send', async () => {
    const res = await netform(server, ['plan', '-f', ws.path('desired.yaml'), '--format', 'json']);
    const change = JSON.parse(res.stdout).changes.find((c: any) => c.kind === 'configuration');
    expect(change).toMatchObject({ id: 'configuration', action: 'update', label: 'configuration' });
    expect(Object.keys(change.body).sort()).toEqual([
      'allow_unprivileged_device_configuration',
      'allow_unprivileged_device_management',
      'default_client_allowed_ips',
      'default_client_dns',
      'default_client_endpoint',
      'default_client_mtu',
      'default_client_persistent_keepalive',
    ]);
  });

  it('apply writes it before the devices: the device created in the same apply shows the new defaults; then nothing to do', async () => {
    const before = await liveConfiguration();
    const res = await netform(server, ['apply', '-f', ws.path('desired.yaml'), '--yes']);
    expect(res.code, describeResult(res)).toBe(0);
    const after = await liveConfiguration();
    expect(after).toMatchObject({
      default_client_mtu: 1380,
      default_client_dns: ['10.0.0.53'],
      default_client_allowed_ips: ['10.0.0.0/8'],
      default_client_endpoint: 'vpn.corp.test:51820',
      default_client_persistent_keepalive: 15,
      allow_unprivileged_device_management: false,
      allow_unprivileged_device_configuration: false,
      local_auth_enabled: before.local_auth_enabled,
    });
    const device = (await server.api('GET', '/v0/devices')).body.data.find((d: any) => d.name === 'laptop');
    expect(device).toMatchObject({
      mtu: 1380,
      dns: ['10.0.0.53'],
      allowed_ips: ['10.0.0.0/8'],
      endpoint: 'vpn.corp.test:51820',
      persistent_keepalive: 15,
    });
    const again = await netform(server, ['plan', '-f', ws.path('desired.yaml')]);
    expect(again.code, describeResult(again)).toBe(0);
  });

  it('drift: a hand change of a managed field through the API shows; of an unmanaged one, not', async () => {
    const unmanaged = await server.api('PATCH', '/v0/configuration', {
      configuration: { local_auth_enabled: false, vpn_session_duration: 3600 },
    });
    expect(unmanaged.status).toBe(200);
    const clean = await netform(server, ['drift', '-f', ws.path('desired.yaml')]);
    expect(clean.code, describeResult(clean)).toBe(0);

    const hand = await server.api('PATCH', '/v0/configuration', {
      configuration: { default_client_mtu: 1420, default_client_dns: ['10.0.0.53', '9.9.9.9'] },
    });
    expect(hand.status).toBe(200);
    const drift = await netform(server, ['drift', '-f', ws.path('desired.yaml')]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain('~ configuration');
    expect(drift.stdout).toContain('default_client_mtu: 1420 -> 1380');
    expect(drift.stdout).toContain('default_client_dns: ["10.0.0.53","9.9.9.9"] -> ["10.0.0.53"]');

    const fixed = await netform(server, ['apply', '-f', ws.path('desired.yaml'), '--yes']);
    expect(fixed.code, describeResult(fixed)).toBe(0);
    expect(await liveConfiguration()).toMatchObject({
      default_client_mtu: 1380,
      default_client_dns: ['10.0.0.53'],
      local_auth_enabled: false,
    });
  });

  it('a saved plan whose configuration was changed by hand since is refused as stale (exit 4), changing nothing', async () => {
    const file = ws.write(
      'saved/desired.yaml',
      DESIRED.replace('default_client_mtu: 1380', 'default_client_mtu: 1300'),
    );
    const planned = await netform(server, ['plan', '-f', file, '-o', ws.path('saved/plan.json')]);
    expect(planned.code, describeResult(planned)).toBe(2);
    await server.api('PATCH', '/v0/configuration', { configuration: { default_client_persistent_keepalive: 30 } });
    const applied = await netform(server, ['apply', ws.path('saved/plan.json'), '--yes']);
    expect(applied.code, describeResult(applied)).toBe(4);
    expect(applied.stderr).toContain('configuration: changed since the plan was made');
    expect((await liveConfiguration()).default_client_mtu).toBe(1380);
    await server.api('PATCH', '/v0/configuration', { configuration: { default_client_persistent_keepalive: 15 } });
  });

  it('export writes `configuration:`, and planning the export back shows no change', async () => {
    const out = ws.path('exported');
    mkdirSync(out);
    const res = await netform(server, ['export', '-o', out]);
    expect(res.code, describeResult(res)).toBe(0);
    const text = readFileSync(join(out, 'netform.yaml'), 'utf8');
    expect(text).toMatch(/^configuration:\n/m);
    expect(text).toContain('default_client_mtu: 1380');
    expect(text).toContain('allow_unprivileged_device_management: false');
    // A sign-in field off upstream's default is written too; providers and the logo never are.
    expect(text).toContain('local_auth_enabled: false');
    expect(text).not.toContain('openid_connect_providers');
    const plan = await netform(server, ['plan', '-f', out]);
    expect(plan.code, describeResult(plan)).toBe(0);
    // The round trip holds: a hand change after the export is drift against the exported files.
    await server.api('PATCH', '/v0/configuration', {
      configuration: { allow_unprivileged_device_configuration: true },
    });
    const drift = await netform(server, ['drift', '-f', out]);
    expect(drift.code, describeResult(drift)).toBe(2);
    expect(drift.stdout).toContain('allow_unprivileged_device_configuration: true -> false');
  });

  it('export --split writes it in configuration.yaml', async () => {
    const out = ws.path('split');
    mkdirSync(out);
    const res = await netform(server, ['export', '-o', out, '--split']);
    expect(res.code, describeResult(res)).toBe(0);
    expect(readFileSync(join(out, 'configuration.yaml'), 'utf8')).toMatch(
      /^configuration:\n {2}default_client_allowed_ips:/m,
    );
  });

  it("validate checks the values offline with the server's rules, at file:line:column", async () => {
    const file = ws.write(
      'bad.yaml',
      'version: 1\nconfiguration:\n  default_client_mtu: 100\n  default_client_dns: [1.1.1.1, 1.1.1.1]\n  default_client_endpoint: "no such:host"\n',
    );
    const res = await runCli(['validate', '-f', file]);
    expect(res.code, describeResult(res)).toBe(1);
    expect(res.stdout + res.stderr).toContain(
      'bad.yaml:3:23: configuration.default_client_mtu: must be greater than or equal to 576',
    );
    expect(res.stdout + res.stderr).toContain('configuration.default_client_dns: should not contain duplicates');
    expect(res.stdout + res.stderr).toMatch(/bad\.yaml:5:\d+: configuration\.default_client_endpoint: is invalid/);
  });
});

/** An HTTP proxy in front of the test server that records every path and answers 404 for /v0/configuration. */
async function withoutConfiguration(
  target: string,
): Promise<{ url: string; paths: string[]; close: () => Promise<void> }> {
  const upstream = new URL(target);
  const paths: string[] = [];
  const proxy: Server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith('/v0/configuration')) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"not_found"}');
      return;
    }
    const forward = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    paths,
    close: () => new Promise((resolve) => proxy.close(() => resolve())),
  };
}

describe('a server without /v0/configuration', () => {
  let proxy: Awaited<ReturnType<typeof withoutConfiguration>>;
  beforeAll(async () => {
    proxy = await withoutConfiguration(server.url);
  });
  afterAll(async () => {
    await proxy?.close();
  });
  const viaProxy = (args: string[]) =>
    runCli(args, {
      env: { NETFORM_URL: proxy.url, NETFORM_TOKEN: server.token, NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL },
    });

  it('a plan that does not declare configuration never asks for it', async () => {
    const file = ws.write(
      'plain.yaml',
      `version: 1\nusers:\n  - { email: admin@example.com, role: admin }\n  - email: ann@corp.test\n`,
    );
    proxy.paths.length = 0;
    const res = await viaProxy(['plan', '-f', file]);
    expect(res.code, describeResult(res)).toBe(0);
    expect(proxy.paths.length).toBeGreaterThan(0);
    expect(proxy.paths.filter((p) => p.includes('configuration'))).toEqual([]);
    const drift = await viaProxy(['drift', '-f', file]);
    expect(drift.code, describeResult(drift)).toBe(0);
    expect(proxy.paths.filter((p) => p.includes('configuration'))).toEqual([]);
  });

  it('a plan that declares it fails with a clear message and changes nothing', async () => {
    const before = await liveConfiguration();
    const res = await viaProxy(['apply', '-f', ws.path('desired.yaml'), '--yes']);
    expect(res.code, describeResult(res)).toBe(1);
    expect(res.stderr).toContain('this server has no /v0/configuration');
    expect(res.stderr).toContain('remove `configuration:`');
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(proxy.paths.filter((p) => !p.startsWith('GET '))).toEqual([]);
    expect(await liveConfiguration()).toEqual(before);
  });

  it('export still works, without a configuration section', async () => {
    const res = await viaProxy(['export']);
    expect(res.code, describeResult(res)).toBe(0);
    expect(res.stdout).not.toMatch(/^configuration:/m);
  });
});
