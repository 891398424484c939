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

/** Text of many lines made inert line by line: its line feeds are kept, every other such character escaped. */
export function inertLines(text: string): string {
  return text.split('\n').map(inertText).join('\n');
}

/** Whether a value holds a character inertText escapes. */
export function hasUnsafe(value: string): boolean {
  return new RegExp(UNSAFE.source).test(value);
}

/** A value for text output and logs: every control, separator, bidi and zero-width character as `\uXXXX`. */
export function inertText(value: string): string {
  return value.replace(UNSAFE, unicodeEscape);
}
