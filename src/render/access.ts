/** The access changes of a plan, in text and markdown (json carries `plan.access` as it is). */
import { accessChangeLines, type AccessChanges } from '../access/changes.js';
import { inertText, markdownCode, markdownText } from './escape.js';

function hasAccessChanges(access: AccessChanges | undefined): access is AccessChanges {
  return access !== undefined && (access.users.length > 0 || access.everyone !== undefined);
}

export function accessText(access: AccessChanges | undefined, title = 'Access changes'): string[] {
  if (!hasAccessChanges(access)) return [];
  return [`${inertText(title)}:`, ...accessChangeLines(access, inertText).map((line) => `  ${line}`), ''];
}

/**
 * The markdown section, within `maxChars`: whole lines while they fit, then one line saying how
 * many are not shown (the text and json plans hold them all).
 */
export function accessMarkdown(
  access: AccessChanges | undefined,
  maxChars = Infinity,
  title = 'Access changes',
): string[] {
  if (!hasAccessChanges(access)) return [];
  const open = [`<details open><summary>${markdownText(title)}</summary>`, ''];
  const close = ['', '</details>', ''];
  // Every email in a code span sized to it; the rest of a line is netform's own text (addresses, protocols, ports).
  const lines = accessChangeLines(access, markdownCode).map((line) => `- ${line}`);
  let budget = maxChars - [...open, ...close].join('\n').length - 200;
  const shown: string[] = [];
  for (const line of lines) {
    if (line.length + 1 > budget) break;
    shown.push(line);
    budget -= line.length + 1;
  }
  const left = lines.length - shown.length;
  const more =
    left > 0
      ? [`- **… ${left} more line(s) of access changes are not shown** (the text and json plans list them)`]
      : [];
  return [...open, ...shown, ...more, ...close];
}
