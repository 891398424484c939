/**
 * Where a plan's comparisons came from, as codes and values (src/views/ops-plan.ts words them):
 * why a plan made with `--base` could not be compared with its base (PlanBase.note), and where
 * `settings.owners` was read (PlanOwners.from). A plan read from a saved plan holds their words.
 */
import type { PlanProblem } from './problems.js';
import type { TargetProblem } from './target.js';

/** Why the base could not be compared: every change then counts as the pull request's. */
export type BaseNote =
  /** The path is not there at the base (`missing`: the reader's words, such as `does not exist`). */
  | { code: 'base_missing'; where: string; missing: string; ref: string }
  /** The base's desired state has errors: the first one, and how many more. */
  | { code: 'base_has_errors'; ref: string; first: string; more: number }
  /** The base's files cannot be planned: the planner's problems, or a target it refused. */
  | { code: 'base_unplannable'; ref: string; problems?: PlanProblem[]; target?: TargetProblem };

/** Where `settings.owners` was read. `base`: the ref as named, with its commit's first 12 digits when known. */
export type OwnersSource =
  /** The files (no --base). */
  | { code: 'files' }
  /** The files, as the base has no desired state at the path. */
  | { code: 'files_base_missing'; base: string }
  /** The files, as the base's desired state has errors. */
  | { code: 'files_base_errors'; base: string }
  /** The base. */
  | { code: 'base'; base: string };
