/**
 * ARCHITECTURE.md's layout is a map of the present tree: every folder of src/ and server/ that
 * holds source files has exactly one entry, saying what lives there and what it uses, and no entry
 * names a folder that is gone. An entry is a list item of the "Layout" section that starts with
 * the folder's path in backticks, ending in a slash: "- `src/plan/` — ...".
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const MAPPED = ['src', 'server'];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** The Layout section's entries: each list item's leading path in backticks, with its text. */
function entriesOf(markdown: string): { folder: string; text: string }[] {
  const start = markdown.search(/^## Layout$/m);
  if (start < 0) throw new Error('ARCHITECTURE.md has no "## Layout" section');
  const rest = markdown.slice(start + 1);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  const entries: { folder: string; text: string }[] = [];
  for (const line of section.split('\n')) {
    const item = /^\s*[-*] `([^`]+)`/.exec(line);
    if (item) entries.push({ folder: item[1]!, text: line });
    else if (entries.length > 0 && /^\s+\S/.test(line) && !/^\s*[-*] /.test(line))
      entries[entries.length - 1]!.text += ' ' + line.trim();
  }
  return entries;
}

/** Every folder under `top` (itself included) that holds a source file, as `top/a/b/`. */
function sourceFolders(top: string): string[] {
  const folders = new Set<string>();
  for (const entry of readdirSync(join(ROOT, top), { withFileTypes: true, recursive: true }))
    if (entry.isFile() && SOURCE.test(entry.name)) folders.add(relative(ROOT, entry.parentPath) + '/');
  return [...folders].sort();
}

const entries = entriesOf(readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8'));

describe('ARCHITECTURE.md, "Layout"', () => {
  it('reads entries from list items that start with a path in backticks, their text running on', () => {
    const sample = [
      '## Layout',
      '- `src/a/` — one thing. Uses: nothing',
      '  of ours.',
      '  - `src/a/b/` — a nested one.',
      'Not an entry: `src/c/`.',
      '## Next',
      '- `src/d/` — outside the section',
    ].join('\n');
    expect(entriesOf(sample)).toEqual([
      { folder: 'src/a/', text: '- `src/a/` — one thing. Uses: nothing of ours.' },
      { folder: 'src/a/b/', text: '  - `src/a/b/` — a nested one.' },
    ]);
  });

  it('has one entry for every folder of src/ and server/ that holds source files', () => {
    const folders = MAPPED.flatMap(sourceFolders);
    expect(folders).toContain('src/plan/');
    const mapped = new Set(entries.map((e) => e.folder));
    expect(
      folders.filter((f) => !mapped.has(f)),
      'add an entry to ARCHITECTURE.md "Layout": what lives there, and what it uses',
    ).toEqual([]);
  });

  it('names each folder once, as a folder that exists', () => {
    const names = entries.map((e) => e.folder);
    expect(
      names.filter((name, i) => names.indexOf(name) !== i),
      'entries named twice',
    ).toEqual([]);
    expect(
      names.filter(
        (name) => !name.endsWith('/') || !existsSync(join(ROOT, name)) || !statSync(join(ROOT, name)).isDirectory(),
      ),
      'entries for folders that are gone (or paths that are not folders)',
    ).toEqual([]);
  });

  it('says, for each folder of src/ and server/, what it uses', () => {
    const mappedEntries = entries.filter((e) => MAPPED.some((top) => e.folder.startsWith(top + '/')));
    expect(mappedEntries.filter((e) => !/\bUses: \S/.test(e.text)).map((e) => e.folder)).toEqual([]);
  });
});
