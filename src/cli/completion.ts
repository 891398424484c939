/**
 * `netform completion bash|zsh|fish`: a completion script for the shell, made from the commands
 * and options as registered (so it never falls behind them). Commands complete first, then each
 * command's options after a dash, and file names otherwise.
 */
import { Command } from 'commander';
import { action } from './boundary.js';
import { CliError, ExitCode } from './exit.js';
import { completionScript, SHELLS, type CommandInfo, type Shell } from '../views/completion.js';

export function registerCompletion(program: Command): void {
  program
    .command('completion <shell>')
    .description(
      'print a completion script: bash (source it, or put it in /etc/bash_completion.d/), zsh (in a folder of $fpath as _netform), fish (in ~/.config/fish/completions/netform.fish)',
    )
    .action(
      action(async (shell: string) => {
        if (!(SHELLS as readonly string[]).includes(shell))
          throw new CliError(`completion: unknown shell "${shell}"; choose one of ${SHELLS.join(', ')}`);
        process.stdout.write(completionScript(shell as Shell, await describeCommands()));
        return ExitCode.ok;
      }),
    );
}

/** Every command as registered, on a program of its own (main.ts registers only the one asked for). */
async function describeCommands(): Promise<CommandInfo[]> {
  const scratch = new Command('netform');
  const modules = await Promise.all([
    import('./validate.js').then((m) => m.registerValidate),
    import('./plan.js').then((m) => m.registerPlan),
    import('./apply.js').then((m) => m.registerApply),
    import('./drift.js').then((m) => m.registerDrift),
    import('./export.js').then((m) => m.registerExport),
    import('./show.js').then((m) => m.registerShow),
    import('./serve.js').then((m) => m.registerServe),
    import('./server.js').then((m) => m.registerServer),
  ]);
  for (const register of modules) register(scratch);
  const commands = scratch.commands.map((c) => ({
    name: c.name(),
    description: c.description(),
    options: c.options.filter((o) => o.long).map((o) => ({ flag: o.long!, description: o.description })),
    subcommands: c.commands.map((sub) => sub.name()),
  }));
  return [
    ...commands,
    {
      name: 'completion',
      description: 'print a completion script (bash, zsh, fish)',
      options: [],
      subcommands: SHELLS.slice(),
    },
  ];
}
