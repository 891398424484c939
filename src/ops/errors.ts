/**
 * The one error type of the operations: an expected failure, with a message a person can act on
 * and a kind a program can branch on. It carries no exit code: the command line maps every kind
 * to its exit code in one place (src/cli/exit.ts).
 */
import type { TestResult } from '../access/tests.js';
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

export class OpError extends Error {
  override readonly name = 'OpError';

  constructor(
    readonly kind: OpErrorKind,
    message: string,
    /**
     * The access tests that failed, when that is the failure: shown one a line by the caller.
     * Results of `netform test`'s kind, or a plan's failures (judged on the state after apply).
     */
    readonly failedTests?: readonly (TestResult | PlanTestFailure)[],
  ) {
    super(message);
  }
}
