/** What every desired-state front end (YAML files, a synthesized CDKTF stack) returns. */
import type { Readable } from 'node:stream';
import type { DesiredState } from '../model/state.js';

import type { Diagnostic } from '../model/diagnostic.js';

export type { Diagnostic };

/** `warnings`: problems that do not make the files unusable (secrets that cannot be read now, read where used). */
export type LoadResult =
  | { ok: true; state: DesiredState; warnings?: Diagnostic[] }
  | { ok: false; diagnostics: Diagnostic[]; warnings?: Diagnostic[] };

export interface LoadOptions {
  /** Environment for `{ env: NAME }` and Terraform `var.*` secrets (`TF_VAR_*`). Default process.env. */
  env?: Record<string, string | undefined>;
  /** Where `-f -` is read from. Default process.stdin. */
  stdin?: Readable;
  /**
   * @deprecated No effect: no command needs every secret at load. A secret is read where it
   * is used (a password when sent, a preshared key where sent or compared); one that cannot be read
   * now is a warning of the load (`warnings`), one that breaks a file rule an error.
   */
  secrets?: 'resolve' | 'check';
}
