/** What a valid desired state loads into: the DesiredState the planner receives. */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countDeclarations, loadDesiredState } from '../../../src/desired/index.js';
import { Secret } from '../../../src/model/secret.js';
import type { DesiredState } from '../../../src/model/state.js';

const BASIC_ENV = {};

async function load(path: string, env: Record<string, string> = {}): Promise<DesiredState> {
  const result = await loadDesiredState(path, { env });
  if (!result.ok)
    throw new Error(
      result.diagnostics.map((d) => `${d.file}:${d.line}:${d.column}: ${d.path}: ${d.message}`).join('\n'),
    );
  return result.state;
}

describe('the examples', () => {
  it('examples/basic validates and loads every declaration', async () => {
    const state = await load('examples/basic/netform.yaml', BASIC_ENV);
    expect(countDeclarations(state)).toEqual({ users: 5, devices: 6, rules: 7 });
    expect(state.sources).toEqual(['examples/basic/netform.yaml']);
    expect(state.settings).toMatchObject({
      prune: false,
      manage: { users: ['*@example.com'], rules: ['10.0.0.0/8'] },
      protect: { users: ['alice@example.com'] },
      limits: { delete: { kind: 'percent', value: 10 }, update: { kind: 'percent', value: 30 } },
    });
    expect(state.absent.users.map((a) => a.email)).toEqual(['mallory@example.com']);
    expect(state.absent.devices.map(({ user, name }) => ({ user, name }))).toEqual([
      { user: 'bob@example.com', name: 'old-phone' },
    ]);
  });

  it('examples/basic loads with no environment (its secrets are example files)', async () => {
    const result = await loadDesiredState('examples/basic', { env: {} });
    expect(result.ok).toBe(true);
  });

  it('examples/multi-team: each team folder validates with no environment, merged from several files', async () => {
    const payments = await load('examples/multi-team/payments');
    expect(payments.sources).toEqual([
      'examples/multi-team/payments/people.yaml',
      'examples/multi-team/payments/rules.yaml',
      'examples/multi-team/payments/settings.yaml',
    ]);
    expect(payments.settings.manage).toEqual({ users: ['*@payments.example.com'], rules: ['10.20.0.0/16'] });
    expect(payments.settings.limits).toEqual({
      delete: { kind: 'count', value: 5 },
      update: { kind: 'percent', value: 25 },
    });
    expect(countDeclarations(payments)).toEqual({ users: 2, devices: 2, rules: 3 });
    const search = await load('examples/multi-team/search');
    expect(search.sources.map((s) => s.split('/').pop())).toEqual(['people.yaml', 'rules.yml', 'settings.yaml']);
    expect(countDeclarations(search)).toEqual({ users: 2, devices: 3, rules: 4 });
  });
});

