/**
 * Comments in src/ and server/ say which behaviour a line guards, never which work item, issue or
 * review finding it came from: a newcomer can read "secrets are read where they are used", not
 * "W3.6". Where a change came from is what `git log` is for. A reference to another project's issue,
 * qualified with its name (`firezone#12684`), is a fact about that project and stays.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** Written by `npm run generate:cdktf`, not by hand: its comments are the generator's. */
const GENERATED = 'src/cdktf/generated';

/** What names a work item rather than a behaviour, each with what it looks like. */
const ITEM_LABELS: readonly { pattern: RegExp; what: string }[] = [
  { pattern: /\bW\d+\.\d+\b/, what: 'a work item (W3.6)' },
  { pattern: /\bwaves? \d+\b/i, what: 'a wave of work' },
  { pattern: /\bissues? #?\d+\b/i, what: 'an issue number' },
  // `#123` alone is one of ours; `firezone#123` or `owner/name#123` names another project's.
  { pattern: /(?<![\w/.-])#\d+\b/, what: 'an issue or pull request number' },
  { pattern: /\breview\b[^.;:()]{0,20}\b[A-Z]\d+\b/, what: 'a review finding label' },
  { pattern: /\bcode-review-\d{4}/, what: 'a review document outside the repository' },
];

const K = ts.SyntaxKind;
/** Tokens after which `/` divides; after any other, it starts a regular expression. */
const VALUE_END = new Set([
  K.Identifier,
  K.PrivateIdentifier,
  K.NumericLiteral,
  K.BigIntLiteral,
  K.StringLiteral,
  K.NoSubstitutionTemplateLiteral,
  K.TemplateTail,
  K.RegularExpressionLiteral,
  K.CloseParenToken,
  K.CloseBracketToken,
  K.CloseBraceToken,
  K.ThisKeyword,
  K.SuperKeyword,
  K.TrueKeyword,
  K.FalseKeyword,
  K.NullKeyword,
  K.PlusPlusToken,
  K.MinusMinusToken,
]);

/**
 * Every comment of a TypeScript text, with the line it starts on (1-based). TypeScript's own
 * scanner finds them; a `/` is a regular expression where no value ends before it, and a `}` that
 * closes a template's `${` goes on with the template. (Parsing every file to tell these apart
 * costs several times as much, and found the same comments in src/.)
 */
function commentsOf(text: string): { line: number; text: string }[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const found: { line: number; text: string }[] = [];
  const inTemplate: boolean[] = [];
  let previous = K.Unknown;
  let line = 1;
  let counted = 0;
  for (let kind = scanner.scan(); kind !== K.EndOfFileToken; kind = scanner.scan()) {
    if (kind === K.WhitespaceTrivia || kind === K.NewLineTrivia) continue;
    if (kind === K.SingleLineCommentTrivia || kind === K.MultiLineCommentTrivia) {
      const start = scanner.getTokenStart();
      for (; counted < start; counted++) if (text.charCodeAt(counted) === 10) line++;
      found.push({ line, text: scanner.getTokenText() });
      continue;
    }
    if ((kind === K.SlashToken || kind === K.SlashEqualsToken) && !VALUE_END.has(previous))
      kind = scanner.reScanSlashToken();
    else if (kind === K.OpenBraceToken) inTemplate.push(false);
    else if (kind === K.TemplateHead) inTemplate.push(true);
    else if (kind === K.CloseBraceToken && inTemplate.pop()) {
      kind = scanner.reScanTemplateToken(false);
      if (kind === K.TemplateMiddle) inTemplate.push(true);
    }
    previous = kind;
  }
  return found;
}

/** The labels a comment names, as `what: match`. */
function itemLabelsIn(comment: string): string[] {
  return ITEM_LABELS.flatMap(({ pattern, what }) => {
    const match = pattern.exec(comment);
    return match ? [`${what}: ${match[0]}`] : [];
  });
}

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .filter((path) => !path.startsWith(GENERATED + '/'));
}

describe('comments name behaviours', () => {
  it('finds every comment, and none inside strings, templates or regular expressions', () => {
    const text = [
      '/** A header (W3.6). */',
      "const a = 'not // a comment W3.6';",
      'const b = `${a} /* nor this #12 */`;',
      'const c = /\\/\\/ nor this/; // a trailing one #7',
      'function f(/* inside a list */) {}',
      'const d = `x${ {k: 1}.k /* in an expression */ }y${`z${1}`} // still text` + 4 / 2 / 1; // after a division',
      'const e = !/[/]/.test(a) ? 1 : 2; /* after a regular expression */',
      '// the last line, issue 13',
    ].join('\n');
    expect(commentsOf(text)).toEqual([
      { line: 1, text: '/** A header (W3.6). */' },
      { line: 4, text: '// a trailing one #7' },
      { line: 5, text: '/* inside a list */' },
      { line: 6, text: '/* in an expression */' },
      { line: 6, text: '// after a division' },
      { line: 7, text: '/* after a regular expression */' },
      { line: 8, text: '// the last line, issue 13' },
    ]);
  });

  it('knows a work item from a behaviour, and another project’s issue from ours', () => {
    expect(itemLabelsIn('// read where used (W3.6)')).toEqual(['a work item (W3.6): W3.6']);
    expect(itemLabelsIn('// the fleet of issue 13')).toEqual(['an issue number: issue 13']);
    expect(itemLabelsIn('// fixed in #41')).toEqual(['an issue or pull request number: #41']);
    expect(itemLabelsIn('// the token leaked (security review F1)')).toEqual(['a review finding label: review F1']);
    expect(itemLabelsIn('// landed in wave 4')).toEqual(['a wave of work: wave 4']);
    expect(itemLabelsIn('// clients with firezone#12684 route by filter')).toEqual([]);
    expect(itemLabelsIn('// RFC 4291 §2.5.5.1; docs/rule-semantics.md §5.1; C0 and C1 controls; V8')).toEqual([]);
  });

  it.each(['src', 'server'])('no comment in %s/ names a work item, an issue or a review finding', (folder) => {
    const files = sourceFiles(folder);
    expect(files.length).toBeGreaterThan(10);
    const offenders = files.flatMap((path) =>
      commentsOf(readFileSync(join(ROOT, path), 'utf8')).flatMap(({ line, text }) =>
        itemLabelsIn(text).map((label) => `${path}:${line}: ${label}`),
      ),
    );
    expect(offenders, 'say the behaviour the line guards instead; git log says where it came from').toEqual([]);
  });
});
