/** A refused approvals file (`apply --approvals FILE`) in words; the codes are src/plan/approvals.ts's. */
import type { ApprovalsProblem } from '../plan/approvals.js';

/** `approvals.json: entry 2: "login" must be a GitHub login`. */
export function approvalsProblemText(problem: ApprovalsProblem): string {
  const at = 'entry' in problem ? `${problem.path}: entry ${problem.entry}` : problem.path;
  switch (problem.code) {
    case 'not_json':
      return `${at}: not JSON (expected a list of { "login", "teams", "commit" })`;
    case 'not_list':
      return `${at}: expected a JSON list of { "login", "teams", "commit" }`;
    case 'not_object':
      return `${at}: expected an object with "login", "teams" and "commit"`;
    case 'unknown_field':
      return `${at}: unknown field ${JSON.stringify(problem.field)}`;
    case 'login':
      return `${at}: "login" must be a GitHub login`;
    case 'teams':
      return `${at}: "teams" must be a list of handles (["@org/team"])`;
    case 'team':
      return `${at}: "teams"[${problem.index}] must be a handle such as @org/team`;
    case 'commit':
      return `${at}: "commit" must be a commit hash (hex)`;
  }
}
