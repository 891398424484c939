/**
 * Where a plan's comparisons came from, in words (the codes are src/plan/sources.ts's, which
 * src/ops/plan.ts and src/ops/owners.ts set): why `--base` could not be compared, and where
 * `settings.owners` was read. A saved plan's words are shown as they are.
 */
import type { BaseNote, OwnersSource } from '../plan/sources.js';
import { planProblemsText } from './plan-problems.js';
import { targetProblemText } from './model-target.js';

export function baseNoteText(note: BaseNote | string): string {
  if (typeof note === 'string') return note;
  return `${baseNoteWhy(note)}: every change counts as introduced by this pull request`;
}

function baseNoteWhy(note: BaseNote): string {
  switch (note.code) {
    case 'base_missing':
      return `${note.where} ${note.missing} at ${note.ref}`;
    case 'base_has_errors':
      return `the desired state at ${note.ref} has errors (${note.first}${note.more ? `, and ${note.more} more` : ''})`;
    case 'base_unplannable': {
      const why = note.problems
        ? planProblemsText(note.problems)
        : note.target
          ? targetProblemText(note.target, true)
          : '';
      return `${note.ref}'s files cannot be planned (${why})`;
    }
  }
}

export function ownersSourceText(from: OwnersSource | string): string {
  if (typeof from === 'string') return from;
  switch (from.code) {
    case 'files':
      return 'the files';
    case 'files_base_missing':
      return `the files (${from.base} has no desired state there)`;
    case 'files_base_errors':
      return `the files (${from.base}'s desired state has errors)`;
    case 'base':
      return from.base;
  }
}
