/**
 * Every round trip closes (W3.5): a FirezoneStack given `configuration` (with users, devices and
 * rules) passes `validate`, is applied, and then plans clean, against a real server process
 * (`--url`) and with `--embedded`; the export of the result, `configuration:` included, plans
 * clean in both modes too. Build first (`npm test` does).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'cdktf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FirezoneStack } from '../../../src/cdktf/index.js';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { describeResult, wgKey, workspace, type Workspace } from '../../helpers/workspace.js';

const LAPTOP = wgKey();
const PHONE = wgKey();
const BOB_LAPTOP = wgKey();
const PSK = wgKey();
const PASSWORD = 'correct horse battery staple';

let ws: Workspace;
let server: TestServer;
let stack: string;

/** A stack of two users, three devices, user and global rules, and five configuration fields. */
function synthesize(outdir: string): string {
  const app = new App({ outdir });
  new FirezoneStack(app, 'corp', {
    settings: { prune: true, manage: { users: ['*@corp.example'], rules: ['10.0.0.0/8'] } },
    configuration: {
      defaultClientMtu: 1380,
      defaultClientDns: ['10.0.0.53'],
      defaultClientPersistentKeepalive: 30,
      defaultClientAllowedIps: ['10.0.0.0/8'],
      allowUnprivilegedDeviceManagement: false,
    },
    users: [
      {
        email: 'alice@corp.example',
        role: 'admin',
        password: { variable: 'alice_password' },
        devices: [
          {
            name: 'laptop',
            publicKey: LAPTOP,
            presharedKey: { variable: 'alice_laptop_psk' },
            allowedIps: ['10.0.0.0/8', '192.168.0.0/16'],
            mtu: 1400,
          },
          { name: 'phone', publicKey: PHONE },
        ],
        rules: [{ action: 'accept', destination: '10.1.0.0/16', portType: 'tcp', portRange: '443' }],
      },
      {
        email: 'bob@corp.example',
        devices: [{ name: 'laptop', publicKey: BOB_LAPTOP, endpoint: 'vpn.corp.example:51820' }],
        rules: [{ action: 'accept', destination: '10.2.0.0/16' }],
      },
    ],
    rules: [{ action: 'drop', destination: '10.9.0.0/16' }],
  });
  app.synth();
  return join(outdir, 'stacks', 'corp');
}

const SECRETS = { TF_VAR_alice_password: PASSWORD, TF_VAR_alice_laptop_psk: PSK };
const NO_SERVER = { NETFORM_URL: undefined, NETFORM_TOKEN: undefined, NETFORM_TOKEN_USER: undefined };

function viaUrl(args: string[]): Promise<CliResult> {
  return runCli(args, {
    cwd: ws.dir,
    env: {
      NETFORM_URL: server.url,
      NETFORM_TOKEN: server.token,
      NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL,
      ...SECRETS,
    },
  });
}

function embedded(args: string[]): Promise<CliResult> {
  return runCli(args, { cwd: ws.dir, env: { ...NO_SERVER, ...SECRETS } });
}

function expectClean(result: CliResult): void {
  expect(result.code, describeResult(result)).toBe(0);
  expect(result.stdout).toContain('No changes: the server matches the desired state.');
}

function expectNoSecrets(result: CliResult): void {
  for (const secret of [PASSWORD, PSK]) expect(result.stdout + result.stderr).not.toContain(secret);
}

beforeAll(async () => {
  ws = workspace();
  stack = synthesize(ws.path('cdktf.out'));
  server = await startTestServer();
});

afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

