/**
 * Exit codes of every netform command (docs/netform.md section 3), and the one place a failure
 * becomes an exit code: `expectedFailure` (the error boundary, boundary.ts, prints it).
 */
import { OpError, type OpErrorKind } from '../ops/errors.js';
import { testLine, testLocation } from '../views/access.js';
import { opErrorText } from '../views/op-errors.js';
import { failureLine } from '../views/plan-review.js';

export const ExitCode = {
  ok: 0,
  error: 1,
  changes: 2,
  refused: 3,
  stale: 4,
  /** `apply -f --reviewed`: what was reviewed was applied, and changes nobody reviewed were withheld. */
  unreviewed: 5,
  /** `check`: the gate could not be evaluated (bad files, an unknown ref, no server): neither pass nor fail. */
  unevaluated: 6,
  /** Apply stopped by SIGINT (128 + 2), by SIGTERM (128 + 15). */
  interrupted: 130,
  terminated: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An expected failure of the command line itself (a flag that cannot work): printed as its
 * message alone (no stack trace), exit code attached. The operations raise OpErrors instead.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.error,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Every kind of operation failure is an error (exit 1); refusals, stale plans and interrupts are outcomes, not errors. */
const OP_EXIT_CODES: Record<OpErrorKind, ExitCode> = {
  request: ExitCode.error,
  'desired-state': ExitCode.error,
  server: ExitCode.error,
  plan: ExitCode.error,
  'saved-plan': ExitCode.error,
  export: ExitCode.error,
};

/** An expected failure's message and exit code; null for anything else, which is a bug. */
export function expectedFailure(error: unknown): { message: string; code: ExitCode } | null {
  if (error instanceof CliError) return { message: error.message, code: error.exitCode };
  if (error instanceof OpError) {
    // Failed access tests: one line each under the message, as `netform test` shows them.
    const tests = (error.failedTests ?? [])
      .map((r) => `\n  ${'test' in r ? `${testLocation(r)}${testLine(r)}` : failureLine(r)}`)
      .join('');
    return { message: `${opErrorText(error)}${tests}`, code: OP_EXIT_CODES[error.kind] };
  }
  return null;
}
