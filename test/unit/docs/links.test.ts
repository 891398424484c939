/** A clone is complete: the project's documents link only to files inside the repository, and those exist. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DOCUMENTS = ['README.md', 'ARCHITECTURE.md', 'docs/api-v0.md', 'docs/ci.md', 'docs/saved-plans.md'];

function links(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^(https?:|mailto:|#)/.test(l));
}

describe.each(DOCUMENTS)('%s', (document) => {
  const text = readFileSync(join(ROOT, document), 'utf8');

  it('names no path outside the repository', () => {
    expect(text).not.toMatch(/\.\.\/shared|\.\.\/seed/);
    for (const link of links(text))
      expect(resolve(ROOT, dirname(document), link).startsWith(ROOT + '/'), link).toBe(true);
  });

  it('links only to files that exist', () => {
    for (const link of links(text))
      expect(existsSync(resolve(ROOT, dirname(document), link.split('#')[0]!)), link).toBe(true);
  });
});
