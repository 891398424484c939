/**
 * The dependency rules (.dependency-cruiser.cjs) are about the present tree: every folder a rule
 * names exists under src/, every top-level folder of src/ is named by some rule (a new folder is
 * placed in the layers, not left free of them), and the domain folders the rules check are the
 * ones ARCHITECTURE.md's "Dependency rules" lists for ops.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

interface Rule {
  name: string;
  from: Record<string, unknown>;
  to: Record<string, unknown>;
}
const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: Rule[] };

/** The path patterns of one side of a rule (`path` and `pathNot`, a string or a list). */
function patternsOf(side: Record<string, unknown>): string[] {
  return [side.path, side.pathNot].flat().filter((p): p is string => typeof p === 'string');
}

/** The folders of src/ a pattern names: `^src/plan/` gives plan, `^src/(a|b)/` gives a and b. */
function srcFoldersOf(pattern: string): string[] {
  const folders: string[] = [];
  for (const match of pattern.matchAll(/\^src\/(?:\(([\w|-]+)\)|([\w-]+))\//g))
    folders.push(...(match[1] ?? match[2]!).split('|'));
  return folders;
}

const named = new Set(
  config.forbidden.flatMap((rule) => [...patternsOf(rule.from), ...patternsOf(rule.to)].flatMap(srcFoldersOf)),
);

describe('.dependency-cruiser.cjs', () => {
  it('reads folder names from path patterns', () => {
    expect(srcFoldersOf('^src/(access|apply)/')).toEqual(['access', 'apply']);
    expect(srcFoldersOf('^src/cli/(run|io)\\.ts$')).toEqual(['cli']);
    expect(srcFoldersOf('^src/index\\.ts$')).toEqual([]);
  });

  it('names only folders of src/ that exist', () => {
    expect(named.size).toBeGreaterThan(5);
    expect(
      [...named].filter(
        (folder) => !existsSync(join(ROOT, 'src', folder)) || !statSync(join(ROOT, 'src', folder)).isDirectory(),
      ),
      'folders the rules name that are gone',
    ).toEqual([]);
  });

  it('names every top-level folder of src/ in some rule', () => {
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders).toContain('plan');
    expect(
      folders.filter((folder) => !named.has(folder)),
      'place the folder in the rules, and in ARCHITECTURE.md "Dependency rules"',
    ).toEqual([]);
  });

  it('checks the domain folders ARCHITECTURE.md lists for ops', () => {
    const rule = config.forbidden.find((r) => r.name === 'domain-below-workflows');
    expect(rule, 'the rule domain-below-workflows').toBeDefined();
    const inRules = patternsOf(rule!.from).flatMap(srcFoldersOf).sort();
    const architecture = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
    const listed = /^- `ops` → the domain folders \(([^)]*)\)/m.exec(architecture);
    expect(listed, 'ARCHITECTURE.md: "- `ops` → the domain folders (...)"').not.toBeNull();
    const inArchitecture = [...listed![1]!.matchAll(/`([\w-]+)`/g)].map((m) => m[1]!).sort();
    expect(inRules).toEqual(inArchitecture);
  });
});
