/** FirezoneStack: resource names, references, secrets only through sensitive variables, settings. */
import { App, TerraformVariable, Testing } from 'cdktf';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  Device,
  FirezoneProvider,
  FirezoneStack,
  Rule,
  terraformName,
  User,
  type FirezoneStackConfig,
  type SecretVariable,
} from '../../../src/cdktf/index.js';
import { loadDesiredState } from '../../../src/desired/index.js';

const KEY_A = Buffer.alloc(32, 1).toString('base64');
const KEY_B = Buffer.alloc(32, 2).toString('base64');

function synth(config: FirezoneStackConfig): any {
  const stack = new FirezoneStack(Testing.app(), 'test', config);
  return JSON.parse(Testing.synth(stack));
}

describe('FirezoneStack', () => {
  it('declares the provider, users, their devices and rules, and global rules, wired by reference', () => {
    const stack = synth({
      users: [
        {
          email: 'Alice@Example.com',
          role: 'admin',
          password: { variable: 'alice_password' },
          devices: [
            {
              name: 'laptop',
              publicKey: KEY_A,
              presharedKey: { variable: 'alice_laptop_psk' },
              mtu: 1380,
              useDefaultDns: false,
              dns: ['10.0.0.53'],
            },
          ],
          rules: [{ action: 'accept', destination: '10.1.0.0/16', portType: 'tcp', portRange: '443' }],
        },
        { email: 'bob@example.com', devices: [{ name: 'My Phone', publicKey: KEY_B }] },
      ],
      rules: [{ action: 'drop', destination: '10.9.0.0/16' }],
    });
    expect(stack.provider.firezone).toEqual([{}]);
    expect(stack.resource.firezone_user).toEqual({
      alice_example_com: { email: 'Alice@Example.com', role: 'admin', password: '${var.alice_password}' },
      bob_example_com: { email: 'bob@example.com' },
    });
    expect(stack.resource.firezone_device).toEqual({
      alice_example_com_laptop: {
        user_id: '${firezone_user.alice_example_com.id}',
        name: 'laptop',
        public_key: KEY_A,
        preshared_key: '${var.alice_laptop_psk}',
        mtu: 1380,
        dns: ['10.0.0.53'],
        use_default_dns: false,
      },
      bob_example_com_my_phone: { user_id: '${firezone_user.bob_example_com.id}', name: 'My Phone', public_key: KEY_B },
    });
    expect(stack.resource.firezone_rule).toEqual({
      alice_example_com_accept_10_1_0_0_16_tcp_443: {
        user_id: '${firezone_user.alice_example_com.id}',
        action: 'accept',
        destination: '10.1.0.0/16',
        port_type: 'tcp',
        port_range: '443',
      },
      global_drop_10_9_0_0_16: { action: 'drop', destination: '10.9.0.0/16' },
    });
    expect(stack.variable.alice_password).toEqual({
      type: 'string',
      sensitive: true,
      description: 'The password of Alice@Example.com (set TF_VAR_alice_password)',
    });
    expect(stack.variable.alice_laptop_psk).toMatchObject({ type: 'string', sensitive: true });
  });

  it('exposes the constructs it declared', () => {
    const stack = new FirezoneStack(Testing.app(), 'test', {
      users: [
        {
          email: 'a@example.com',
          devices: [{ name: 'laptop', publicKey: KEY_A }],
          rules: [{ action: 'drop', destination: '10.0.0.1' }],
        },
      ],
      rules: [{ action: 'accept', destination: '10.0.0.0/8' }],
    });
    expect(stack.provider).toBeInstanceOf(FirezoneProvider);
    const a = stack.users.get('a@example.com')!;
    expect(a.user).toBeInstanceOf(User);
    expect(a.devices.map((d) => d instanceof Device)).toEqual([true]);
    expect(a.rules.map((r) => r instanceof Rule)).toEqual([true]);
    expect(stack.globalRules).toHaveLength(1);
  });

  it('uses a resourceName when given, and reuses one variable named twice', () => {
    const stack = synth({
      users: [
        { email: 'alice@example.com', resourceName: 'alice', password: { variable: 'shared' } },
        { email: 'bob@example.com', password: { variable: 'shared' } },
      ],
    });
    expect(Object.keys(stack.resource.firezone_user)).toEqual(['alice', 'bob_example_com']);
    expect(Object.keys(stack.variable)).toEqual(['shared']);
  });

  it('takes a sensitive TerraformVariable of your own, and refuses one that is not sensitive or has a default', () => {
    const app = Testing.app();
    const stack = new FirezoneStack(app, 'own', { users: [] });
    const good = new TerraformVariable(stack, 'token', { type: 'string', sensitive: true });
    const plain = new TerraformVariable(stack, 'plain', { type: 'string' });
    const withDefault = new TerraformVariable(stack, 'defaulted', { type: 'string', sensitive: true, default: 'x' });
    expect(
      JSON.parse(Testing.synth(new FirezoneStack(app, 'a', { users: [], provider: { apiKey: good } }))).provider
        .firezone,
    ).toEqual([{ api_key: '${var.token}' }]);
    expect(() => new FirezoneStack(app, 'b', { users: [{ email: 'a@example.com', password: plain }] })).toThrow(
      /must be declared sensitive: true/,
    );
    expect(() => new FirezoneStack(app, 'c', { users: [{ email: 'a@example.com', password: withDefault }] })).toThrow(
      /must have no default/,
    );
  });

  it('refuses a literal secret passed from plain JavaScript, without repeating it', () => {
    const literal = 'literal-password-value' as unknown as SecretVariable;
    let message = '';
    try {
      new FirezoneStack(Testing.app(), 'test', { users: [{ email: 'a@example.com', password: literal }] });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      "FirezoneStack: a_example_com.password: the password of a@example.com must be { variable: 'NAME' } (read from TF_VAR_NAME), never a literal value",
    );
  });

  it('refuses two declarations that would get the same name, and the same user or device twice', () => {
    expect(
      () =>
        new FirezoneStack(Testing.app(), 't', { users: [{ email: 'a.b@example.com' }, { email: 'a_b@example.com' }] }),
    ).toThrow(/would both be named a_b_example_com; give one of them a resourceName/);
    expect(
      () => new FirezoneStack(Testing.app(), 't', { users: [{ email: 'a@example.com' }, { email: 'A@example.com ' }] }),
    ).toThrow(/declared twice/);
    expect(
      () =>
        new FirezoneStack(Testing.app(), 't', {
          users: [
            {
              email: 'a@example.com',
              devices: [
                { name: 'x', publicKey: KEY_A },
                { name: 'x', publicKey: KEY_B },
              ],
            },
          ],
        }),
    ).toThrow(/device x of a@example.com is declared twice/);
  });

  it('writes settings and absent into the top-level "//" entry that Terraform ignores', async () => {
    const outdir = await mkdtemp(join(tmpdir(), 'netform-cdktf-constructs-'));
    try {
      const app = new App({ outdir });
      new FirezoneStack(app, 'company', {
        users: [],
        settings: { prune: true, manage: { users: ['*@example.com'] }, limits: { delete: '10%', update: 3 } },
        absent: { users: ['old@example.com'] },
      });
      app.synth();
      const stack = JSON.parse(await readFile(join(outdir, 'stacks', 'company', 'cdk.tf.json'), 'utf8'));
      expect(stack['//'].netform).toEqual({
        settings: { prune: true, manage: { users: ['*@example.com'] }, limits: { delete: '10%', update: 3 } },
        absent: { users: ['old@example.com'] },
      });
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });
});

describe('FirezoneStack settings.device_updates', () => {
  it('is written in the YAML shape and read back by the loader', async () => {
    const outdir = await mkdtemp(join(tmpdir(), 'netform-cdktf-device-updates-'));
    try {
      const app = new App({ outdir });
      new FirezoneStack(app, 'company', { users: [], settings: { prune: true, device_updates: 'replace' } });
      app.synth();
      const file = join(outdir, 'stacks', 'company', 'cdk.tf.json');
      expect(JSON.parse(await readFile(file, 'utf8'))['//'].netform.settings).toEqual({
        prune: true,
        device_updates: 'replace',
      });
      const loaded = await loadDesiredState(file);
      expect(loaded.ok && loaded.state.settings.device_updates).toBe('replace');
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });
});

describe('FirezoneStack renamedFrom', () => {
  it('writes renamed_from in each resource\'s "//" entry, read back by the loader as the YAML key', async () => {
    const outdir = await mkdtemp(join(tmpdir(), 'netform-cdktf-renamed-'));
    try {
      const app = new App({ outdir });
      const key = Buffer.alloc(32, 3).toString('base64');
      new FirezoneStack(app, 'company', {
        users: [
          {
            email: 'ann@new.example.com',
            renamedFrom: 'ann@old.example.com',
            devices: [{ name: 'laptop-2', publicKey: key, renamedFrom: 'laptop' }],
          },
        ],
      });
      app.synth();
      const file = join(outdir, 'stacks', 'company', 'cdk.tf.json');
      const stack = JSON.parse(await readFile(file, 'utf8'));
      expect(Object.values<any>(stack.resource.firezone_user)[0]['//'].netform).toEqual({
        renamed_from: 'ann@old.example.com',
      });
      const loaded = await loadDesiredState(file);
      if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('; '));
      expect(loaded.state.users[0]!.renamed_from).toBe('ann@old.example.com');
      expect(loaded.state.users[0]!.devices[0]!.renamed_from).toBe('laptop');
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });
});

describe('FirezoneStack configuration', () => {
  async function synthToFile(config: FirezoneStackConfig): Promise<any> {
    const outdir = await mkdtemp(join(tmpdir(), 'netform-cdktf-configuration-'));
    try {
      const app = new App({ outdir });
      new FirezoneStack(app, 'company', config);
      app.synth();
      return JSON.parse(await readFile(join(outdir, 'stacks', 'company', 'cdk.tf.json'), 'utf8'));
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  }

  it('writes configuration into the "//" entry in the YAML format\'s shape (snake_case), only the fields given', async () => {
    const stack = await synthToFile({
      users: [],
      configuration: {
        defaultClientMtu: 1380,
        defaultClientDns: ['10.0.0.53'],
        allowUnprivilegedDeviceManagement: false,
        defaultClientEndpoint: undefined,
      },
    });
    expect(stack['//'].netform).toEqual({
      configuration: {
        default_client_mtu: 1380,
        default_client_dns: ['10.0.0.53'],
        allow_unprivileged_device_management: false,
      },
    });
  });

  it('writes nothing when no configuration is given', async () => {
    expect((await synthToFile({ users: [] }))['//']?.netform).toBeUndefined();
  });
});

describe('terraformName', () => {
  it('makes a valid Terraform name from any text', () => {
    expect(terraformName('alice@example.com')).toBe('alice_example_com');
    expect(terraformName('  Bob.Smith+vpn@Example.COM ')).toBe('bob_smith_vpn_example_com');
    expect(terraformName('10.0.0.0/8')).toBe('_10_0_0_0_8');
    expect(terraformName('***')).toBe('_');
  });
});
