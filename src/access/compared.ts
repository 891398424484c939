/**
 * Which two states an access delta compares, as codes (src/views/ops-compared.ts words them): the
 * operation that computes the delta says which sides it took. A delta read back from a saved plan
 * holds the words it was written with.
 */
export type DeltaSide =
  /** The live server as it is now. */
  | { code: 'server_now' }
  /** The state after apply of the plan. */
  | { code: 'after_apply' }
  /** The state after apply of the files (`check no-new-access --live`). */
  | { code: 'after_apply_of_files' }
  /** The files at a git ref (`check no-new-access --base REF`). */
  | { code: 'files_at'; ref: string }
  /** The files as they are now. */
  | { code: 'files_now' }
  /** After apply of the changes already on the base (`plan --base REF`). */
  | { code: 'after_apply_of_base'; ref: string }
  /** After apply of the pull request's own changes as well (`plan --base REF`). */
  | { code: 'after_apply_of_pr' };

/** The two sides: codes made now, or the words a saved plan holds. */
export interface DeltaSides {
  before: DeltaSide | string;
  after: DeltaSide | string;
}
