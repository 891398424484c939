import type { Command } from 'commander';
import { action, CliError } from './exit.js';

// Placeholder until the issue that owns `netform server` lands: it refuses clearly.
export function registerServer(program: Command): void {
  program
    .command('server')
    .description('(not available yet)')
    .allowUnknownOption()
    .action(action(async () => {
      throw new CliError('netform server is not available in this build yet');
    }));
}
