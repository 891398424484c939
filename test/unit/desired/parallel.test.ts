/**
 * Files read by worker threads (src/desired/parallel.ts) give what one thread gives: the same
 * DesiredState (locations, lazily located fields and secrets included) and the same diagnostics,
 * file:line:col, in the same order. Workers run built code, so this test loads the loader from
 * dist/ (a stale build is refused by name, as the CLI tests do).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { staleBuild } from '../../scripts/source-stamp.mjs';
import type { DesiredState } from '../../src/model/state.js';
import type * as Loader from '../../src/desired/index.js';
import type * as Parallel from '../../src/desired/parallel.js';

const stale = staleBuild();
if (stale) throw new Error(`${stale} (this test runs the built loader in worker threads)`);
const { loadDesiredState } = (await import('../../dist/src/desired/index.js')) as typeof Loader;
const { workersFor } = (await import('../../dist/src/desired/parallel.js')) as typeof Parallel;

const dir = mkdtempSync(join(tmpdir(), 'netform-parallel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every located value of a state, as people would be shown it (fields are worked out on first use). */
function locations(state: DesiredState): string[] {
  const out: string[] = [];
  const at = (l: { file: string; line: number; column: number; path?: string; fields?: object } | undefined) => {
    if (!l) return;
    out.push(`${l.file}:${l.line}:${l.column} ${l.path ?? ''}`);
    for (const [k, v] of Object.entries(l.fields ?? {}))
      out.push(`  ${k} ${(v as { line: number }).line}:${(v as { column: number }).column}`);
  };
  for (const u of state.users) {
    at(u.source);
    for (const d of u.devices) at(d.source);
    for (const r of u.rules) at(r.source);
  }
  for (const r of state.rules) at(r.source);
  return out;
}

/** The same load on this thread and in two workers: equal in every way a command can observe. */
async function expectSameBothWays(path: string, env: Record<string, string> = {}): Promise<void> {
  const one = await loadDesiredState(path, { env, workers: 0 });
  const many = await loadDesiredState(path, { env, workers: 2 });
  expect(JSON.stringify(many)).toBe(JSON.stringify(one));
  expect(isDeepStrictEqual(many, one)).toBe(true);
  expect(many.warnings).toEqual(one.warnings);
  if (!one.ok || !many.ok) {
    expect(many.ok).toBe(one.ok);
    if (!many.ok && !one.ok) expect(many.diagnostics).toEqual(one.diagnostics);
    return;
  }
  expect(locations(many.state)).toEqual(locations(one.state));
  // Secrets are made again on this thread: each reads the same (a value, or why there is none).
  const secrets = (s: DesiredState) =>
    s.users.flatMap((u) => [u.password, ...u.devices.map((d) => d.preshared_key)]).map((x) => x?.read());
  expect(secrets(many.state)).toEqual(secrets(one.state));
}

const KEY_A = 'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=';
const KEY_B = 'czTQMxaFqFgu1WLW8vVpN8eaaNkb4fCB491C7dz4iks=';
const KEY_C = 'rB2btKmCw+NpDBh32arkyv470HsMRpDan/kPl7FDczk=';

