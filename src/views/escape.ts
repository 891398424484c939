/**
 * Escaping of values that came from a server or a file, for where they are written: a terminal
 * or log (text), a markdown comment, a chat webhook's `text`, a GitHub workflow command. A value
 * escaped here cannot begin a line, move the cursor, set a title or the clipboard, reorder what
 * is shown around it, or add markup. Ordinary text (printable ASCII, letters of any script) is
 * left as it is.
 */

export { inertText } from '../model/inert.js';
import { inertText, inertWorkflowCommands } from '../model/inert.js';

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return longest;
}

/**
 * A value inside a markdown code span, whatever it holds: the delimiter is one backtick longer
 * than its longest backtick run, and the value is made inert first (a code span holds no line break).
 */
export function markdownCode(value: string): string {
  const text = inertText(value);
  if (text.length === 0) return '` `';
  const ticks = '`'.repeat(longestBacktickRun(text) + 1);
  const pad = /^[` ]|[` ]$/.test(text) ? ' ' : '';
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/** A fence for a markdown code block holding `content`: longer than any backtick run in it, at least three. */
export function markdownFence(content: string): string {
  return '`'.repeat(Math.max(3, longestBacktickRun(content) + 1));
}

/**
 * A value in running markdown where a code span does not fit (a heading, a warning): inert, with
 * the characters that start markup (emphasis, code, links and images, html, tables, headings)
 * backslash-escaped.
 */
export function markdownText(value: string): string {
  // Markup first, then controls: a `\u` escape stays as it is (markdown reads `\u` literally).
  return inertText(value.replace(/([\\`*_[\]<>|#!~])/g, '\\$1'));
}

/**
 * A value in a chat webhook's `text` (Slack, Teams, Mattermost): escaped like markdown, and `&`,
 * `<` and `>` as entities (Slack reads `<…>` as links and mentions).
 */
export function webhookText(value: string): string {
  return inertText(
    value
      .replace(/([\\`*_[\]()!#|~])/g, '\\$1')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;'),
  );
}

/** A GitHub workflow command's message (https://github.com/actions/toolkit, `escapeData`). */
export function githubData(value: string): string {
  return value.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A GitHub workflow command's property value (`escapeProperty`): also `:` and `,`. */
export function githubProperty(value: string): string {
  return githubData(value).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/**
 * A message made inert for the terminal or log, the last line of defence for values it quotes: its
 * own line breaks are kept, every other control, bidi and zero-width character is a `\u` escape,
 * and no line it adds can be read as a GitHub workflow command (`::…` or `##[…`).
 */
export function inertMessage(message: string): string {
  return message
    .split('\n')
    .map((line, i) => (i > 0 ? inertWorkflowCommands(inertText(line), { lineStarts: true }) : inertText(line)))
    .join('\n');
}

/** A whole line of text output that starts with a value (a file name): inert, and no workflow command can begin it. */
export function inertLine(line: string): string {
  return inertWorkflowCommands(inertText(line), { lineStarts: true });
}

/**
 * A JSON document for output (indented, with a final line break), value for value what
 * JSON.stringify writes, but with no old-style workflow command in it: `##[` inside a string is
 * written `#\u0023[`, which JSON reads back as the same value. (JSON never starts a line with `::`.)
 */
export function jsonDocument(value: unknown): string {
  return `${inertWorkflowCommands(JSON.stringify(value, null, 2), { lineStarts: false })}\n`;
}
