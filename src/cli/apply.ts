import type { Command } from 'commander';
import { action, CliError } from './exit.js';

// Placeholder until the issue that owns `netform apply` lands: it refuses clearly.
export function registerApply(program: Command): void {
  program
    .command('apply')
    .description('(not available yet)')
    .allowUnknownOption()
    .action(action(async () => {
      throw new CliError('netform apply is not available in this build yet');
    }));
}
