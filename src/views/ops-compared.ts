/**
 * The two states an access delta compares, in words (the codes are src/access/compared.ts's): what
 * `check no-new-access` names in its headline and what the delta's JSON (`compared`) holds, in
 * `check --format json`, `plan --format json` and saved plans.
 */
import type { DeltaSide, DeltaSides } from '../access/compared.js';

/** One side in words; a saved plan's words as they are. */
export function deltaSideText(side: DeltaSide | string): string {
  if (typeof side === 'string') return side;
  switch (side.code) {
    case 'server_now':
      return 'the server now';
    case 'after_apply':
      return 'after apply';
    case 'after_apply_of_files':
      return 'after apply of the files';
    case 'files_at':
      return `the files at ${side.ref}`;
    case 'files_now':
      return 'the files now';
    case 'after_apply_of_base':
      return `after apply of ${side.ref}'s changes`;
    case 'after_apply_of_pr':
      return "after apply of this pull request's changes too";
  }
}

/** `the files at main → the files now`. */
export function comparedText(compared: DeltaSides): string {
  return `${deltaSideText(compared.before)} → ${deltaSideText(compared.after)}`;
}

/** The delta with its sides in words, as JSON shows it (schemas/access-delta.schema.json). */
export function wordedDelta<T extends { compared: DeltaSides }>(
  delta: T,
): T & { compared: { before: string; after: string } } {
  const { before, after } = delta.compared;
  return { ...delta, compared: { before: deltaSideText(before), after: deltaSideText(after) } };
}