describe('a folder read by worker threads', () => {
  it('gives the same state, locations and secrets as one thread, aliases included', async () => {
    const path = join(dir, 'team');
    rmSync(path, { recursive: true, force: true });
    mkdirSync(path);
    writeFileSync(
      join(path, 'a.yaml'),
      [
        'version: 1',
        'settings:',
        '  prune: true',
        'users:',
        '  - email: alice@example.com',
        '    role: admin',
        '    password: { env: ALICE_PASSWORD }',
        '    devices:',
        `      - name: laptop`,
        `        public_key: "${KEY_A}"`,
        '        dns: &dns [10.0.0.53, 1.1.1.1]',
        '        preshared_key: { env: NOT_SET }',
        `      - { name: phone, public_key: "${KEY_B}", dns: *dns, mtu: 1380 }`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(path, 'b.yaml'),
      [
        'version: 1',
        'users:',
        '  - &bob',
        '    email: bob@example.com',
        '    role: unprivileged',
        `    devices: [{ name: laptop, public_key: "${KEY_C}" }]`,
        '    rules:',
        '      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "443" }',
        'rules:',
        '  - { action: drop, destination: 10.2.0.0/16 }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(path, 'c.yml'), 'version: 1\nrules:\n  - { action: accept, destination: 10.3.0.0/16 }\n');
    await expectSameBothWays(path, { ALICE_PASSWORD: 'correct horse battery staple' });
    const result = await loadDesiredState(path, { env: {}, workers: 2 });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    // The alias's values are the anchor's, located where the anchor stands (as on one thread).
    const phone = result.state.users[0]!.devices[1]!;
    expect(phone.fields.dns).toEqual(['10.0.0.53', '1.1.1.1']);
    expect(phone.source?.fields?.dns).toMatchObject({ line: 11, column: 19 });
    expect(phone.source?.fields?.mtu).toMatchObject({ line: 13, column: 100 });
    expect(result.warnings?.map((w) => `${w.file}:${w.line}:${w.column}`)).toEqual([
      expect.stringMatching(/a\.yaml:7:15$/),
      expect.stringMatching(/a\.yaml:12:24$/),
    ]);
  });

  it('reports a YAML error in one file, schema and model errors in others, at the same places in the same order', async () => {
    const path = join(dir, 'faulty');
    rmSync(path, { recursive: true, force: true });
    mkdirSync(path);
    writeFileSync(
      join(path, '1-ok.yaml'),
      `version: 1\nusers:\n  - email: dup@example.com\n    role: admin\n    devices: [{ name: a, public_key: "${KEY_A}" }]\n`,
    );
    writeFileSync(join(path, '2-syntax.yaml'), 'version: 1\nusers:\n  - email: x@example.com\n   role: [admin\n');
    writeFileSync(
      join(path, '3-schema.yaml'),
      `version: 1\nusers:\n  - email: dup@example.com\n    role: boss\n  - email: "not an email"\n    rolle: admin\n    devices: [{ name: b, public_key: "${KEY_A}", mtu: 99999 }]\n`,
    );
    writeFileSync(join(path, '4-version.yaml'), 'version: 2\nusers: 3\n');
    writeFileSync(
      join(path, '5-overlap.yaml'),
      'version: 1\nrules:\n  - { action: drop, destination: 10.0.0.0/8 }\n  - { action: drop, destination: 10.1.0.0/16 }\n  - &r { action: accept, destination: 10.9.0.0/33 }\n',
    );
    const one = await loadDesiredState(path, { env: {}, workers: 0 });
    expect(one.ok).toBe(false);
    if (one.ok) return;
    // Each kind is there (the email declared twice is reported at its second place), so the
    // comparison below covers each.
    const files = new Set(one.diagnostics.map((d) => d.file?.split('/').at(-1)));
    expect([...files].sort()).toEqual(['2-syntax.yaml', '3-schema.yaml', '4-version.yaml', '5-overlap.yaml']);
    expect(one.diagnostics.some((d) => d.message.includes('dup@example.com'))).toBe(true);
    await expectSameBothWays(path);
  });

  it('gives the same result on every fixture and example the one-thread tests read', async () => {
    const paths = [
      ...readdirSync('test/fixtures/desired', { withFileTypes: true }).map((e) =>
        join('test/fixtures/desired', e.name),
      ),
      ...readdirSync('examples', { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => join('examples', e.name)),
    ];
    expect(paths.length).toBeGreaterThan(20);
    for (const path of paths) await expectSameBothWays(path);
  });
});

describe('when workers are used', () => {
  it('only when asked for, never more than there are files', () => {
    expect(workersFor(100)).toBe(0); // by default: one thread, whatever the size
    expect(workersFor(5, 0)).toBe(0);
    expect(workersFor(5, 2)).toBe(2);
    expect(workersFor(1, 4)).toBe(1);
  });
});
