/** The flags that shape a plan, shared by `plan` and `apply -f`. */
import type { Command } from 'commander';
import type { PlanShaping } from '../../ops/plan.js';
import type { ConnectionOptions } from './connection.js';
import { parseNonNegative } from './numbers.js';

export interface PlanningOptions extends ConnectionOptions, PlanShaping {
  file?: string;
  color?: boolean;
}

export function addPlanningOptions(cmd: Command): Command {
  return cmd
    .option(
      '--allow-deletes <n>',
      'allow up to N deletions (cascades included) in this run, whatever the limits say',
      parseNonNegative,
    )
    .option(
      '--allow-updates <n>',
      'allow up to N updates (replacements included) in this run, whatever the limits say',
      parseNonNegative,
    )
    .option(
      '--replace',
      'plan device changes that Firezone 0.7.26+ ignores on update as delete-then-create, keeping keys and addresses',
    )
    .option('--rotate-passwords', 'send declared passwords to existing users too (normally only on create)')
    .option(
      '--target <key>',
      'limit the plan to this object and what it needs (user:EMAIL, device:EMAIL/NAME, rule:KEY); repeatable',
      (v: string, all: string[] = []) => [...all, v],
    )
    .option('--no-color', 'no colours in the output');
}

/** The flags as the operation's request: only what shapes the plan. */
export function planShaping(opts: PlanningOptions): PlanShaping {
  const { allowDeletes, allowUpdates, replace, rotatePasswords, target } = opts;
  return { allowDeletes, allowUpdates, replace, rotatePasswords, target };
}
