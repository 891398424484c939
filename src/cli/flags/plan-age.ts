/** `apply --plan-max-age`: how old a saved plan may be (by its sealed creation date) when it is applied. */
import type { Command } from 'commander';
import { checkPlanAge, DEFAULT_PLAN_MAX_AGE, parsePlanMaxAge } from '../../plan/age.js';
import type { Plan } from '../../plan/types.js';
import { inertText } from '../../views/escape.js';
import { CliError } from '../exit.js';
import type { CliIo } from '../io.js';

export function addPlanAgeOption(cmd: Command): Command {
  return cmd.option(
    '--plan-max-age <duration>',
    'refuse a saved plan older than this (7d, 12h, 30m; 0 for no limit); with --reviewed, only a warning',
    DEFAULT_PLAN_MAX_AGE,
  );
}

function maxAgeOf(text: string): number {
  const ms = parsePlanMaxAge(text);
  if (ms === null)
    throw new CliError(
      `--plan-max-age: expected a duration such as 7d, 12h, 30m, 90s or 2w, or 0 for no limit (got ${inertText(text)})`,
    );
  return ms;
}

/**
 * Checks the age of the saved plan at `path`: refused (exit 1) when it is applied as it is,
 * a warning on stderr when it is the reviewed plan of `--reviewed` (their words loaded only then).
 */
export async function checkSavedPlanAge(
  path: string,
  plan: Plan,
  maxAge: string,
  use: 'apply' | 'reviewed',
  io: Pick<CliIo, 'err'>,
  now = new Date(),
): Promise<void> {
  const check = checkPlanAge(plan.created_at, maxAgeOf(maxAge), now);
  if (check.status === 'fresh') return;
  const { planTooOldMessage, reviewedPlanOldWarning } = await import('../../views/apply.js');
  if (use === 'apply') throw new CliError(planTooOldMessage(path, check));
  io.err.write(reviewedPlanOldWarning(path, check));
}