describe('loading', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netform-desired-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('applies the use_default shorthand unless the file states the flag', async () => {
    const state = await load('examples/basic/netform.yaml', BASIC_ENV);
    const alice = state.users[0]!;
    expect(alice.devices[0]!.fields).toEqual({
      description: "Alice's work laptop",
      public_key: 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=',
      allowed_ips: ['10.0.0.0/8'],
      mtu: 1380,
      use_default_allowed_ips: false,
      use_default_mtu: false,
    });
    // Nothing given: nothing managed, no flag invented.
    expect(alice.devices[1]!.fields).toEqual({ public_key: 'czTQMxaFqFgu1WLW8vVpN8eaaNkb4fCB491C7dz4iks=' });
    const bob = state.users[1]!.devices[0]!.fields;
    expect(bob).toMatchObject({
      use_default_dns: false,
      use_default_endpoint: false,
      use_default_persistent_keepalive: false,
    });
    expect(bob.use_default_mtu).toBeUndefined();
  });

  it('resolves secrets into Secret objects holding the reference, relative to the declaring file', async () => {
    const state = await load('examples/basic/netform.yaml', BASIC_ENV);
    const [alice, bob] = state.users;
    expect(alice!.password).toBeInstanceOf(Secret);
    expect(alice!.password!.reveal()).toBe('an-example-password');
    expect(alice!.password!.ref).toEqual({ file: 'secrets/example-alice.password', baseDir: 'examples/basic' });
    expect(bob!.password!.reveal()).toBe('example-only-bob-password');
    expect(bob!.password!.ref).toEqual({ file: 'secrets/example-bob.password', baseDir: 'examples/basic' });
    const psk = alice!.devices[0]!.preshared_key!;
    expect(psk.reveal()).toBe('2ZMa7htbbmXCkIQhmVMyh9BxJ+kZwD+mEhINraSX86I=');
    expect(JSON.stringify(state)).not.toContain('2ZMa7htbbmXCkIQhmVMyh9BxJ');
    expect(inspect(state, { depth: 10 })).not.toContain('basic-example-password');
  });

  it('records where each declaration and each of its values stands', async () => {
    const state = await load('examples/basic/netform.yaml', BASIC_ENV);
    const laptop = state.users[0]!.devices[0]!;
    expect(laptop.source).toMatchObject({
      file: 'examples/basic/netform.yaml',
      line: 26,
      column: 9,
      path: 'users[0].devices[0]',
    });
    expect(laptop.source!.fields!.mtu).toMatchObject({ line: 31, column: 14, path: 'users[0].devices[0].mtu' });
    expect(state.rules[0]!.source).toMatchObject({ line: 72, column: 5, path: 'rules[0]' });
  });

  it('reads rules as written, a port given as a number as text, and all ports as null', async () => {
    writeFileSync(
      join(dir, 'rules.yaml'),
      'version: 1\nrules:\n  - { action: accept, destination: 10.0.0.0/8, port_type: tcp, port_range: 443 }\n  - { action: drop, destination: "fd00::/8" }\n',
    );
    const state = await load(join(dir, 'rules.yaml'));
    expect(state.rules.map(({ source: _, ...rule }) => rule)).toEqual([
      { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '443' },
      { action: 'drop', destination: 'fd00::/8', port_type: null, port_range: null },
    ]);
  });

  it('reads every *.yaml and *.yml file of a folder in name order, skipping dot files and subfolders', async () => {
    writeFileSync(join(dir, 'b.yml'), 'version: 1\nusers: [{ email: b@example.com }]\n');
    writeFileSync(join(dir, 'a.yaml'), 'version: 1\nusers: [{ email: a@example.com }]\n');
    writeFileSync(join(dir, '.draft.yaml'), 'not: [valid\n');
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    mkdirSync(join(dir, 'other-team'));
    writeFileSync(join(dir, 'other-team', 'c.yaml'), 'version: 1\nusers: [{ email: a@example.com }]\n');
    const state = await load(dir);
    expect(state.users.map((u) => u.email)).toEqual(['a@example.com', 'b@example.com']);
    expect(state.sources).toEqual([
      relative(process.cwd(), join(dir, 'a.yaml')),
      relative(process.cwd(), join(dir, 'b.yml')),
    ]);
  });

  it('merges the documents of a multi-document file; settings default when no file declares them', async () => {
    writeFileSync(
      join(dir, 'all.yaml'),
      'version: 1\nusers: [{ email: a@example.com }]\n---\nversion: 1\nrules: [{ action: drop, destination: 10.0.0.0/8 }]\n---\n',
    );
    const state = await load(join(dir, 'all.yaml'));
    expect(state.users).toHaveLength(1);
    expect(state.rules).toHaveLength(1);
    expect(state.settings).toEqual({
      prune: false,
      manage: { users: null, rules: null },
      protect: { users: [] },
      limits: {},
    });
  });

  it('reports errors of every file in one run: syntax first, then the others in reading order, cross-file checks skipped', async () => {
    writeFileSync(
      join(dir, 'a.yaml'),
      'version: 1\nusers:\n  - email: a@example.com\n    devices: [{ name: x, public_key: nope }]\n',
    );
    writeFileSync(join(dir, 'b.yaml'), 'version: 1\nusers: [\n');
    writeFileSync(
      join(dir, 'c.yaml'),
      'version: 1\nrules: [{ action: drop, destination: 10.0.0.0/8, colour: red }]\nusers: [{ email: A@example.com }]\n',
    );
    const result = await loadDesiredState(dir, { env: {} });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const file = (name: string) => relative(process.cwd(), join(dir, name));
    expect(result.diagnostics.map((d) => [d.file, d.line, d.column, d.path])).toEqual([
      [file('b.yaml'), 3, 1, undefined],
      [file('a.yaml'), 4, 38, 'users[0].devices[0].public_key'],
      [file('c.yaml'), 2, 50, 'rules[0].colour'],
      // c.yaml's A@example.com, also declared in a.yaml, is not reported: b.yaml could not be parsed.
      [undefined, undefined, undefined, undefined],
    ]);
    expect(result.diagnostics.at(-1)!.message).toMatch(
      /^checks across files .* were skipped because a file could not be read or parsed/,
    );
  });

  it('one YAML slip: the syntax error first, no "no user is declared" from a test naming a user of that file', async () => {
    writeFileSync(
      join(dir, 'global.yaml'),
      'version: 2\nusers: [{ email: a@example.com }]\ntests:\n  - { name: frank reaches the web, from: frank@example.com, to: "10.0.0.1:443/tcp", expect: drop }\n',
    );
    writeFileSync(join(dir, 'security.yaml'), 'version: 2\nusers:\n  - email: frank@example.com\n role: admin\n');
    const result = await loadDesiredState(dir, { env: {} });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics[0]!.file).toBe(relative(process.cwd(), join(dir, 'security.yaml')));
    expect(result.diagnostics[0]!.message).toMatch(/^YAML syntax: /);
    expect(result.diagnostics.map((d) => d.message).join('\n')).not.toContain('is declared');
    expect(result.diagnostics).toHaveLength(2);
  });

  it('refuses a document whose aliases expand without bound', async () => {
    const lines = ['version: 1', 'a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++)
      lines.push(
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(', ')}]`,
      );
    writeFileSync(join(dir, 'bomb.yaml'), `${lines.join('\n')}\n`);
    const result = await loadDesiredState(join(dir, 'bomb.yaml'), { env: {} });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.diagnostics[0]!.message).toMatch(/^YAML: .*alias/i);
  });
});
