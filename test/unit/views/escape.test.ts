import { describe, expect, it } from 'vitest';
import {
  githubData,
  githubProperty,
  inertLine,
  inertMessage,
  inertText,
  jsonDocument,
  markdownCode,
  markdownFence,
  markdownText,
  webhookLines,
  webhookName,
  webhookText,
} from '../../../src/views/escape.js';
import { githubAnnotation } from '../../../src/views/diagnostics.js';
import { testResultsText } from '../../../src/views/access.js';
import type { TestResult } from '../../../src/access/index.js';
import { formatDiagnostic } from '../../../src/model/diagnostic.js';
import { inertWorkflowCommands } from '../../../src/model/inert.js';
import { describeFailure } from '../../../src/cli/boundary.js';
import { CliError } from '../../../src/cli/exit.js';

/** Every character that must never reach output raw. */
const UNSAFE: string[] = [
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)),
  ...Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)),
  '\u2028',
  '\u2029',
  ...['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'],
  '\u200e',
  '\u200f',
  '\u061c',
  ...['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff'],
];

describe('inertText', () => {
  it('leaves printable ASCII and letters of any script as they are', () => {
    const ordinary = ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~ Zoë Ωμέγα 東京 עברית العربية 🙂';
    expect(inertText(ordinary)).toBe(ordinary);
  });

  it('shows every control, separator, bidi and zero-width character as a \\u escape', () => {
    for (const ch of UNSAFE) {
      const out = inertText(`a${ch}b`);
      expect(out).toBe(`a\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}b`);
    }
    expect(inertText('x\u001b[2J\u001b]52;c;ZWNobw==\u0007')).toBe('x\\u001b[2J\\u001b]52;c;ZWNobw==\\u0007');
    expect(inertText('laptop\n::error::pwned')).toBe('laptop\\u000a::error::pwned');
    expect(inertText('evil\u202Etxt.exe')).toBe('evil\\u202etxt.exe');
  });
});

describe('markdownCode', () => {
  it('puts a plain value in a one-backtick span', () => {
    expect(markdownCode('alice@example.com')).toBe('`alice@example.com`');
  });

  it('sizes the delimiter to the longest backtick run, padding values that start or end with one', () => {
    expect(markdownCode('a`b')).toBe('``a`b``');
    expect(markdownCode('a```b``')).toBe('```` a```b`` ````');
    expect(markdownCode('`x')).toBe('`` `x ``');
    expect(markdownCode(' x ')).toBe('`  x  `');
    expect(markdownCode('')).toBe('` `');
  });

  it('keeps the span on one line: line breaks and controls are inert', () => {
    const span = markdownCode('![x](https://evil.example/t.png)\n::error::pwned\u001b[2J');
    expect(span).toBe('`![x](https://evil.example/t.png)\\u000a::error::pwned\\u001b[2J`');
    expect(span).not.toMatch(/[\n\r\u001b]/);
  });

  it('markdownFence is longer than any backtick run, at least three', () => {
    expect(markdownFence('plain')).toBe('```');
    expect(markdownFence('a ```` b')).toBe('`````');
  });
});

describe('markdownText and webhookText', () => {
  it('escape link, image and emphasis markup', () => {
    expect(markdownText('![x](https://evil.example/t.png)[c](https://evil.example)')).toBe(
      '\\!\\[x\\](https://evil.example/t.png)\\[c\\](https://evil.example)',
    );
    expect(markdownText('ordinary text, 10.0.0.0/8: ok')).toBe('ordinary text, 10.0.0.0/8: ok');
  });

  it('webhook text for slack: <, > and & as entities, no backslash escapes, real line breaks, inert', () => {
    expect(webhookText('<!channel> & [c](https://evil.example) *b* _i_\u001b')).toBe(
      '&lt;!channel&gt; &amp; [c](https://evil.example) *b* _i_\\u001b',
    );
    // A value's line break stays inert; a message's own lines are kept, none able to begin a workflow command.
    expect(webhookText('a\n::error::x')).toBe('a\\u000a::error::x');
    expect(webhookLines('errors:\n  a_b <&\n::error::x')).toBe('errors:\n  a_b &lt;&amp;\n\\u003a:error::x');
    expect(webhookText('device alice@example.com/laptop')).toBe('device alice@example.com/laptop');
  });

  it('webhook text for markdown: CommonMark escapes, no entities, real line breaks, inert', () => {
    expect(webhookLines('<!channel> & [c](x) *b* _i_\n- item\n1. first\u001b', 'markdown')).toBe(
      '\\<\\!channel\\> \\& \\[c\\]\\(x\\) \\*b\\* \\_i\\_\n\\- item\n1\\. first\\u001b',
    );
  });

  it('names in webhook text are code spans: slack without longer delimiters, markdown with them', () => {
    expect(webhookName('user o_neil*x@example.com')).toBe('`user o_neil*x@example.com`');
    expect(webhookName('a<&>b')).toBe('`a&lt;&amp;&gt;b`');
    expect(webhookName('a`b')).toBe('a`b');
    expect(webhookName('a`b', 'markdown')).toBe('``a`b``');
  });
});

