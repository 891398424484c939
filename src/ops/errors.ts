/**
 * The one error type of the operations: an expected failure, with what it says as a code and
 * values (a view words it for people) and a kind a program can branch on. It carries no exit
 * code: the command line maps every kind to its exit code in one place (src/cli/exit.ts).
 */
import type { TestResult } from '../access/tests.js';
import type { EmailGlobProblem } from '../model/email-glob.js';
import type { FileProblem } from '../model/files.js';
import type { InstantProblem } from '../model/instant.js';
import type { ApprovalsProblem } from '../plan/approvals.js';
import type { SavedPlanRefusal } from '../plan/planfile.js';
import type { PlanProblem } from '../plan/problems.js';
import type { TargetProblem } from '../plan/target.js';
import type { PlanTestFailure } from '../plan/types.js';

export type OpErrorKind =
  /** The request cannot be carried out as written: a bad target, a key the server does not have. */
  | 'request'
  /** The desired state has errors, or one of its access tests fails. */
  | 'desired-state'
  /** The server refused to give its state, or no plan can be made against it. */
  | 'server'
  | 'plan'
  /** The saved plan cannot be applied as it is (unreadable, edited, made elsewhere). */
  | 'saved-plan'
  /** The live state cannot be written as desired state, or the files cannot be written. */
  | 'export';

/**
 * What an OpError says, as a code and the values its sentence needs; src/views/op-errors.ts words
 * it. `problems` are lines another layer already wrote (a diagnostic each).
 */
export type OpWords =
  /** The planner refused (a PlanError's problems). */
  | { code: 'cannot_plan'; problems: PlanProblem[] }
  /** A target or key refused; `flag`: given as `--target`. */
  | { code: 'target_refused'; problem: TargetProblem; flag: boolean }
  /** The `--approvals` file refused. */
  | { code: 'approvals_refused'; problem: ApprovalsProblem }
  | { code: 'after_apply_needs_files_and_server' }
  | { code: 'nothing_to_evaluate' }
  | { code: 'review_after_apply_needs_files' }
  | { code: 'field_not_acknowledgeable'; key: string; field: string }
  | { code: 'until_not_in_future'; until: string; now: string }
  | { code: 'until_not_an_instant'; problem: InstantProblem }
  | { code: 'reason_missing' }
  | { code: 'acknowledge_writes_yaml'; file: string }
  | { code: 'no_such_object'; key: string }
  | { code: 'nothing_differs'; key: string; field: string }
  | { code: 'no_file_for_entry'; file: string }
  | { code: 'adopt_branch_writes_yaml' }
  | { code: 'adopt_objects_or_all_drift' }
  | { code: 'adopt_names_nothing' }
  | { code: 'adopt_edits_invalid'; problems: string[] }
  | { code: 'adopt_does_not_write'; file: string; escape: string }
  | { code: 'adopt_edits_files' }
  | { code: 'desired_state_errors'; problems: string[]; at?: string }
  | { code: 'show_configuration' }
  | { code: 'server_has_no'; keys: { key: string; near: string | null }[] }
  | { code: 'embedded_token_refused'; path: string; problem: FileProblem }
  | { code: 'embedded_token_unreadable'; path: string; problem: FileProblem }
  | { code: 'approvals_unreadable'; path: string; problem: FileProblem }
  | { code: 'server_unreadable'; problem: string }
  | { code: 'check_base_or_live' }
  | { code: 'except_glob_unusable'; glob: string; problem: EmailGlobProblem }
  | { code: 'output_too_large'; output: 'plan_json' | 'saved_plan' | 'check' }
  | { code: 'export_folder_not_created'; dir: string; error: string }
  | { code: 'export_files_exist'; names: string[]; dir: string }
  | { code: 'migrate_needs_source' }
  | { code: 'migrate_portal_refuses'; count: number; problems: string[] }
  | { code: 'base_file_missing'; file: string }
  | { code: 'tests_fail_after_apply'; count: number }
  | { code: 'saved_plan_elsewhere'; planned: string; server: string }
  | { code: 'reviewed_plan_elsewhere'; reviewed: string; server: string }
  | { code: 'saved_plan_applied'; server: string; at: string | null }
  | { code: 'saved_plan_secrets_unreadable'; problems: string[] }
  | { code: 'saved_plan_refused'; refusal: SavedPlanRefusal };

export class OpError extends Error {
  override readonly name = 'OpError';
  /** What it says, as a code and values; absent when `message` is another layer's words, passed on. */
  readonly words: OpWords | undefined;

  constructor(
    readonly kind: OpErrorKind,
    /** Its words: a code and values, or the message of another layer's error, as it is. */
    said: OpWords | string,
    /**
     * The access tests that failed, when that is the failure: shown one a line by the caller.
     * Results of `netform test`'s kind, or a plan's failures (judged on the state after apply).
     */
    readonly failedTests?: readonly (TestResult | PlanTestFailure)[],
  ) {
    super(typeof said === 'string' ? said : codeMessage(said));
    this.words = typeof said === 'string' ? undefined : said;
  }
}

/** The message for programs: the code and its values (`no_such_object {"key":"user:a@b.c"}`). */
function codeMessage({ code, ...values }: OpWords): string {
  return Object.keys(values).length > 0 ? `${code} ${JSON.stringify(values)}` : code;
}
