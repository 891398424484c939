/**
 * Why a plan cannot be made (PlanError.problems), as codes and the values their words need: the
 * planner records them, and src/views/plan-problems.ts words them.
 */

export type ProblemWords =
  /** `--token-user` names no user on the server. */
  | { code: 'token_user_unknown'; given: string }
  /** `--token-user` names a user who is not an admin. */
  | { code: 'token_user_not_admin'; given: string };

/** A problem: a code, or words another layer gave. */
export type PlanProblem = ProblemWords | string;
