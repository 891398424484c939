/** `netform drift -f PATH` once: exit 0 clean, 2 drifted, 1 error; the outputs of plan; no writes. */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

let server: TestServer;
let dir: string;
let desired: string;
let deviceId: string;
let presharedKey: string;
let env: Record<string, string>;

beforeAll(async () => {
  [server, dir] = await Promise.all([startTestServer(), mkdtemp(join(tmpdir(), 'netform-drift-once-'))]);
  env = { NETFORM_URL: server.url, NETFORM_TOKEN: server.token };
  const publicKey = randomBytes(32).toString('base64');
  const bob = await server.api('POST', '/v0/users', { user: { email: 'bob@example.com' } });
  const device = await server.api('POST', '/v0/devices', {
    device: { user_id: bob.body.data.id, name: 'phone', public_key: publicKey, use_default_mtu: false, mtu: 1380 },
  });
  expect(device.status).toBe(201);
  deviceId = device.body.data.id;
  presharedKey = device.body.data.preshared_key;
  desired = join(dir, 'netform.yaml');
  await writeFile(
    desired,
    [
      'version: 1',
      'users:',
      // The server's admin is declared: an admin in no file keeps drift pending (W3.5).
      '  - { email: admin@example.com, role: admin }',
      '  - email: bob@example.com',
      '    devices:',
      `      - { name: phone, public_key: "${publicKey}", mtu: 1380 }`,
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await Promise.all([server.stop(), rm(dir, { recursive: true, force: true })]);
});

describe('netform drift once', () => {
  it('exits 0 with the plan output when the server matches', async () => {
    const result = await runCli(['drift', '-f', desired], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/No changes: the server matches the desired state\./);
  });

  it('exits 2 on drift, in text, json and markdown, and writes nothing', async () => {
    expect((await server.api('PATCH', `/v0/devices/${deviceId}`, { device: { mtu: 1420 } })).status).toBe(200);
    try {
      const text = await runCli(['drift', '-f', desired], { env });
      expect(text.code).toBe(2);
      expect(text.stdout).toMatch(/~ .*bob@example\.com\/phone/);
      expect(text.stdout).toMatch(/mtu: 1420 -> 1380/);

      const json = await runCli(['drift', '-f', desired, '--format', 'json'], { env });
      expect(json.code).toBe(2);
      const plan = JSON.parse(json.stdout);
      expect(plan).toMatchObject({ format: 'netform.plan', summary: { update: 1 } });
      expect(plan.changes[0].fields).toContainEqual(
        expect.objectContaining({ field: 'mtu', before: 1420, after: 1380 }),
      );

      const markdown = await runCli(['drift', '-f', desired, '--format', 'markdown'], { env });
      expect(markdown.code).toBe(2);
      expect(markdown.stdout).toContain('<!-- netform-drift -->');

      for (const r of [text, json, markdown]) {
        expect(r.stdout + r.stderr).not.toContain(server.token);
        expect(r.stdout + r.stderr).not.toContain(presharedKey);
      }
      // Drift only reports: the hand change is still there.
      expect((await server.api('GET', `/v0/devices/${deviceId}`)).body.data.mtu).toBe(1420);
    } finally {
      await server.api('PATCH', `/v0/devices/${deviceId}`, { device: { mtu: 1380 } });
    }
  });

  it('exits 1 with a clear message on errors', async () => {
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'version: 1\nusers:\n  - email: bob@example.com\n    role: superuser\n');
    const badFile = await runCli(['drift', '-f', broken], { env });
    expect(badFile.code).toBe(1);
    expect(badFile.stderr).toMatch(/broken\.yaml:4:\d+/);
    expect(badFile.stdout).toBe('');

    // A port nothing listens on: taken from the OS, then released.
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const down = await runCli(['drift', '-f', desired, '--timeout', '1'], {
      env: { ...env, NETFORM_URL: `http://127.0.0.1:${closedPort}` },
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /^error: .*connection refused by http:\/\/127\.0\.0\.1:\d+: nothing is listening there/m,
    );
    expect(down.stderr).not.toMatch(/\n\s+at /);

    const badToken = await runCli(['drift', '-f', desired], { env: { ...env, NETFORM_TOKEN: 'nf_not-a-real-token' } });
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/401/);
    expect(badToken.stderr).not.toContain('nf_not-a-real-token');

    const scheduleOnly = await runCli(['drift', '-f', desired, '--webhook', 'http://127.0.0.1:9/x'], { env });
    expect(scheduleOnly.code).toBe(1);
    expect(scheduleOnly.stderr).toMatch(/--webhook needs --every/);
  });
});