describe('a FirezoneStack with configuration, against a real server process (--url)', () => {
  it('validates, applies what it planned, then plans clean; its export (configuration: included) plans clean', async () => {
    const valid = await viaUrl(['validate', '-f', stack]);
    expect(valid.code, describeResult(valid)).toBe(0);
    expect(valid.stdout).toMatch(/is valid: 2 users, 3 devices, 3 rules/);

    const planned = await viaUrl(['plan', '-f', stack, '--format', 'json']);
    expect(planned.code, describeResult(planned)).toBe(2);
    const plan = JSON.parse(planned.stdout);
    const configuration = plan.changes.find((c: any) => c.kind === 'configuration');
    expect(Object.fromEntries(configuration.fields.map((f: any) => [f.field, f.after]))).toEqual({
      default_client_mtu: 1380,
      default_client_dns: ['10.0.0.53'],
      default_client_persistent_keepalive: 30,
      default_client_allowed_ips: ['10.0.0.0/8'],
      allow_unprivileged_device_management: false,
    });
    expect(plan.changes.filter((c: any) => c.action === 'create').map((c: any) => c.id)).toHaveLength(8);

    const applied = await viaUrl(['apply', '-f', stack, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    expectNoSecrets(applied);

    const live = (await server.api('GET', '/v0/configuration')).body.data;
    expect(live).toMatchObject({
      default_client_mtu: 1380,
      default_client_dns: ['10.0.0.53'],
      default_client_persistent_keepalive: 30,
      default_client_allowed_ips: ['10.0.0.0/8'],
      allow_unprivileged_device_management: false,
    });
    const devices = (await server.api('GET', '/v0/devices')).body.data;
    const laptop = devices.find((d: any) => d.public_key === LAPTOP);
    expect(laptop).toMatchObject({ mtu: 1400, use_default_mtu: false, preshared_key: PSK });
    // The phone follows the new defaults: created after the configuration in the same apply.
    expect(devices.find((d: any) => d.public_key === PHONE)).toMatchObject({
      use_default_mtu: true,
      mtu: 1380,
      use_default_dns: true,
      dns: ['10.0.0.53'],
    });

    expectClean(await viaUrl(['plan', '-f', stack]));
    expectClean(await viaUrl(['drift', '-f', stack]));

    const exported = await viaUrl(['export', '-o', 'url-export']);
    expect(exported.code, describeResult(exported)).toBe(0);
    expect(readFileSync(ws.path('url-export/netform.yaml'), 'utf8')).toMatch(
      /^configuration:\n(?: {2}.*\n)*? {2}default_client_mtu: 1380$/m,
    );
    expectClean(await viaUrl(['plan', '-f', 'url-export']));
  });
});

describe('the same FirezoneStack with --embedded', () => {
  it('validates, applies, then plans clean; its export (configuration: included) plans clean', async () => {
    const db = 'embedded/e.db';
    const valid = await embedded(['validate', '-f', stack]);
    expect(valid.code, describeResult(valid)).toBe(0);
    const applied = await embedded(['apply', '--embedded', db, '-f', stack, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stdout).toContain('updated configuration');
    expectNoSecrets(applied);

    expectClean(await embedded(['plan', '--embedded', db, '-f', stack]));

    const exported = await embedded(['export', '--embedded', db, '-o', 'embedded-export']);
    expect(exported.code, describeResult(exported)).toBe(0);
    const text = readFileSync(ws.path('embedded-export/netform.yaml'), 'utf8');
    expect(text).toMatch(/^configuration:\n(?: {2}.*\n)*? {2}default_client_mtu: 1380$/m);
    expect(text).toMatch(/^ {2}default_client_dns: \[ 10\.0\.0\.53 \]$/m);
    expect(text).toContain('mtu: 1400');
    expectClean(await embedded(['plan', '--embedded', db, '-f', 'embedded-export']));

    // The configuration is compared, not skipped: a change of it in the stack is planned.
    const edited = readFileSync(join(stack, 'cdk.tf.json'), 'utf8').replace(
      '"default_client_mtu": 1380',
      '"default_client_mtu": 1420',
    );
    ws.write('cdktf.edited/cdk.tf.json', edited);
    const replanned = await embedded(['plan', '--embedded', db, '-f', 'cdktf.edited', '--format', 'json']);
    expect(replanned.code, describeResult(replanned)).toBe(2);
    expect(JSON.parse(replanned.stdout).changes).toEqual([
      expect.objectContaining({
        kind: 'configuration',
        action: 'update',
        fields: [expect.objectContaining({ field: 'default_client_mtu', before: 1380, after: 1420 })],
      }),
    ]);
  });
});
