/** Exit codes of every netform command (spec/netform.md section 3). */
export const ExitCode = {
  ok: 0,
  error: 1,
  changes: 2,
  refused: 3,
  stale: 4,
  /** `apply -f --reviewed`: what was reviewed was applied, and changes nobody reviewed were withheld. */
  unreviewed: 5,
  /** Apply stopped by SIGINT (128 + 2), by SIGTERM (128 + 15). */
  interrupted: 130,
  terminated: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An expected failure: printed as its message alone (no stack trace), exit code attached.
 * Throw it anywhere below a command; `action()` (boundary.ts) turns it into output and an exit code.
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
