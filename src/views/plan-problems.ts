/**
 * Why a plan cannot be made, in words (the codes are src/plan/problems.ts's): one problem as it
 * is, several as a list under their count.
 */
import type { PlanProblem } from '../plan/problems.js';

export function planProblemText(problem: PlanProblem): string {
  if (typeof problem === 'string') return problem;
  switch (problem.code) {
    case 'token_user_unknown':
      return `--token-user/NETFORM_TOKEN_USER ${problem.given} names no user on the server; give the email of the admin the API token belongs to`;
    case 'token_user_not_admin':
      return `--token-user/NETFORM_TOKEN_USER ${problem.given} is not an admin on the server, so the API token cannot be its; give the email of the admin the token belongs to`;
  }
}

/** A PlanError's problems in words: `2 problems:` and one a line when there are several. */
export function planProblemsText(problems: readonly PlanProblem[]): string {
  const lines = problems.map(planProblemText);
  return lines.length === 1 ? lines[0]! : `${lines.length} problems:\n${lines.map((p) => `  - ${p}`).join('\n')}`;
}
