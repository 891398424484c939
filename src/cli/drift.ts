import type { Command } from 'commander';
import { action, CliError } from './exit.js';

// Placeholder until the issue that owns `netform drift` lands: it refuses clearly.
export function registerDrift(program: Command): void {
  program
    .command('drift')
    .description('(not available yet)')
    .allowUnknownOption()
    .action(action(async () => {
      throw new CliError('netform drift is not available in this build yet');
    }));
}
