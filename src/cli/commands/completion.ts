/**
 * `netform completion bash|zsh|fish`: a completion script for the shell, made from the commands
 * and options as registered in main.ts (so it never falls behind them).
 */
import { Command } from 'commander';
import { completionScript, SHELLS, type CommandInfo, type Shell } from '../../views/completion.js';
import type { CliContext } from '../command.js';
import { CliError, ExitCode } from '../exit.js';

export function registerCompletion(program: Command, cli: CliContext): void {
  const { io } = cli;
  program
    .command('completion <shell>')
    .description(
      'print a completion script: bash (source it, or put it in /etc/bash_completion.d/), zsh (in a folder of $fpath as _netform), fish (in ~/.config/fish/completions/netform.fish)',
    )
    .action(
      cli.action(async (shell: string) => {
        if (!(SHELLS as readonly string[]).includes(shell))
          throw new CliError(`completion: unknown shell "${shell}"; choose one of ${SHELLS.join(', ')}`);
        io.out.write(completionScript(shell as Shell, await describeCommands(cli)));
        return ExitCode.ok;
      }),
    );
}

/** Every command of the registry, registered on a program of its own (run.ts registers only the one asked for). */
async function describeCommands(cli: CliContext): Promise<CommandInfo[]> {
  const scratch = new Command('netform');
  const entries = Object.entries(cli.registry);
  for (const [name, entry] of entries) {
    if (name === 'completion') scratch.command(name).description(entry.summary);
    else (await entry.load())(scratch, cli);
  }
  return scratch.commands.map((c) => ({
    name: c.name(),
    description: c.description(),
    options: c.options.filter((o) => o.long).map((o) => ({ flag: o.long!, description: o.description })),
    // `server token`, `server defaults`; the shells for this command.
    subcommands: c.name() === 'completion' ? SHELLS.slice() : c.commands.map((sub) => sub.name()),
  }));
}
