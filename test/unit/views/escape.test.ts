import { describe, expect, it } from 'vitest';
import {
  githubData,
  githubProperty,
  inertText,
  markdownCode,
  markdownFence,
  markdownText,
  webhookText,
} from '../../../src/views/escape.js';
import { githubAnnotation } from '../../../src/views/diagnostics.js';
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

  it('webhook text also escapes <, > and & as entities, and is inert', () => {
    expect(webhookText('<!channel> & [c](https://evil.example)\n\u001b')).toBe(
      '&lt;\\!channel&gt; &amp; \\[c\\]\\(https://evil.example\\)\\u000a\\u001b',
    );
    expect(webhookText('device alice@example.com/laptop')).toBe('device alice@example.com/laptop');
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
