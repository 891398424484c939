/** Reading a synthesized CDKTF stack (cdk.tf.json) into DesiredState: references, variables, secrets, errors. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCdktfStack } from '../../../src/desired/cdktf/load.js';
import { parseTemplate } from '../../../src/desired/cdktf/template.js';
import { loadDesiredState } from '../../../src/desired/index.js';
import type { Diagnostic, LoadResult } from '../../../src/desired/types.js';
import { Secret } from '../../../src/model/secret.js';
import type { DesiredState } from '../../../src/model/state.js';

const KEY_A = Buffer.alloc(32, 1).toString('base64');
const KEY_B = Buffer.alloc(32, 2).toString('base64');
const PSK = Buffer.alloc(32, 9).toString('base64');
const PASSWORD = 'a-long-enough-password';
const ENV = { TF_VAR_alice_password: PASSWORD, TF_VAR_laptop_psk: PSK };

type Json = Record<string, any>;

/** A small stack as `cdktf synth` writes it. */
function baseStack(): Json {
  return {
    '//': { metadata: { backend: 'local', stackName: 'test', version: '0.21.0' }, outputs: {} },
    terraform: { required_providers: { firezone: { source: 'registry.terraform.io/jindrichskupa/firezone' } } },
    provider: { firezone: [{}] },
    variable: {
      alice_password: { type: 'string', sensitive: true },
      laptop_psk: { type: 'string', sensitive: true },
    },
    resource: {
      firezone_user: {
        alice: {
          '//': { metadata: { path: 'test/alice', uniqueId: 'alice' } },
          email: 'alice@example.com',
          role: 'admin',
          password: '${var.alice_password}',
        },
        bob: { email: 'bob@example.com' },
      },
      firezone_device: {
        alice_laptop: {
          user_id: '${firezone_user.alice.id}',
          name: 'laptop',
          public_key: KEY_A,
          preshared_key: '${var.laptop_psk}',
          allowed_ips: ['10.0.0.0/8'],
          mtu: 1380,
        },
        bob_phone: {
          user_id: '${firezone_user.bob.id}',
          name: 'phone',
          public_key: KEY_B,
          depends_on: ['firezone_user.bob'],
        },
      },
      firezone_rule: {
        alice_https: {
          user_id: '${firezone_user.alice.id}',
          action: 'accept',
          destination: '10.1.0.0/16',
          port_type: 'tcp',
          port_range: '443',
        },
        block_lab: { action: 'drop', destination: '10.9.0.0/16' },
      },
    },
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netform-cdktf-loader-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeStack(stack: Json | string): Promise<{ path: string; text: string }> {
  const text = typeof stack === 'string' ? stack : `${JSON.stringify(stack, null, 2)}\n`;
  const path = join(dir, 'cdk.tf.json');
  await writeFile(path, text);
  return { path, text };
}

async function load(
  stack: Json | string,
  env: Record<string, string> = ENV,
): Promise<{ result: LoadResult; text: string }> {
  const { path, text } = await writeStack(stack);
  return { result: await loadCdktfStack(path, { env }), text };
}

function diagnosticsOf(result: LoadResult): Diagnostic[] {
  if (result.ok) throw new Error('expected diagnostics, the stack loaded');
  return result.diagnostics;
}

function stateOf(result: LoadResult): DesiredState {
  if (!result.ok)
    throw new Error(`expected a state, got: ${result.diagnostics.map((d) => `${d.path}: ${d.message}`).join('; ')}`);
  return result.state;
}

/** The 1-based line of the first line containing `needle`. */
function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`${needle} not in the stack`);
  return index + 1;
}

function only(result: LoadResult): Diagnostic {
  const diagnostics = diagnosticsOf(result);
  expect(diagnostics).toHaveLength(1);
  return diagnostics[0]!;
}

