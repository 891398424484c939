/**
 * Saved plans keep their notes in words while plans made now carry codes (src/plan/notes.ts,
 * worded by src/views/notes.ts). A saved plan written by the release before that change
 * (test/fixtures/saved-plan-notes, with the embedded server's database it was made against) still
 * loads with its seal, applies with the output that release printed, and, as a reviewed plan,
 * keeps every change it shows; a plan saved now from the same files and server is the document
 * that release wrote, but for its time, server and seal, and its access delta written in version 2
 * (read back, the release's version 1 delta).
 */
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expandAccessDelta } from '../../../src/access/delta-sets.js';
import { canonicalJson } from '../../../src/plan/canonical.js';
import { parseSavedPlan } from '../../../src/plan/planfile.js';
import { PlanKey } from '../../../src/plan/seal.js';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { describeResult } from '../../helpers/workspace.js';

const FIXTURE = new URL('../../fixtures/saved-plan-notes/', import.meta.url);
const KEY_TEXT = 'notes-fixture-key-0123456789abcdefghijklmnop';
const KEY = PlanKey.from({ NETFORM_PLAN_KEY: KEY_TEXT }, () => '');
const ENV = {
  NETFORM_PLAN_KEY: KEY_TEXT,
  NETFORM_URL: undefined,
  NETFORM_TOKEN: undefined,
  NETFORM_TOKEN_USER: undefined,
};

const fixture = (name: string) => readFileSync(new URL(name, FIXTURE), 'utf8');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A folder holding the server as the fixture's plan saw it (`db.sqlite`), the files it was made
 * from (`after/`), and the plan pointed at that database, sealed again with the same key (the
 * `server` member names the database by its path).
 */
function serverFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'netform-notes-'));
  dirs.push(dir);
  copyFileSync(new URL('db-before.sqlite', FIXTURE), join(dir, 'db.sqlite'));
  cpSync(new URL('after', FIXTURE), join(dir, 'after'), { recursive: true });
  const doc = { ...JSON.parse(fixture('plan.json')), server: `embedded:${join(dir, 'db.sqlite')}` };
  delete doc.seal;
  doc.seal = KEY.sealOf(canonicalJson(doc));
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(doc, null, 2));
  return dir;
}

/** Output as the fixture records it: the folder as DIR, each write's duration as N. */
function shown(result: CliResult, dir: string): string {
  return result.stdout
    .split(dir)
    .join('DIR')
    .replace(/\((\d+)\.\d s\)/g, '(N s)');
}

async function expectMatchesAfterApply(dir: string): Promise<void> {
  const after = await runCli(['plan', '--embedded', 'db.sqlite', '-f', 'after'], { cwd: dir, env: ENV });
  // Only the admin a guard keeps is left: the release's plan says so in the same words.
  expect(after.code, describeResult(after)).toBe(2);
  expect(shown(after, dir)).toBe(fixture('expected/plan-after.txt'));
}

describe('a saved plan written by the release before notes became codes', { timeout: 120_000 }, () => {
  it('loads: its seal verifies under its key, and its notes are the words it was written with', () => {
    const plan = parseSavedPlan(fixture('plan.json'), 'plan.json', KEY);
    expect(plan.format_version).toBe(3);
    expect(plan.changes.map((c) => c.note)).toEqual([
      "now managed: the file leaves mtu out, which means use_default_mtu: true (the server's default)",
      'renamed from ann@notes.test (renamed_from): its devices and rules stay',
      'renamed from laptop: one update of its name; keys, addresses and preshared key stay',
      expect.stringMatching(/^moved from bea@notes\.test\/phone \(the live device that holds its public key\)/),
      expect.stringMatching(/^replaces the live rule accept 10\.1\.0\.0\/16 tcp 443 \(bea@notes\.test\): deleted/),
      'declared in no file (prune)',
      'declared in no file (prune)',
      'listed under absent',
    ]);
  });

  it('applies as that release applied it, with the same output', async () => {
    const dir = serverFolder();
    const applied = await runCli(['apply', '--embedded', 'db.sqlite', 'plan.json'], { cwd: dir, env: ENV });
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(shown(applied, dir)).toBe(fixture('expected/apply-saved.txt'));
    await expectMatchesAfterApply(dir);
  });

  it('as the reviewed plan of apply -f, keeps every change it shows (notes compared in words)', async () => {
    const dir = serverFolder();
    const applied = await runCli(['apply', '--embedded', 'db.sqlite', '-f', 'after', '--reviewed', 'plan.json'], {
      cwd: dir,
      env: ENV,
    });
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stderr).not.toContain('withheld');
    expect(shown(applied, dir)).toBe(fixture('expected/apply-reviewed.txt'));
    await expectMatchesAfterApply(dir);
  });

  it('is the plan saved now from the same files and server, but for its time, server and seal', async () => {
    const dir = serverFolder();
    const planned = await runCli(['plan', '--embedded', 'db.sqlite', '-f', 'after', '-o', 'now.json'], {
      cwd: dir,
      env: ENV,
    });
    expect(planned.code, describeResult(planned)).toBe(2);
    // The access delta is written in its version 2 now (region sets): read back, it is the release's.
    const volatile = ({
      created_at: _c,
      server: _s,
      seal: _seal,
      access_delta: _a,
      ...rest
    }: Record<string, unknown>) => rest;
    const now = JSON.parse(readFileSync(join(dir, 'now.json'), 'utf8'));
    const then = JSON.parse(fixture('plan.json'));
    expect(volatile(now)).toEqual(volatile(then));
    expect(Object.keys(now)).toEqual(Object.keys(then));
    expect(now.access_delta.version).toBe(2);
    expect({ ...expandAccessDelta(now.access_delta), version: 1 }).toEqual(then.access_delta);
  });
});
