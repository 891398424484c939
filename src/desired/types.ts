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

/** `warnings`: problems that do not make the files unusable (secrets that cannot be read now: W3.6). */
export type LoadResult =
  | { ok: true; state: DesiredState; warnings?: Diagnostic[] }
  | { ok: false; diagnostics: Diagnostic[]; warnings?: Diagnostic[] };

export interface LoadOptions {
  /** Environment for `{ env: NAME }` and Terraform `var.*` secrets (`TF_VAR_*`). Default process.env. */
  env?: Record<string, string | undefined>;
  /**
   * @deprecated No effect (W3.6): no command needs every secret at load. A secret is read where it
   * is used (a password when sent, a preshared key where sent or compared); one that cannot be read
   * now is a warning of the load (`warnings`), one that breaks a file rule an error.
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