describe('GitHub annotations', () => {
  it('escape data and properties as GitHub documents', () => {
    expect(githubData('100%\r\nnext')).toBe('100%25%0D%0Anext');
    expect(githubProperty('a:b,c%\n')).toBe('a%3Ab%2Cc%25%0A');
  });

  it('annotation message and file cannot start a line or carry controls', () => {
    const line = githubAnnotation({
      file: 'desired/x,y:z\n::error::f.yaml',
      line: 3,
      message: 'bad\n::warning::pwned \u001b[2J 50%',
      path: 'users[0]',
    });
    expect(line).toBe(
      '::error file=desired/x%2Cy%3Az%0A%3A%3Aerror%3A%3Af.yaml,line=3::users[0]: bad%0A::warning::pwned \\u001b[2J 50%25',
    );
    expect(line.split('\n')).toHaveLength(1);
  });
});

describe('the error boundary', () => {
  it('prints a quoted value inert, keeping the message on its lines', () => {
    const { text } = describeFailure(new CliError('user "a\u001b]52;c;eA==\u0007\u202E" not found'));
    expect(text).toBe('error: user "a\\u001b]52;c;eA==\\u0007\\u202e" not found\n');
  });

  it('keeps its own line breaks, but no line it adds reads as a workflow command', () => {
    const { text } = describeFailure(new CliError('the desired state has errors:\n  one\n::error::pwned\r'));
    expect(text).toBe('error: the desired state has errors:\n  one\n\\u003a:error::pwned\\u000d\n');
    for (const line of text.split('\n')) expect(line.trimStart().startsWith('::')).toBe(false);
  });
});

/**
 * The runner's two command syntaxes (actions/runner ActionCommandManager): `::name …::` at the
 * start of a line, and the old `##[name …]` anywhere in a line. Whether `line` holds either.
 */
function runnerReadsACommand(line: string): boolean {
  return /^\s*::[A-Za-z]/.test(line) || line.includes('##[');
}

describe('workflow commands: both syntaxes (security review 2026-11b, G2)', () => {
  const HOSTILE = 'ok ##[add-mask]alice ##[error title=x]PR check passed ##[stop-commands]hidehide';

  it('inertWorkflowCommands owns both: ##[ anywhere, and with lineStarts a leading colon', () => {
    expect(inertWorkflowCommands('a ##[error]b ###[x]', { lineStarts: false })).toBe('a #\\u0023[error]b ##\\u0023[x]');
    expect(inertWorkflowCommands('::error::x\n  ::warning::y\nfine: ::z', { lineStarts: true })).toBe(
      '\\u003a:error::x\n  \\u003a:warning::y\nfine: ::z',
    );
    // A value inside a line keeps its colons (an IPv6 address), with lineStarts off.
    expect(inertWorkflowCommands('::1', { lineStarts: false })).toBe('::1');
  });

  it('inertText breaks every ##[ and keeps the rest of the value', () => {
    expect(inertText(HOSTILE)).toBe(
      'ok #\\u0023[add-mask]alice #\\u0023[error title=x]PR check passed #\\u0023[stop-commands]hidehide',
    );
    expect(runnerReadsACommand(inertText(HOSTILE))).toBe(false);
  });

  it('the passing lines of test --format github carry no command, whatever the test or file is named', () => {
    const result = (name: string, file: string, pass: boolean): TestResult =>
      ({
        test: {
          name,
          from: 'alice@example.com',
          to: '10.1.2.3:22/tcp',
          expect: 'drop',
          source: { file, line: 7, column: 5 },
        },
        pass,
        got: 'drop',
      }) as unknown as TestResult;
    const text = testResultsText(
      [
        result(HOSTILE, 'n.yaml', true),
        result('second', '::error::x.yaml', true),
        result('fail ##[x]', '##[error]f.yaml', false),
      ],
      { github: true, state: 'files' },
    );
    const lines = text.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    // Only netform's own annotation for the failing test is a command.
    const commands = lines.filter(runnerReadsACommand);
    expect(lines[1]).toMatch(/^\\u003a:error::x\.yaml:7: PASS second/);
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatch(/^::error file=#\\u0023\[error\]f\.yaml,line=7,col=5::FAIL fail #\\u0023\[x\]/);
    expect(commands[0]!.slice(2)).not.toContain('##[');
  });

  it('a diagnostic line starting with a file name cannot start a command', () => {
    const line = formatDiagnostic({
      file: '::error::x.yaml',
      line: 3,
      column: 1,
      message: 'bad ##[warning]y',
    } as never);
    expect(runnerReadsACommand(line)).toBe(false);
    expect(line).toBe('\\u003a:error::x.yaml:3:1: bad #\\u0023[warning]y');
    expect(inertLine('::warning::z')).toBe('\\u003a:warning::z');
  });

  it('error messages: no line reads as a command in either syntax', () => {
    const text = inertMessage('refused ##[add-mask]x\n::error::y\n ##[group]z');
    for (const line of text.split('\n')) expect(runnerReadsACommand(line), line).toBe(false);
  });

  it('JSON documents carry the same values with ##[ written #\\u0023[', () => {
    const value = { name: HOSTILE, nested: ['##[error]x', 'plain'] };
    const text = jsonDocument(value);
    expect(text.endsWith('\n')).toBe(true);
    expect(text).not.toContain('##[');
    expect(JSON.parse(text)).toEqual(value);
  });
});
