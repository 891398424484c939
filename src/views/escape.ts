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
 * How a chat webhook's `text` is written (`drift --webhook-format`): `slack` (Slack's mrkdwn: `&`,
 * `<` and `>` as entities, which Slack requires and which keep `<!channel>` and links out; no
 * backslash escapes, which Slack shows as they are) or `markdown` (CommonMark, for Teams, Discord
 * and Mattermost: backslash escapes, no entities). Both keep a value's line breaks as real ones.
 */
export type WebhookFormat = 'slack' | 'markdown';
export const WEBHOOK_FORMATS: readonly WebhookFormat[] = ['slack', 'markdown'];

function slackEntities(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** One line of running CommonMark: every character that can start markup backslash-escaped, then inert. */
function commonMarkLine(line: string): string {
  const escaped = line
    .replace(/([\\`*_{}[\]<>()#!|~&])/g, '\\$1')
    // What starts a list, a heading underline or a numbered item only at the start of a line.
    .replace(/^(\s*)([-+=])/, '$1\\$2')
    .replace(/^(\s*\d+)([.)])/, '$1\\$2');
  return inertText(escaped);
}

/**
 * A value in a chat webhook's running `text` (a sentence that may quote values), on one line: any
 * line break or other control in it inert, and written for `format` (WebhookFormat).
 */
export function webhookText(value: string, format: WebhookFormat = 'slack'): string {
  return format === 'slack' ? slackEntities(inertText(value)) : commonMarkLine(value);
}

/**
 * A message of netform's own lines (a check that failed: `the desired state has errors:` and one
 * line per error) in a chat webhook's `text`: its line breaks real, each line as webhookText, and
 * no line after the first able to begin a workflow command.
 */
export function webhookLines(message: string, format: WebhookFormat = 'slack'): string {
  return message
    .split(/\r?\n/)
    .map((line, i) =>
      i > 0 ? inertWorkflowCommands(webhookText(line, format), { lineStarts: true }) : webhookText(line, format),
    )
    .join('\n');
}

/**
 * A name or value from the server or the files in a chat webhook's `text`: in a code span, so that
 * `_` and `*` in it are not emphasis. Slack's code spans take no longer delimiters, so a value
 * holding a backtick is running text there.
 */
export function webhookName(value: string, format: WebhookFormat = 'slack'): string {
  if (format === 'markdown') return markdownCode(value);
  const text = slackEntities(inertText(value));
  return text.length > 0 && !text.includes('`') ? `\`${text}\`` : text;
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

/**
 * A JSON document for output, compact and read line by line: one member of the top object a line,
 * and the arrays named in `rows` with one element a line. The same value as jsonDocument's, with
 * the same escaping, without the indentation that makes large arrays several times their size.
 */
export function jsonRowsDocument(value: Record<string, unknown>, rows: readonly string[]): string {
  const members = Object.entries(value).map(([key, member]) => {
    const rowed = rows.includes(key) && Array.isArray(member) && member.length > 0;
    const text = rowed
      ? `[\n    ${(member as unknown[]).map((row) => JSON.stringify(row)).join(',\n    ')}\n  ]`
      : JSON.stringify(member);
    return `  ${JSON.stringify(key)}: ${text}`;
  });
  return `${inertWorkflowCommands(`{\n${members.join(',\n')}\n}`, { lineStarts: false })}\n`;
}
