/** The access changes of a plan, in text and markdown (json carries `plan.access` as it is). */
import { accessChangeLines, type AccessChanges } from '../access/changes.js';

function hasAccessChanges(access: AccessChanges | undefined): access is AccessChanges {
  return access !== undefined && (access.users.length > 0 || access.everyone !== undefined);
}

export function accessText(access: AccessChanges | undefined, title = 'Access changes'): string[] {
  if (!hasAccessChanges(access)) return [];
  return [`${title}:`, ...accessChangeLines(access).map((line) => `  ${line}`), ''];
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
  const open = [`<details open><summary>${title}</summary>`, ''];
  const close = ['', '</details>', ''];
  const lines = accessChangeLines(access).map((line) => `- ${line.replace(/([*_`|<>])/g, '\\$1')}`);
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
