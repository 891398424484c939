import type { Command } from 'commander';
import { action, CliError } from './exit.js';

// Placeholder until the issue that owns `netform validate` lands: it refuses clearly.
export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('(not available yet)')
    .allowUnknownOption()
    .action(action(async () => {
      throw new CliError('netform validate is not available in this build yet');
    }));
}
