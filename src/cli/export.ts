import type { Command } from 'commander';
import { action, CliError } from './exit.js';

// Placeholder until the issue that owns `netform export` lands: it refuses clearly.
export function registerExport(program: Command): void {
  program
    .command('export')
    .description('(not available yet)')
    .allowUnknownOption()
    .action(action(async () => {
      throw new CliError('netform export is not available in this build yet');
    }));
}
