/** The access changes of a plan, in text and markdown (json carries `plan.access` as it is). */
import { accessChangeLines, type AccessChanges } from '../access/changes.js';

function hasAccessChanges(access: AccessChanges | undefined): access is AccessChanges {
  return access !== undefined && (access.users.length > 0 || access.everyone !== undefined);
}

export function accessText(access: AccessChanges | undefined): string[] {
  if (!hasAccessChanges(access)) return [];
  return ['Access changes:', ...accessChangeLines(access).map((line) => `  ${line}`), ''];
}

export function accessMarkdown(access: AccessChanges | undefined): string[] {
  if (!hasAccessChanges(access)) return [];
  return ['<details open><summary>Access changes</summary>', '', ...accessChangeLines(access).map((line) => `- ${line.replace(/([*_`|<>])/g, '\\$1')}`), '', '</details>', ''];
}
