/**
 * Every word the user reads is written in src/views: client, model, plan and ops carry codes and
 * the values a sentence needs, and a view words them. This test parses those folders with the
 * TypeScript compiler and fails on a string or template literal that reads like words for people.
 *
 * The rule: a literal (a template's fixed parts joined) that holds three or more words of two or
 * more letters, separated by white space, is words. Import paths and literal types are not
 * literals a view could print, so they are skipped. What may stay is listed below, each with why:
 * protocol text that is not for people, and the files not yet moved, with the count they hold, so
 * that the debt can only shrink (a sentence added back to one of them fails too).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
const FOLDERS = ['src/client', 'src/model', 'src/plan', 'src/ops'];

/** Literals that are protocol, not words for people, by file. */
const PROTOCOL: Record<string, string[]> = {
  // The OIDC scope the server's configuration defaults to: sent to identity providers as it is.
  'src/model/configuration.ts': ['openid email profile'],
  // A placeholder the list reader puts in place of the items it has read; never shown.
  'src/client/list-body.ts': ['\u0000 items read before'],
  // HMAC domain-separation labels of the saved-plan seal: changing one breaks every saved plan.
  'src/plan/seal.ts': ['netform saved-plan seal v1', 'netform saved-plan secret v1', 'netform saved-plan key id v1'],
};

/**
 * Files whose literals are all protocol: Firezone's own 422 and 403 texts, which the bundled
 * server answers with and the client compares with. They are the server's words, not ours.
 */
const PROTOCOL_FILES = new Set(['src/model/messages.ts']);

/**
 * Known debt: files that still hold words for people, with how many literals. Lower a count (or
 * drop the file) when words move to src/views; the test fails until the count is true again.
 */
const KNOWN_DEBT: Record<string, number> = {};

export interface Finding {
  file: string;
  line: number;
  text: string;
}

const WORD = /[A-Za-z][A-Za-z'-]*[A-Za-z]/g;

/** Whether a literal's text reads as words for people (the rule above). */
export function isWords(text: string): boolean {
  if (!/\s/.test(text)) return false;
  return (text.match(WORD) ?? []).length >= 3;
}

/** The literals of one source text that read as words. */
export function wordsIn(file: string, source: string): Finding[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: Finding[] = [];
  const visit = (node: ts.Node): void => {
    let text: string | null = null;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateExpression(node))
      text = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ${} ');
    const parent = node.parent;
    const skipped =
      parent !== undefined &&
      (ts.isImportDeclaration(parent) ||
        ts.isExportDeclaration(parent) ||
        ts.isLiteralTypeNode(parent) ||
        ts.isExternalModuleReference(parent));
    if (text !== null && !skipped && isWords(text)) {
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      found.push({ file, line, text });
    }
    if (ts.isTemplateExpression(node)) node.templateSpans.forEach((s) => visit(s.expression));
    else ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.includes('generated'))
    .map((f) =>
      relative(ROOT, join(ROOT, folder, f))
        .split('\\')
        .join('/'),
    )
    .sort();
}

function findings(): Map<string, Finding[]> {
  const byFile = new Map<string, Finding[]>();
  for (const folder of FOLDERS)
    for (const file of sourceFiles(folder)) {
      if (PROTOCOL_FILES.has(file)) continue;
      const allowed = new Set(PROTOCOL[file] ?? []);
      const words = wordsIn(file, readFileSync(join(ROOT, file), 'utf8')).filter((f) => !allowed.has(f.text));
      if (words.length > 0) byFile.set(file, words);
    }
  return byFile;
}

describe('words for people live in src/views', () => {
  it('client, model, plan and ops hold no sentence but the protocol and the listed debt', () => {
    const byFile = findings();
    const problems: string[] = [];
    for (const [file, words] of byFile) {
      const debt = KNOWN_DEBT[file];
      if (debt === undefined)
        problems.push(
          ...words.map((w) => `${w.file}:${w.line}: words for people belong in src/views: ${JSON.stringify(w.text)}`),
        );
      else if (words.length !== debt)
        problems.push(`${file}: ${words.length} literals of words, KNOWN_DEBT says ${debt}: set it to ${words.length}`);
    }
    for (const file of Object.keys(KNOWN_DEBT))
      if (!byFile.has(file)) problems.push(`${file}: no words left: drop it from KNOWN_DEBT`);
    expect(problems).toEqual([]);
  });

  it('finds a sentence put back into the domain, in a string, a template or an error', () => {
    const source = [
      "const a = 'connection refused: is the server running?';",
      'const b = `${where}: pass --ca-file CA.pem to trust the certificate`;',
      "throw new OpError('request', 'give --base REF or --live');",
    ].join('\n');
    expect(wordsIn('x.ts', source).map((f) => f.line)).toEqual([1, 2, 3]);
  });

  it('leaves codes, keys, paths, headers and imports alone', () => {
    const source = [
      "import { x } from '../model/some-thing.js';",
      "type Kind = 'not in the plan';",
      "const codes = ['not_reviewed', 'host_not_found', 'content-type', '/v0/users', 'GET'];",
      'const key = `${kind}:${email}/${name}`;',
      "const header = { 'retry-after': '10' };",
    ].join('\n');
    expect(wordsIn('x.ts', source)).toEqual([]);
  });
});
