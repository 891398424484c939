/** What every desired-state front end (YAML files, a synthesized CDKTF stack) returns. */
import type { DesiredState } from '../model/state.js';
import { inertText } from '../render/escape.js';

/** One problem found in the desired state, pointing at the value at fault where it can. */
export interface Diagnostic {
  message: string;
  file?: string;
  /** 1-based. */
  line?: number;
  /** 1-based. */
  column?: number;
  /** Where in the document: `users[0].devices[1].mtu`, or a CDKTF `resource.attribute`. */
  path?: string;
}

/** `warnings`: problems that do not make the files unusable for this command (unreadable secrets in validate). */
export type LoadResult =
  | { ok: true; state: DesiredState; warnings?: Diagnostic[] }
  | { ok: false; diagnostics: Diagnostic[]; warnings?: Diagnostic[] };

export interface LoadOptions {
  /** Environment for `{ env: NAME }` and Terraform `var.*` secrets (`TF_VAR_*`). Default process.env. */
  env?: Record<string, string | undefined>;
  /**
   * `check` (validate): secret references are checked for shape, but a variable or file that
   * cannot be read is a warning, not an error: pull requests from forks get no secrets.
   * Default `resolve`: every secret must be readable (plan, apply, drift need the values).
   */
  secrets?: 'resolve' | 'check';
}

/** `file:line:column: path: message` (as much of the location as is known). */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file
    ? [d.file, d.line, d.line !== undefined ? d.column : undefined].filter((p) => p !== undefined).join(':')
    : undefined;
  // Inert: a file name, key or quoted value cannot break the line or move the cursor.
  return inertText([where, d.path, d.message].filter((part) => part !== undefined && part !== '').join(': '));
}
