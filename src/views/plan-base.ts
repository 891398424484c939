/** Why a plan made with `--base` could not be compared with its base, in words. */
import type { PlanBase } from '../plan/types.js';
import { planProblemsText } from './plan-problems.js';
import { targetProblemText } from './plan-target.js';

/** The base's note: words as they are, or why its files cannot be planned. */
export function baseNoteText(note: NonNullable<PlanBase['note']>): string {
  if (typeof note === 'string') return note;
  const why = note.problems ? planProblemsText(note.problems) : note.target ? targetProblemText(note.target, true) : '';
  return `${note.ref}'s files cannot be planned (${why}): every change counts as introduced by this pull request`;
}
