/**
 * The one reading pipeline: a CDKTF stack is translated into the YAML document shape and read by
 * the same schema check, document reader and checks, so that what one front end reads the other
 * reads too, with Terraform addresses and stack positions in its messages.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDesiredState } from '../../../src/desired/index.js';
import type { Diagnostic, LoadResult } from '../../../src/desired/types.js';

const KEY = Buffer.alloc(32, 1).toString('base64');

type Json = Record<string, any>;

function stack(): Json {
  return {
    '//': {
      netform: {
        settings: { prune: true, manage: { users: ['*@example.com'] }, limits: { delete: '10%' } },
        absent: { users: ['old@example.com'], devices: [{ user: 'alice@example.com', name: 'old-laptop' }] },
      },
    },
    resource: {
      firezone_user: { alice: { email: 'alice@example.com', role: 'admin' }, bob: { email: 'bob@example.com' } },
      firezone_device: {
        laptop: {
          user_id: '${firezone_user.alice.id}',
          name: 'laptop',
          public_key: KEY,
          allowed_ips: ['10.0.0.0/8'],
          mtu: 1380,
        },
      },
      firezone_rule: {
        https: {
          user_id: '${firezone_user.alice.id}',
          action: 'accept',
          destination: '10.1.0.0/16',
          port_type: 'tcp',
          port_range: '443',
        },
        lab: { action: 'drop', destination: '10.9.0.0/16' },
      },
    },
  };
}

const SAME_IN_YAML = `version: 1
settings:
  prune: true
  manage: { users: ['*@example.com'] }
  limits: { delete: 10% }
users:
  - email: alice@example.com
    role: admin
    devices:
      - { name: laptop, public_key: ${KEY}, allowed_ips: [10.0.0.0/8], mtu: 1380 }
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: '443' }
  - email: bob@example.com
rules:
  - { action: drop, destination: 10.9.0.0/16 }
absent:
  users: [old@example.com]
  devices: [{ user: alice@example.com, name: old-laptop }]
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netform-pipeline-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function loadStack(value: Json): Promise<{ result: LoadResult; text: string }> {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  await writeFile(join(dir, 'cdk.tf.json'), text);
  return { result: await loadDesiredState(join(dir, 'cdk.tf.json'), { env: {} }), text };
}

/** The state without where it was written. */
function withoutSources(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSources);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'source' && key !== 'sources')
      .map(([k, v]) => [k, withoutSources(v)]),
  );
}

function diagnosticsOf(result: LoadResult): Diagnostic[] {
  if (result.ok) throw new Error('expected diagnostics, the stack loaded');
  return result.diagnostics;
}

function lineOf(text: string, needle: string): number {
  return text.split('\n').findIndex((line) => line.includes(needle)) + 1;
}

describe('one pipeline for YAML and CDKTF', () => {
  it('reads a stack and the same company in YAML into the same desired state', async () => {
    const fromStack = (await loadStack(stack())).result;
    await writeFile(join(dir, 'company.yaml'), SAME_IN_YAML);
    const fromYaml = await loadDesiredState(join(dir, 'company.yaml'), { env: {} });
    expect(fromStack.ok && fromYaml.ok).toBe(true);
    if (!fromStack.ok || !fromYaml.ok) return;
    expect(withoutSources(fromStack.state)).toEqual(withoutSources(fromYaml.state));
  });

  it('reads a section added to the YAML format (configuration:) from a stack with no change to the translator', async () => {
    const value = stack();
    value['//'].netform.configuration = { default_client_mtu: 1380 };
    const { result } = await loadStack(value);
    await writeFile(join(dir, 'company.yaml'), `${SAME_IN_YAML}configuration:\n  default_client_mtu: 1380\n`);
    const fromYaml = await loadDesiredState(join(dir, 'company.yaml'), { env: {} });
    expect(result.ok && fromYaml.ok).toBe(true);
    if (!result.ok || !fromYaml.ok) return;
    expect(result.state.configuration?.values).toEqual({ default_client_mtu: 1380 });
    expect(withoutSources(result.state)).toEqual(withoutSources(fromYaml.state));
  });

  it("checks the stack's netform sections with the format's schema, at their place in the stack", async () => {
    const value = stack();
    value['//'].netform.settings.prunes = true;
    value['//'].netform.colour = 'red';
    const { result, text } = await loadStack(value);
    expect(diagnosticsOf(result)).toEqual([
      expect.objectContaining({
        path: 'netform.settings.prunes',
        line: lineOf(text, '"prunes"'),
        message: 'unknown key; did you mean `prune`?',
      }),
      expect.objectContaining({
        path: 'netform.colour',
        line: lineOf(text, '"colour"'),
        message: expect.stringMatching(/^unknown key; expected one of: version, settings/),
      }),
    ]);
  });

  it('reads a resource\'s own netform keys (its "//" entry) with the format\'s schema, naming the resource', async () => {
    const value = stack();
    value.resource.firezone_device.laptop['//'] = { netform: { colour: 'red' } };
    const { result, text } = await loadStack(value);
    expect(diagnosticsOf(result)).toEqual([
      expect.objectContaining({
        path: 'firezone_device.laptop.colour',
        line: lineOf(text, '"colour"'),
        message: expect.stringMatching(/^unknown key; expected one of: name, /),
      }),
    ]);
  });

  it('refuses users and rules written in the netform section: a stack declares them as resources', async () => {
    const value = stack();
    value['//'].netform.users = [{ email: 'carol@example.com' }];
    const { result, text } = await loadStack(value);
    expect(diagnosticsOf(result)).toEqual([
      expect.objectContaining({
        path: 'netform.users',
        line: lineOf(text, 'carol@example.com') - 2,
        message: expect.stringContaining('firezone_user resources'),
      }),
    ]);
  });

  it('places errors of the shared checks at the attribute, by Terraform address, and keeps a tfvar secret by reference', async () => {
    const value = stack();
    value.variable = { laptop_psk: { type: 'string', sensitive: true } };
    value.resource.firezone_device.laptop.preshared_key = '${var.laptop_psk}';
    value.resource.firezone_device.laptop.allowed_ips = ['10.0.0.0/8', 'nope'];
    const { result, text } = await loadStack(value);
    expect(diagnosticsOf(result)).toEqual([
      expect.objectContaining({
        path: 'firezone_device.laptop.allowed_ips[1]',
        line: lineOf(text, '"nope"'),
        message: expect.stringContaining('is invalid'),
      }),
    ]);
    // An unset secret is a warning, at its attribute (W3.6: read where it is sent or compared).
    expect(result.warnings).toEqual([
      expect.objectContaining({
        path: 'firezone_device.laptop.preshared_key',
        line: lineOf(text, '"preshared_key"'),
        message: expect.stringContaining('TF_VAR_laptop_psk'),
      }),
    ]);
  });
});
