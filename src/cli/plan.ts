import type { Command } from 'commander';
import { action, CliError } from './exit.js';

// Placeholder until the issue that owns `netform plan` lands: it refuses clearly.
export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('(not available yet)')
    .allowUnknownOption()
    .action(action(async () => {
      throw new CliError('netform plan is not available in this build yet');
    }));
}