describe('loadCdktfStack', () => {
  it('reads users, devices and rules, resolving user references to their emails and secrets from TF_VAR_*', async () => {
    const state = stateOf((await load(baseStack())).result);
    expect(state.users.map((u) => u.email)).toEqual(['alice@example.com', 'bob@example.com']);
    const [alice, bob] = state.users;
    expect(alice!.role).toBe('admin');
    expect(bob!.role).toBeUndefined();
    expect(alice!.password).toBeInstanceOf(Secret);
    expect(alice!.password!.reveal()).toBe(PASSWORD);
    expect(alice!.password!.ref).toEqual({ tfvar: 'alice_password' });
    expect(bob!.password).toBeUndefined();

    expect(alice!.devices).toHaveLength(1);
    const laptop = alice!.devices[0]!;
    expect(laptop.name).toBe('laptop');
    // Giving allowed_ips and mtu means not using the server's defaults for them, as in YAML.
    expect(laptop.fields).toEqual({
      public_key: KEY_A,
      allowed_ips: ['10.0.0.0/8'],
      mtu: 1380,
      use_default_allowed_ips: false,
      use_default_mtu: false,
    });
    expect(laptop.preshared_key!.reveal()).toBe(PSK);
    expect(laptop.preshared_key!.ref).toEqual({ tfvar: 'laptop_psk' });
    expect(bob!.devices.map((d) => [d.name, d.fields])).toEqual([['phone', { public_key: KEY_B }]]);

    expect(alice!.rules).toEqual([
      expect.objectContaining({ action: 'accept', destination: '10.1.0.0/16', port_type: 'tcp', port_range: '443' }),
    ]);
    expect(bob!.rules).toEqual([]);
    expect(state.rules).toEqual([
      expect.objectContaining({ action: 'drop', destination: '10.9.0.0/16', port_type: null, port_range: null }),
    ]);
    expect(state.settings).toEqual({
      prune: false,
      manage: { users: null, rules: null },
      protect: { users: [] },
      limits: {},
    });
    expect(state.absent).toEqual({ users: [], devices: [] });
  });

  it('records the stack file, resource address and positions of each declaration', async () => {
    const { result, text } = await load(baseStack());
    const laptop = stateOf(result).users[0]!.devices[0]!;
    expect(laptop.source).toMatchObject({ path: 'firezone_device.alice_laptop', line: lineOf(text, '"alice_laptop"') });
    expect(laptop.source!.file).toMatch(/cdk\.tf\.json$/);
    expect(laptop.source!.fields!.mtu).toMatchObject({
      path: 'firezone_device.alice_laptop.mtu',
      line: lineOf(text, '"mtu": 1380'),
    });
  });

  it('takes a folder holding cdk.tf.json, also through loadDesiredState; a folder without one is an error', async () => {
    await writeStack(baseStack());
    expect(stateOf(await loadCdktfStack(dir, { env: ENV })).users).toHaveLength(2);
    expect(stateOf(await loadDesiredState(dir, { env: ENV })).users).toHaveLength(2);
    const empty = join(dir, 'empty');
    await mkdir(empty);
    expect(only(await loadCdktfStack(empty, { env: ENV })).message).toMatch(/holds no cdk\.tf\.json/);
    expect(only(await loadCdktfStack(join(dir, 'missing'), { env: ENV })).message).toBe('no such file or folder');
  });

  it('resolves ${var.NAME} for values that are not secret: TF_VAR_NAME converted to the declared type, else the default', async () => {
    const stack = baseStack();
    Object.assign(stack.variable, {
      laptop_mtu: { type: 'number' },
      office_networks: { type: 'list(string)' },
      domain: { type: 'string', default: 'example.com' },
      keepalive: { type: 'number', default: 25 },
    });
    stack.resource.firezone_user.bob.email = 'bob@${var.domain}';
    Object.assign(stack.resource.firezone_device.alice_laptop, {
      mtu: '${var.laptop_mtu}',
      allowed_ips: '${var.office_networks}',
      persistent_keepalive: '${var.keepalive}',
      description: 'Laptop of ${firezone_user.alice.email}, $${not.a.reference}',
    });
    const env = { ...ENV, TF_VAR_laptop_mtu: '1400', TF_VAR_office_networks: '["10.0.0.0/8", "192.168.1.0/24"]' };
    const state = stateOf((await load(stack, env)).result);
    expect(state.users[1]!.email).toBe('bob@example.com');
    expect(state.users[0]!.devices[0]!.fields).toMatchObject({
      mtu: 1400,
      allowed_ips: ['10.0.0.0/8', '192.168.1.0/24'],
      persistent_keepalive: 25,
      description: 'Laptop of alice@example.com, ${not.a.reference}',
    });
  });

  it('reports a variable without a value, and a TF_VAR value of the wrong type, naming both', async () => {
    const stack = baseStack();
    stack.variable.laptop_mtu = { type: 'number' };
    stack.resource.firezone_device.alice_laptop.mtu = '${var.laptop_mtu}';
    const missing = only((await load(stack)).result);
    expect(missing).toMatchObject({ path: 'firezone_device.alice_laptop.mtu' });
    expect(missing.message).toContain('TF_VAR_laptop_mtu');
    const wrong = only((await load(stack, { ...ENV, TF_VAR_laptop_mtu: 'big' })).result);
    expect(wrong.message).toBe('TF_VAR_laptop_mtu must be a number (variable laptop_mtu is of type number)');
  });

  it('reports a reference to a user the stack does not declare, naming the resource and attribute at the value', async () => {
    const stack = baseStack();
    stack.resource.firezone_device.alice_laptop.user_id = '${firezone_user.carol.id}';
    const { result, text } = await load(stack);
    const d = only(result);
    expect(d).toMatchObject({
      path: 'firezone_device.alice_laptop.user_id',
      line: lineOf(text, 'firezone_user.carol.id'),
    });
    expect(d.message).toBe('references firezone_user.carol, which this stack does not declare');
    expect(d.file).toMatch(/cdk\.tf\.json$/);
  });

  it('reports expressions it cannot resolve, naming resource and attribute', async () => {
    const cases: [string, string, string][] = [
      ['description', '${local.owner}', 'netform cannot resolve ${local.owner}'],
      ['description', '${upper(var.x)}', 'netform cannot resolve ${upper(var.x)}'],
      ['endpoint', '${data.dns_record.vpn.value}:51820', 'netform cannot resolve ${data.dns_record.vpn.value}'],
      ['description', '${firezone_device.bob_phone.id}', 'netform cannot resolve ${firezone_device.bob_phone.id}'],
      ['description', '${firezone_user.alice.id}', 'only user_id may reference it'],
      ['description', '%{ if true }x%{ endif }', 'template directives'],
      [
        'user_id',
        '${firezone_user.alice.email}',
        'must reference a firezone_user of this stack as ${firezone_user.NAME.id}',
      ],
      [
        'user_id',
        '3f1b2c4d-5e6f-4a1b-8c2d-9e0f1a2b3c4d',
        'must reference a firezone_user of this stack as ${firezone_user.NAME.id}, not a literal value',
      ],
    ];
    for (const [attribute, value, message] of cases) {
      const stack = baseStack();
      stack.resource.firezone_device.alice_laptop[attribute] = value;
      const d = only((await load(stack)).result);
      expect(d.path, value).toBe(`firezone_device.alice_laptop.${attribute}`);
      expect(d.message, value).toContain(message);
    }
  });

  it('refuses literal secrets, with a message that says how and never shows the value', async () => {
    const literal = 'literal-secret-value-123';
    const variants: [(s: Json) => void, string][] = [
      [(s) => (s.resource.firezone_user.alice.password = literal), 'firezone_user.alice.password'],
      [
        (s) => (s.resource.firezone_device.alice_laptop.preshared_key = literal),
        'firezone_device.alice_laptop.preshared_key',
      ],
      [(s) => (s.provider.firezone[0].api_key = literal), 'provider.firezone.api_key'],
    ];
    for (const [change, path] of variants) {
      const stack = baseStack();
      change(stack);
      const { result, text } = await load(stack);
      const d = only(result);
      expect(d.path).toBe(path);
      expect(d.line).toBe(lineOf(text, literal));
      expect(d.message).toMatch(
        /^a secret must not be written in the stack: pass it through a sensitive Terraform variable/,
      );
      expect(d.message).toContain('TF_VAR_NAME');
      expect(JSON.stringify(d)).not.toContain(literal);
    }
    const mixed = baseStack();
    mixed.resource.firezone_user.alice.password = `${literal}\${var.alice_password}`;
    const d = only((await load(mixed)).result);
    expect(d.message).toContain('a secret cannot be assembled from text written in the stack');
    expect(JSON.stringify(d)).not.toContain(literal);
  });

  it('refuses a secret variable with a default, an undeclared one, and warns of an unset TF_VAR by name', async () => {
    const withDefault = baseStack();
    withDefault.variable.alice_password.default = 'a-default-password';
    const d1 = only((await load(withDefault)).result);
    expect(d1).toMatchObject({ path: 'firezone_user.alice.password' });
    expect(d1.message).toBe(
      'variable alice_password has a default in the stack, so the secret would be written there; remove the default and set TF_VAR_alice_password',
    );

    const undeclared = baseStack();
    delete undeclared.variable.laptop_psk;
    expect(only((await load(undeclared)).result).message).toBe(
      'references variable laptop_psk, which this stack does not declare',
    );

    const unset = (await load(baseStack(), { TF_VAR_laptop_psk: PSK })).result;
    expect(unset.ok).toBe(true);
    expect(unset.warnings?.map((w) => `${w.path}: ${w.message}`)).toEqual([
      'firezone_user.alice.password: Terraform variable alice_password (environment variable TF_VAR_alice_password) is not set (read only when it is sent: when plan or apply creates the user, or with --rotate-passwords)',
    ]);
  });

  it('an unset TF_VAR is a warning and the stack still loads (W3.6: secrets are read where they are used)', async () => {
    const { path } = await writeStack(baseStack());
    const result = await loadCdktfStack(path, { env: {} });
    const state = stateOf(result);
    expect(state.users.map((u) => u.email)).toEqual(['alice@example.com', 'bob@example.com']);
    const warnings = result.ok ? (result.warnings ?? []) : [];
    expect(warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      'firezone_user.alice.password: Terraform variable alice_password (environment variable TF_VAR_alice_password) is not set (read only when it is sent: when plan or apply creates the user, or with --rotate-passwords)',
      'firezone_device.alice_laptop.preshared_key: Terraform variable laptop_psk (environment variable TF_VAR_laptop_psk) is not set (read by plan, apply and drift of this device, which compare it with the server)',
    ]);
  });

  it('refuses a sensitive variable where the value would be shown in plans', async () => {
    const stack = baseStack();
    stack.resource.firezone_device.alice_laptop.description = '${var.laptop_psk}';
    const d = only((await load(stack)).result);
    expect(d.path).toBe('firezone_device.alice_laptop.description');
    expect(d.message).toContain('variable laptop_psk is sensitive');
    expect(JSON.stringify(d)).not.toContain(PSK);
  });

  it('refuses what it cannot read: unknown and server-set attributes, count/for_each, other provider configurations, other resource types, modules, missing required attributes', async () => {
    const stack = baseStack();
    stack.resource.firezone_user.bob.nickname = 'bobby';
    stack.resource.firezone_user.bob.id = '3f1b2c4d-5e6f-4a1b-8c2d-9e0f1a2b3c4d';
    stack.resource.firezone_rule.block_lab.count = 2;
    stack.resource.null_resource = { x: {} };
    stack.module = { team: { source: './team' } };
    delete stack.resource.firezone_device.bob_phone.public_key;
    stack.resource.firezone_rule.alice_https.provider = 'firezone.staging';
    const messages = diagnosticsOf((await load(stack)).result).map((d) => `${d.path}: ${d.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^firezone_user\.bob\.nickname: unknown attribute of firezone_user; known: email, password, role$/,
        ),
        'firezone_user.bob.id: is set by the server and cannot be declared',
        expect.stringMatching(/^firezone_rule\.block_lab\.count: count is not supported/),
        'null_resource: netform manages only firezone_user, firezone_device, firezone_rule; null_resource cannot be part of this stack',
        expect.stringMatching(/^module: modules are not supported/),
        'firezone_device.bob_phone.public_key: is required (a string)',
        expect.stringMatching(
          /^firezone_rule\.alice_https\.provider: netform applies a stack to one server \(--url\); a resource of another provider configuration \(firezone\.staging\)/,
        ),
      ]),
    );
    expect(messages).toHaveLength(7);
  });

  it('runs the shared domain checks, placing their errors at the attribute in the stack', async () => {
    const stack = baseStack();
    stack.resource.firezone_device.alice_laptop.mtu = 9000;
    stack.resource.firezone_user.bob.email = 'ALICE@example.com';
    stack.resource.firezone_rule.block_lab.action = 'reject';
    const { result, text } = await load(stack);
    const diagnostics = diagnosticsOf(result);
    expect(diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: 'firezone_device.alice_laptop.mtu',
          line: lineOf(text, '"mtu": 9000'),
          message: 'must be less than or equal to 1500',
        }),
        expect.objectContaining({
          path: 'firezone_user.bob.email',
          line: lineOf(text, 'ALICE@example.com'),
          message: expect.stringMatching(/^has already been taken/),
        }),
        expect.objectContaining({ path: 'firezone_rule.block_lab.action', message: 'is invalid' }),
      ]),
    );
    // Reading order: by line.
    const lines = diagnostics.map((d) => d.line ?? 0);
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
  });

  it('keeps a stated use_default_<x> true next to <x>, so that the contradiction is reported', async () => {
    const stack = baseStack();
    stack.resource.firezone_device.alice_laptop.use_default_mtu = true;
    const d = only((await load(stack)).result);
    expect(d).toMatchObject({ path: 'firezone_device.alice_laptop.mtu', message: 'must not be present' });
  });

  it('reports invalid JSON at its position without quoting the text', async () => {
    const text = `{\n  "resource": {\n    "firezone_user": { "a": { "password": "hunter2-secret" }, }\n  }\n}\n`;
    const d = only((await load(text)).result);
    expect(d.message).toMatch(/^is not valid JSON/);
    expect(JSON.stringify(d)).not.toContain('hunter2');
  });

  it('reads settings and absent from the top-level "//" entry, with the YAML format\'s meaning', async () => {
    const stack = baseStack();
    stack['//'].netform = {
      settings: {
        prune: true,
        manage: { users: ['*@example.com'], rules: ['10.0.0.0/8'] },
        protect: { users: ['alice@example.com'] },
        limits: { delete: '10%', update: 5 },
      },
      absent: { users: ['mallory@example.com'], devices: [{ user: 'bob@example.com', name: 'old-phone' }] },
    };
    const state = stateOf((await load(stack)).result);
    expect({ ...state.settings, source: undefined }).toEqual({
      prune: true,
      manage: { users: ['*@example.com'], rules: ['10.0.0.0/8'] },
      protect: { users: ['alice@example.com'] },
      limits: { delete: { kind: 'percent', value: 10 }, update: { kind: 'count', value: 5 } },
      source: undefined,
    });
    expect(state.absent.users.map((u) => u.email)).toEqual(['mallory@example.com']);
    expect(state.absent.devices.map(({ user, name }) => ({ user, name }))).toEqual([
      { user: 'bob@example.com', name: 'old-phone' },
    ]);

    stack['//'].netform.settings.limits.delete = '150%';
    stack['//'].netform.settings.manage.rules = ['10.0.0.0/8', '10.0.0.0/33'];
    const { result, text } = await load(stack);
    expect(diagnosticsOf(result)).toEqual([
      expect.objectContaining({
        path: 'netform.settings.manage.rules[1]',
        line: lineOf(text, '10.0.0.0/33'),
        message: expect.stringContaining('must be an IP address or CIDR block'),
      }),
      expect.objectContaining({
        path: 'netform.settings.limits.delete',
        line: lineOf(text, '150%'),
        message: 'a percentage must be between 0% and 100%',
      }),
    ]);
  });

  it('never puts a secret value in a diagnostic', async () => {
    const stack = baseStack();
    stack.resource.firezone_user.alice.email = 'not an email';
    stack.resource.firezone_device.alice_laptop.description = '${var.laptop_psk}';
    stack.resource.firezone_device.alice_laptop.mtu = 'x';
    const env = { TF_VAR_alice_password: 'short', TF_VAR_laptop_psk: 'not-a-key-but-secret' };
    const diagnostics = diagnosticsOf((await load(stack, env)).result);
    expect(diagnostics.length).toBeGreaterThanOrEqual(2);
    const all = JSON.stringify(diagnostics);
    expect(all).not.toContain('short"');
    expect(all).not.toContain('not-a-key-but-secret');
  });
});

describe('parseTemplate', () => {
  it('splits text and interpolations and undoes the escapes', () => {
    expect(parseTemplate('plain')).toEqual([{ text: 'plain' }]);
    expect(parseTemplate('${var.a}')).toEqual([{ expression: 'var.a' }]);
    expect(parseTemplate('a ${ var.b } c')).toEqual([{ text: 'a ' }, { expression: 'var.b' }, { text: ' c' }]);
    expect(parseTemplate('$${x} %%{y}')).toEqual([{ text: '${x} %{y}' }]);
    expect(parseTemplate('${lookup({a = 1}, "a")}')).toEqual([{ expression: 'lookup({a = 1}, "a")' }]);
    expect(parseTemplate('${var.a')).toEqual({ error: 'an interpolation "${" is not closed' });
  });
});

describe('lifecycle.ignore_changes (W3.5)', () => {
  it('is read as the object\'s ignore_changes; use_default_<x> stands for <x>, "all" for every field', async () => {
    const stack = baseStack();
    stack.resource.firezone_user.alice.lifecycle = { ignore_changes: ['role'] };
    stack.resource.firezone_device.alice_laptop.lifecycle = { ignore_changes: ['use_default_endpoint', 'mtu'] };
    stack.resource.firezone_device.bob_phone.lifecycle = { ignore_changes: 'all' };
    const state = stateOf((await load(stack)).result);
    const alice = state.users.find((u) => u.email === 'alice@example.com')!;
    expect(alice.ignore_changes).toEqual(['role']);
    expect(alice.devices[0]!.ignore_changes).toEqual(['endpoint', 'mtu']);
    const bob = state.users.find((u) => u.email === 'bob@example.com')!;
    expect(bob.ignore_changes).toBeUndefined();
    expect(bob.devices[0]!.ignore_changes).toEqual(['allowed_ips', 'dns', 'endpoint', 'mtu', 'persistent_keepalive']);
  });

  it('refuses an attribute netform cannot leave unmanaged, naming those it can', async () => {
    const stack = baseStack();
    stack.resource.firezone_device.alice_laptop.lifecycle = { ignore_changes: ['public_key'] };
    const [problem] = diagnosticsOf((await load(stack)).result);
    expect(problem!.path).toBe('firezone_device.alice_laptop.lifecycle.ignore_changes');
    expect(problem!.message).toMatch(
      /netform cannot leave "public_key" unmanaged; it can: allowed_ips, use_default_allowed_ips/,
    );
  });
});
