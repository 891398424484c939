/** What `apply` applies: a saved plan or `-f PATH`, exactly one, and a saved plan is not shaped again. */
import { CliError } from '../exit.js';

export function checkApplySources(
  savedPlanPath: string | undefined,
  opts: { file?: string; replace?: unknown; rotatePasswords?: unknown },
): void {
  if (savedPlanPath && opts.file) throw new CliError('give either a saved plan or -f PATH, not both');
  if (!savedPlanPath && !opts.file)
    throw new CliError(
      'nothing to apply: pass -f PATH (desired state) or the path of a saved plan from `netform plan -o`',
    );
  if (savedPlanPath && (opts.replace || opts.rotatePasswords))
    throw new CliError(
      '--replace and --rotate-passwords shape a plan: pass them to `netform plan`; a saved plan is applied exactly as it was made',
    );
}
