/**
 * The operations pass nothing of the domain through: no `export … from '../<folder>/…'` in
 * src/ops. The command line imports a domain module it needs from where it lives, where the
 * dependency rules (.dependency-cruiser.cjs, CLI_DOMAIN) name it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const OPS = join(import.meta.dirname, '../../../src/ops');

/** The modules outside src/ops that a source text re-exports from. */
function reExports(source: string): string[] {
  const sf = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, false);
  return sf.statements
    .filter(ts.isExportDeclaration)
    .map((s) => (s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) ? s.moduleSpecifier.text : ''))
    .filter((from) => from.startsWith('../'));
}

describe('src/ops re-exports nothing of the domain', () => {
  it('has no export … from outside src/ops', () => {
    const found = readdirSync(OPS)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => reExports(readFileSync(join(OPS, f), 'utf8')).map((from) => `src/ops/${f}: ${from}`));
    expect(found).toEqual([]);
  });

  it('sees one', () => {
    expect(reExports("export { PlanKey } from '../plan/seal.js';\nexport { OpError } from './errors.js';")).toEqual([
      '../plan/seal.js',
    ]);
  });
});
