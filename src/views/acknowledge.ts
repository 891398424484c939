/** What `netform acknowledge` says once it has written an entry. */
import type { AcknowledgementEntry } from '../desired/acknowledged-edit.js';
import { inertText } from './escape.js';

/** `acknowledged device:bob@x/laptop endpoint until 2026-12-31 (reason): written to team.yaml`. */
export function acknowledgedLine(entry: AcknowledgementEntry, file: string, replaced: boolean): string {
  const what = entry.field === '*' ? entry.key : `${entry.key} ${entry.field}`;
  const where = replaced ? `replaced its entry in ${file}` : `written to ${file}`;
  return inertText(`acknowledged ${what} until ${entry.until} (${entry.reason}): ${where}`);
}
