/** Exit codes of every netform command (spec/netform.md section 3). */
export const ExitCode = {
  ok: 0,
  error: 1,
  changes: 2,
  refused: 3,
  stale: 4,
  /** Apply stopped by SIGINT (128 + 2), by SIGTERM (128 + 15). */
  interrupted: 130,
  terminated: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An expected failure: printed as its message alone (no stack trace), exit code attached.
 * Throw it anywhere below a command; `action()` turns it into output and an exit code.
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

/**
 * Wraps a command's action: a returned exit code becomes the process's; a CliError prints its
 * message; anything else is a bug, printed with its message and a hint, never a raw stack unless
 * NETFORM_DEBUG is set.
 */
export function action<A extends unknown[]>(
  run: (...args: A) => Promise<ExitCode | void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const code = await run(...args);
      process.exitCode = code ?? ExitCode.ok;
    } catch (error) {
      if (error instanceof CliError) {
        process.stderr.write(`error: ${error.message}\n`);
        process.exitCode = error.exitCode;
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`error: ${message}\n`);
      if (process.env.NETFORM_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
      process.exitCode = ExitCode.error;
    }
  };
}
