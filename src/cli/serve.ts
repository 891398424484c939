import type { Command } from 'commander';
import { action, CliError } from './exit.js';

// Placeholder until the issue that owns `netform serve` lands: it refuses clearly.
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('(not available yet)')
    .allowUnknownOption()
    .action(action(async () => {
      throw new CliError('netform serve is not available in this build yet');
    }));
}
