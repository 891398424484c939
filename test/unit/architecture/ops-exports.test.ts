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

/**
 * The modules outside src/ops that a source text re-exports from: `export … from '../…'`, or an
 * `export { name }` of a binding imported from there.
 */
function reExports(source: string): string[] {
  const sf = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, false);
  const importedFrom = new Map<string, string>();
  for (const s of sf.statements) {
    if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue;
    const bindings = s.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings))
      for (const e of bindings.elements) importedFrom.set(e.name.text, s.moduleSpecifier.text);
    if (s.importClause?.name) importedFrom.set(s.importClause.name.text, s.moduleSpecifier.text);
  }
  return sf.statements
    .filter(ts.isExportDeclaration)
    .flatMap((s) => {
      if (s.moduleSpecifier) return ts.isStringLiteral(s.moduleSpecifier) ? [s.moduleSpecifier.text] : [];
      if (!s.exportClause || !ts.isNamedExports(s.exportClause)) return [];
      return s.exportClause.elements.map((e) => importedFrom.get((e.propertyName ?? e.name).text) ?? '');
    })
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
    expect(reExports("import { a, b } from '../access/x.js';\nimport { c } from './y.js';\nexport { a, c };")).toEqual([
      '../access/x.js',
    ]);
  });
});
