/** Files as shown to people, and diagnostics in reading order: shared by both front ends. */
import { relative, resolve } from 'node:path';
import type { Diagnostic } from './types.js';

/** The file `cdktf synth` writes for each stack (in `cdktf.out/stacks/<name>/`). */
export const CDKTF_STACK_FILE = 'cdk.tf.json';

/** A path as shown to people: relative to the current directory. */
export function displayPath(path: string): string {
  return relative(process.cwd(), resolve(path)) || '.';
}

/**
 * Puts diagnostics in reading order: by file (in the order the files were read), then line and
 * column; problems that concern no file first.
 */
export function sortDiagnostics(diagnostics: Diagnostic[], files: string[]): Diagnostic[] {
  const rank = (d: Diagnostic): number =>
    d.file === undefined ? -1 : files.includes(d.file) ? files.indexOf(d.file) : files.length;
  return diagnostics
    .map((d, i) => ({ d, i }))
    .sort(
      (a, b) =>
        rank(a.d) - rank(b.d) ||
        (a.d.line ?? 0) - (b.d.line ?? 0) ||
        (a.d.column ?? 0) - (b.d.column ?? 0) ||
        a.i - b.i,
    )
    .map(({ d }) => d);
}
