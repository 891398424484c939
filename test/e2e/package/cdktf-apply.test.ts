/**
 * End to end: the synthesized examples/cdktf stack is planned and applied against a real server,
 * then plans clean, and so does the equivalent YAML of examples/basic. The CLI runs in-process
 * (run(argv, io)); a synthesized stack planned by the built CLI as a process, installed from the
 * packed tarball: e2e/package/install.test.ts; apply -f as a process: the safety net.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const run = promisify(execFile);

let server: TestServer;
let dir: string;
let stackDir: string;
let secrets: Record<string, string>;

function netform(args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, {
    cwd: dir,
    env: {
      NETFORM_URL: server.url,
      NETFORM_TOKEN: server.token,
      NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL,
      ...Object.fromEntries(Object.entries(secrets).map(([name, value]) => [`TF_VAR_${name}`, value])),
      ...extraEnv,
    },
  });
}

function show(result: CliResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netform-cdktf-e2e-'));
  const secret = async (name: string) =>
    (await readFile(join(root, 'examples', 'basic', 'secrets', name), 'utf8')).trim();
  secrets = {
    alice_password: await secret('example-alice.password'),
    bob_password: await secret('example-bob.password'),
    alice_laptop_psk: await secret('example-alice-laptop.psk'),
    carol_laptop_psk: await secret('example-carol-laptop.psk'),
  };
  await run(process.execPath, [join(root, 'examples', 'cdktf', 'main.mjs'), join(dir, 'cdktf.out')], { cwd: dir });
  stackDir = join(dir, 'cdktf.out', 'stacks', 'example-corp');
  server = await startTestServer();
});

afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a synthesized CDKTF stack against a real server', () => {
  it('plans, applies, and then plans no changes; the YAML of the same company plans no changes either', async () => {
    const plan = await netform(['plan', '-f', stackDir]);
    expect(plan.code, show(plan)).toBe(2);
    expect(plan.stdout).toContain('carol@example.com');
    for (const value of Object.values(secrets)) expect(plan.stdout + plan.stderr).not.toContain(value);

    const apply = await netform(['apply', '-f', join(stackDir, 'cdk.tf.json'), '--yes']);
    expect(apply.code, show(apply)).toBe(0);
    for (const value of Object.values(secrets)) expect(apply.stdout + apply.stderr).not.toContain(value);

    const [users, devices, rules] = await Promise.all(
      ['/v0/users', '/v0/devices', '/v0/rules'].map((path) => server.api('GET', path)),
    );
    const userIds = new Map<string, string>(users!.body.data.map((u: any) => [u.email, u.id]));
    expect([...userIds.keys()].sort()).toEqual([
      'admin@example.com',
      'alice@example.com',
      'bob@example.com',
      'carol@example.com',
      'dave@example.com',
      'erin@example.com',
    ]);
    expect(users!.body.data.find((u: any) => u.email === 'bob@example.com').role).toBe('admin');

    const device = (email: string, name: string) =>
      devices!.body.data.find((d: any) => d.user_id === userIds.get(email) && d.name === name);
    expect(devices!.body.data).toHaveLength(6);
    expect(device('alice@example.com', 'laptop')).toMatchObject({
      mtu: 1380,
      use_default_mtu: false,
      allowed_ips: ['10.0.0.0/8'],
      preshared_key: secrets.alice_laptop_psk,
    });
    expect(device('carol@example.com', 'laptop')).toMatchObject({ preshared_key: secrets.carol_laptop_psk });
    expect(device('carol@example.com', 'phone')).toMatchObject({
      persistent_keepalive: 0,
      use_default_persistent_keepalive: false,
    });
    expect(device('dave@example.com', 'desktop')).toMatchObject({ ipv4: '10.3.2.20' });

    const ruleOf = (email: string | null) =>
      rules!.body.data
        .filter((r: any) => r.user_id === (email === null ? null : userIds.get(email)))
        .map((r: any) => `${r.action} ${r.destination}`)
        .sort();
    expect(ruleOf('carol@example.com')).toEqual(['accept 10.1.0.0/16', 'accept 10.1.2.0/24']);
    expect(ruleOf('erin@example.com')).toEqual(['accept 10.1.0.53', 'drop 10.1.0.0/16']);
    expect(ruleOf(null)).toEqual(['accept 10.1.0.0/16', 'drop 10.10.0.0/16', 'drop 10.9.0.0/16']);

    // Nothing to write. The examples do not declare the server's own admin (the token's), an
    // admin in no file: the plan is pending (exit 2, W3.5), and that admin is all that is left.
    for (const path of [stackDir, join(root, 'examples', 'basic', 'netform.yaml')]) {
      const again = await netform(['plan', '-f', path, '--format', 'json']);
      expect(again.code, show(again)).toBe(2);
      const plan = JSON.parse(again.stdout);
      expect(plan.changes).toEqual([]);
      expect(plan.outcome.pending).toEqual([
        expect.objectContaining({ reason: 'undeclared', id: `user:${TEST_ADMIN_EMAIL}` }),
      ]);
    }
  });

  it('refuses a stack with an unresolved reference, naming resource and attribute, and changes nothing', async () => {
    const before = await server.api('GET', '/v0/devices');
    const text = await readFile(join(stackDir, 'cdk.tf.json'), 'utf8');
    const broken = join(dir, 'broken');
    await mkdir(broken);
    const stack = JSON.parse(text);
    stack.resource.firezone_device.bob_example_com_laptop.user_id = '${firezone_user.zoe.id}';
    stack.resource.firezone_device.bob_example_com_laptop.mtu = 1400;
    await writeFile(join(broken, 'cdk.tf.json'), JSON.stringify(stack, null, 2));

    const apply = await netform(['apply', '-f', broken, '--yes']);
    expect(apply.code, show(apply)).toBe(1);
    expect(apply.stderr).toMatch(
      /cdk\.tf\.json:\d+:\d+: firezone_device\.bob_example_com_laptop\.user_id: references firezone_user\.zoe, which this stack does not declare/,
    );
    expect((await server.api('GET', '/v0/devices')).body.data).toEqual(before.body.data);
  });
});
