/**
 * Which characters of a value from a server or a file are unsafe to show as they are (controls,
 * separators, bidi and zero-width characters), and the value with each as a `\u` escape. The
 * escaping for each place output goes (markdown, webhooks, GitHub) is src/views/escape.ts; the
 * YAML export writes the same escapes.
 */

/**
 * Characters shown as `\u` escapes: C0 and C1 controls, DEL, the line and paragraph separators,
 * bidirectional controls (embeddings, overrides, isolates and marks) and zero-width characters.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/g;

function unicodeEscape(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** The runner's old command syntax, `##[command]`, which it looks for anywhere in a line. */
const LEGACY_COMMAND = /##\[/g;

/**
 * Text in which no GitHub workflow command can start, in either of the runner's two syntaxes: the
 * old `##[command]`, read anywhere in a line, becomes `#\u0023[…`; and with `lineStarts`, a line
 * beginning (after white space) with `:` begins with `\u003a` instead, so no `::command` (the
 * current syntax, read at a line's start only) can start there. The one place both syntaxes are neutralised (inertText uses it for
 * values inside a line; src/views/escape.ts for messages and JSON).
 */
export function inertWorkflowCommands(text: string, options: { lineStarts: boolean }): string {
  const legacy = text.replace(LEGACY_COMMAND, '#\\u0023[');
  return options.lineStarts ? legacy.replace(/^([^\S\n]*):/gm, '$1\\u003a') : legacy;
}

/** Text of many lines made inert line by line: its line feeds are kept, every other such character escaped. */
export function inertLines(text: string): string {
  return text.split('\n').map(inertText).join('\n');
}

/** Whether a value holds a character (or a `##[`) inertText escapes. */
export function hasUnsafe(value: string): boolean {
  return new RegExp(UNSAFE.source).test(value) || value.includes('##[');
}

/**
 * A value for text output and logs: every control, separator, bidi and zero-width character as
 * `\uXXXX`, and no old-style workflow command (`##[`) in it.
 */
export function inertText(value: string): string {
  return inertWorkflowCommands(value.replace(UNSAFE, unicodeEscape), { lineStarts: false });
}
