/** Why a text is not a reviewer handle, in words (the codes are src/model/owners.ts's). */
import type { HandleProblem } from '../model/owners.js';

export function handleProblemText(problem: HandleProblem): string {
  if (problem.code === 'team_without_at') return 'is a team: write it with its @ (@org/team)';
  return 'is not a reviewer handle: write @org/team, @login or login (letters, digits, -; a team also _ and .)';
}
