/**
 * DesiredStateReuse (scheduled drift): a desired state is read once while its YAML files and the
 * secrets they name are unchanged, and read again as soon as any of them changes.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DesiredStateReuse } from '../../../src/desired/reuse.js';

const key = () => randomBytes(32).toString('base64');

function yaml(mtu: number): string {
  return [
    'version: 1',
    'users:',
    '  - email: alice@example.com',
    '    password: { env: ALICE_PASSWORD }',
    '    devices:',
    `      - { name: laptop, public_key: "${KEY}", mtu: ${mtu}, preshared_key: { file: laptop.psk } }`,
    '',
  ].join('\n');
}
const KEY = key();

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-reuse-'));
  file = join(dir, 'netform.yaml');
  writeFileSync(file, yaml(1380));
  writeFileSync(join(dir, 'laptop.psk'), `${key()}\n`);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function state(result: Awaited<ReturnType<DesiredStateReuse['load']>>) {
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.state;
}

const env = { ALICE_PASSWORD: 'first-password' };

describe('DesiredStateReuse', () => {
  it('reads unchanged files once, and again when a file, a new file of the folder or a secret changes', async () => {
    const reuse = new DesiredStateReuse();
    const first = await reuse.load(dir, { env });
    expect(await reuse.load(dir, { env })).toBe(first);
    expect(reuse.reused).toBe(1);

    // A file's content changes: read again.
    writeFileSync(file, yaml(1400));
    const edited = await reuse.load(dir, { env });
    expect(edited).not.toBe(first);
    expect(state(edited).users[0]!.devices[0]!.fields.mtu).toBe(1400);
    expect(await reuse.load(dir, { env })).toBe(edited);

    // A file is added to the folder: read again, with it.
    writeFileSync(join(dir, 'rules.yaml'), 'version: 1\nrules:\n  - { action: drop, destination: 10.9.0.0/16 }\n');
    const added = await reuse.load(dir, { env });
    expect(added).not.toBe(edited);
    expect(state(added).rules).toHaveLength(1);

    // A secret file is rotated: read again, with the new value.
    const rotated = key();
    writeFileSync(join(dir, 'laptop.psk'), `${rotated}\n`);
    const withNewKey = await reuse.load(dir, { env });
    expect(withNewKey).not.toBe(added);
    expect(state(withNewKey).users[0]!.devices[0]!.preshared_key!.reveal()).toBe(rotated);

    // Another environment (a password is never read to compare it: W3.6): read again.
    const other = await reuse.load(dir, { env: { ALICE_PASSWORD: 'second-password' } });
    expect(other).not.toBe(withNewKey);
    expect(state(other).users[0]!.password!.reveal()).toBe('second-password');
    expect(reuse.reused).toBe(2);
  });

  it('never keeps a load with errors, or what is not a set of YAML files', async () => {
    const reuse = new DesiredStateReuse();
    writeFileSync(file, 'version: 1\nusers:\n  - email: not-an-email\n');
    const bad = await reuse.load(dir, { env });
    expect(bad.ok).toBe(false);
    expect(await reuse.load(dir, { env })).not.toBe(bad);

    const stack = join(dir, 'stack');
    mkdirSync(stack);
    writeFileSync(join(stack, 'cdk.tf.json'), '{}');
    const cdktf = await reuse.load(stack, { env });
    expect(await reuse.load(stack, { env })).not.toBe(cdktf);
    expect(reuse.reused).toBe(0);
  });
});

describe('secrets that cannot be read (W3.6: a warning, not an error)', () => {
  it('a load with a missing secret file is kept while it is missing, and read again once it is back', async () => {
    const reuse = new DesiredStateReuse();
    writeFileSync(file, yaml(1380));
    const psk = readFileSync(join(dir, 'laptop.psk'), 'utf8');
    rmSync(join(dir, 'laptop.psk'));
    const missing = await reuse.load(dir, { env });
    expect(missing.ok).toBe(true);
    expect(missing.warnings?.map((w) => w.message)).toEqual([
      expect.stringMatching(
        /^secret file laptop\.psk cannot be read \(.*\): no such file \(read by plan, apply and drift/,
      ),
    ]);
    expect(state(missing).users[0]!.devices[0]!.preshared_key!.read()).toEqual({
      unreadable: expect.stringMatching(/^secret file laptop\.psk cannot be read/),
    });
    expect(await reuse.load(dir, { env })).toBe(missing);
    writeFileSync(join(dir, 'laptop.psk'), psk);
    const back = await reuse.load(dir, { env });
    expect(back).not.toBe(missing);
    expect(state(back).users[0]!.devices[0]!.preshared_key!.reveal()).toBe(psk.trim());
  });

  it('a password variable that is unset is never read, and its value is never needed to keep the load', async () => {
    const reuse = new DesiredStateReuse();
    const first = await reuse.load(dir, { env: {} });
    expect(first.ok).toBe(true);
    expect(first.warnings?.map((w) => w.message)).toEqual([
      'environment variable ALICE_PASSWORD is not set (read only when it is sent: when plan or apply creates the user, or with --rotate-passwords)',
    ]);
  });
});

describe('a reused desired state stays as it was read', () => {
  it('planning, the access section and rendering change nothing in it (they may run on it again)', async () => {
    const { planChanges } = await import('../../../src/plan/index.js');
    const { planAccessChanges } = await import('../../../src/access/plan.js');
    const { renderPlan } = await import('../../../src/views/plan.js');
    const { liveDevice, liveRule, liveState, liveUser, OPTIONS } = await import('../../helpers/plan-fixtures.js');
    writeFileSync(
      join(dir, 'rules.yaml'),
      'version: 1\nsettings: { prune: true }\nrules:\n  - { action: drop, destination: 10.9.0.0/16 }\n',
    );
    const loaded = state(
      await new DesiredStateReuse().load(dir, { env: { ALICE_PASSWORD: 'a-long-enough-password' } }),
    );
    const freeze = (value: unknown, seen = new Set<unknown>()): void => {
      if (typeof value !== 'object' || value === null || seen.has(value)) return;
      seen.add(value);
      for (const inner of Object.values(value)) freeze(inner, seen);
      Object.freeze(value);
    };
    freeze(loaded);
    const alice = liveUser('alice@example.com');
    const bob = liveUser('bob@example.com');
    const live = liveState({
      users: [alice, bob],
      devices: [liveDevice(alice, 'laptop', { mtu: 1280 }), liveDevice(bob, 'phone')],
      rules: [liveRule({ destination: '10.9.0.0/16', action: 'accept' }), liveRule({ destination: '10.8.0.0/16' })],
    });
    for (const options of [
      { ...OPTIONS, tokenUser: null },
      { ...OPTIONS, tokenUser: null, replace: true },
    ]) {
      const plan = planChanges(loaded, live, options);
      expect(plan.changes.length).toBeGreaterThan(0);
      plan.access = planAccessChanges(plan, live, loaded);
      for (const format of ['text', 'json', 'markdown'] as const)
        expect(renderPlan(plan, format, { color: false })).not.toBe('');
    }
  });
});
