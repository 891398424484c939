/** containment.ts on real files: where a path really leads, and the bounds of what is read. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  containmentOf,
  DESIRED_STATE_MAX_BYTES,
  escapeFrom,
  readContainedFileSync,
  readDesiredStateFile,
  realLocation,
} from '../../../src/desired/containment.js';

describe('containment', () => {
  let repo: string;
  let outside: string;
  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), 'netform-containment-'));
    outside = mkdtempSync(join(tmpdir(), 'netform-containment-out-'));
    mkdirSync(join(repo, '.git'));
    mkdirSync(join(repo, 'desired'));
  });
  afterEach(() => {
    rmSync(repo, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('places a missing file behind a symlinked folder where reading it would go', () => {
    symlinkSync(outside, join(repo, 'desired', 'out'));
    expect(realLocation(join(repo, 'desired', 'out', 'not', 'there.psk'))).toBe(
      join(realLocation(outside), 'not', 'there.psk'),
    );
    const within = containmentOf(join(repo, 'desired'), 'unused');
    expect(within.folder).toBe(repo);
    expect(escapeFrom(join(repo, 'desired', 'out', 'missing.psk'), within)).toMatch(
      /^is in a symlinked folder that leads outside the repository \(/,
    );
    // A dangling symlink that points outside is still one.
    symlinkSync(join(outside, 'gone.psk'), join(repo, 'desired', 'gone.psk'));
    expect(escapeFrom(join(repo, 'desired', 'gone.psk'), within)).toMatch(
      /^is a symlink to a file outside the repository/,
    );
  });

  it('does not take another checkout reached through a symlink for a repository of its own', () => {
    mkdirSync(join(outside, '.git'));
    mkdirSync(join(outside, 'nested', '.git'), { recursive: true });
    writeFileSync(join(outside, 'netform.yaml'), 'version: 1\n');
    symlinkSync(outside, join(repo, 'linked'));
    for (const folder of [join(repo, 'linked'), join(repo, 'linked', 'nested')]) {
      const within = containmentOf(folder, 'unused');
      expect(within.folder, folder).toBe(repo);
      expect(escapeFrom(join(folder, 'netform.yaml'), within)).toMatch(/outside the repository/);
    }
    // A submodule that really lies inside is a repository of its own; the outer one is outside it.
    mkdirSync(join(repo, 'sub', '.git'), { recursive: true });
    expect(containmentOf(join(repo, 'sub'), 'unused').folder).toBe(join(repo, 'sub'));
    expect(escapeFrom(join(repo, 'x.psk'), containmentOf(join(repo, 'sub'), 'unused'))).toMatch(/^is outside/);
  });

  it('allows names that merely start with two dots', () => {
    writeFileSync(join(repo, '..secret.psk'), 'x');
    const within = containmentOf(join(repo, 'desired'), 'unused');
    expect(escapeFrom(join(repo, '..secret.psk'), within)).toBeNull();
    expect(escapeFrom(join(repo, '..', 'x.psk'), within)).toMatch(/^is outside the repository/);
  });

  it('bounds the desired state in total, not only per file', async () => {
    const file = join(repo, 'desired', 'b.yaml');
    writeFileSync(file, 'version: 1\n'.repeat(3));
    const within = containmentOf(join(repo, 'desired'), 'unused');
    expect(await readDesiredStateFile(file, within, 0)).toHaveProperty('bytes');
    expect(await readDesiredStateFile(file, within, DESIRED_STATE_MAX_BYTES - 10)).toEqual({
      problem: 'takes the desired state past 256 MiB in total, the limit for the desired state; it is not read',
    });
  });

  it('stops a read at the bound, whatever the file says its size is', () => {
    const file = join(repo, 'desired', 'a.psk');
    writeFileSync(file, 'x'.repeat(101));
    const limit = { bytes: 100, tooLarge: (size: number) => `is larger than 100 bytes (${size} seen)` };
    expect(() => readContainedFileSync(file, null, limit)).toThrow('is larger than 100 bytes (101 seen)');
    expect(readContainedFileSync(file, null, { ...limit, bytes: 101 }).length).toBe(101);
  });
});
