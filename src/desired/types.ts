/** What every desired-state front end (YAML files, a synthesized CDKTF stack) returns. */
import type { DesiredState } from '../model/state.js';

import type { Diagnostic } from '../model/diagnostic.js';

export type { Diagnostic };

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
