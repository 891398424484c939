/**
 * examples/cdktf synthesizes with plain node (the built package, as a user gets it) and describes
 * exactly the company of examples/basic. Build first (`npm test` does).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDesiredState } from '../../../src/desired/index.js';
import type { LoadResult } from '../../../src/desired/types.js';
import { ruleKey } from '../../../src/model/keys.js';
import type { Secret } from '../../../src/model/secret.js';
import type { DesiredRule, DesiredState } from '../../../src/model/state.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const run = promisify(execFile);

let out: string;
let stackDir: string;
let stackText: string;
let secrets: Record<string, string>;

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'netform-cdktf-example-'));
  // cwd elsewhere: the example must not depend on where it is run from.
  const { stdout } = await run(process.execPath, [join(root, 'examples', 'cdktf', 'main.mjs'), out], {
    cwd: out,
    env: { PATH: process.env.PATH ?? '' },
  });
  stackDir = join(out, 'stacks', 'example-corp');
  expect(stdout).toContain(join(stackDir, 'cdk.tf.json'));
  stackText = await readFile(join(stackDir, 'cdk.tf.json'), 'utf8');
  const secret = async (name: string) =>
    (await readFile(join(root, 'examples', 'basic', 'secrets', name), 'utf8')).trim();
  secrets = {
    alice_password: await secret('example-alice.password'),
    bob_password: await secret('example-bob.password'),
    alice_laptop_psk: await secret('example-alice-laptop.psk'),
    carol_laptop_psk: await secret('example-carol-laptop.psk'),
  };
});

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

function stateOf(result: LoadResult): DesiredState {
  if (!result.ok)
    throw new Error(result.diagnostics.map((d) => `${d.file}:${d.line}: ${d.path}: ${d.message}`).join('\n'));
  return result.state;
}

/** What a DesiredState says, without where it was written or how its secrets were referenced, in a stable order. */
function normalise(state: DesiredState): unknown {
  const secret = (s: Secret | undefined) => s?.reveal();
  const rules = (list: DesiredRule[], owner: string | null) =>
    list
      .map((r) => ({
        key: ruleKey({ ownerEmail: owner, ...r }),
        action: r.action,
        destination: r.destination,
        port_type: r.port_type,
        port_range: r.port_range,
      }))
      .sort((a, b) => a.key.localeCompare(b.key));
  const { source: _settingsSource, ...settings } = state.settings;
  return {
    settings,
    users: state.users
      .map((u) => ({
        email: u.email,
        role: u.role,
        password: secret(u.password),
        devices: u.devices
          .map((d) => ({ name: d.name, fields: d.fields, preshared_key: secret(d.preshared_key) }))
          .sort((a, b) => a.name.localeCompare(b.name)),
        rules: rules(u.rules, u.email),
      }))
      .sort((a, b) => a.email.localeCompare(b.email)),
    rules: rules(state.rules, null),
    absent: {
      users: state.absent.users.map((u) => u.email).sort(),
      devices: state.absent.devices.map((d) => `${d.user}/${d.name}`).sort(),
    },
  };
}

describe('examples/cdktf', () => {
  it('synthesizes a stack in which no secret is written, only sensitive variables without defaults', () => {
    const stack = JSON.parse(stackText);
    for (const value of Object.values(secrets)) expect(stackText).not.toContain(value);
    expect(Object.keys(stack.variable).sort()).toEqual([
      'alice_laptop_psk',
      'alice_password',
      'bob_password',
      'carol_laptop_psk',
    ]);
    for (const variable of Object.values<any>(stack.variable)) {
      expect(variable).toMatchObject({ type: 'string', sensitive: true });
      expect(variable).not.toHaveProperty('default');
    }
    expect(stack.resource.firezone_user.alice_example_com.password).toBe('${var.alice_password}');
    expect(stack.resource.firezone_device.alice_example_com_laptop).toMatchObject({
      user_id: '${firezone_user.alice_example_com.id}',
      preshared_key: '${var.alice_laptop_psk}',
    });
    expect(stack.terraform.required_providers.firezone).toEqual({
      source: 'registry.terraform.io/jindrichskupa/firezone',
    });
  });

  it('type-checks against the netform/cdktf declarations', async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    await expect(
      run(process.execPath, [tsc, '-p', join(root, 'examples', 'cdktf', 'tsconfig.json')], { cwd: root }),
    ).resolves.toMatchObject({ stdout: '' });
  });

  it('reads as the same desired state as examples/basic', async () => {
    const fromStack = stateOf(
      await loadDesiredState(stackDir, {
        env: Object.fromEntries(Object.entries(secrets).map(([name, value]) => [`TF_VAR_${name}`, value])),
      }),
    );
    const fromYaml = stateOf(await loadDesiredState(join(root, 'examples', 'basic', 'netform.yaml'), { env: {} }));
    expect(fromStack.users).toHaveLength(5);
    expect(normalise(fromStack)).toEqual(normalise(fromYaml));
    // The stack's secrets are Terraform variables.
    expect(fromStack.users.find((u) => u.email === 'bob@example.com')!.password!.ref).toEqual({
      tfvar: 'bob_password',
    });
  });
});
