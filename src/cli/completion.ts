/**
 * `netform completion bash|zsh|fish`: a completion script for the shell, made from the commands
 * and options as registered (so it never falls behind them). Commands complete first, then each
 * command's options after a dash, and file names otherwise.
 */
import { Command } from 'commander';
import { action } from './boundary.js';
import { CliError, ExitCode } from './exit.js';

interface CommandInfo {
  name: string;
  description: string;
  options: { flag: string; description: string }[];
  /** `server token`, `server defaults`: completed as the word after the command. */
  subcommands: string[];
}

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

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
    import('./nft.js').then((m) => m.registerNft),
    import('./reach.js').then((m) => m.registerWhoCanReach),
    import('./reach.js').then((m) => m.registerReach),
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

function firstSentence(text: string): string {
  return text.split(/[;:(]/)[0]!.trim();
}

export function completionScript(shell: Shell, commands: CommandInfo[]): string {
  if (shell === 'bash') return bashScript(commands);
  if (shell === 'zsh') return zshScript(commands);
  return fishScript(commands);
}

function bashScript(commands: CommandInfo[]): string {
  const cases = commands
    .map((c) => `    ${c.name}) opts="${c.options.map((o) => o.flag).join(' ')}"; subs="${c.subcommands.join(' ')}" ;;`)
    .join('\n');
  return `# netform completion for bash: source this file (netform completion bash > /etc/bash_completion.d/netform)
_netform() {
  local cur=\${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${commands.map((c) => c.name).join(' ')}" -- "$cur"))
    return
  fi
  local opts="" subs=""
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _netform netform
`;
}

function quoteZsh(text: string): string {
  return text.replace(/'/g, `'\\''`).replace(/:/g, '\\:');
}

function zshScript(commands: CommandInfo[]): string {
  const list = commands.map((c) => `    '${c.name}:${quoteZsh(firstSentence(c.description))}'`).join('\n');
  const cases = commands
    .map((c) => `    ${c.name}) opts=(${c.options.map((o) => o.flag).join(' ')}); subs=(${c.subcommands.join(' ')}) ;;`)
    .join('\n');
  return `#compdef netform
# netform completion for zsh: save as _netform in a folder of $fpath (netform completion zsh > ~/.zfunc/_netform)
_netform() {
  local -a commands opts subs
  commands=(
${list}
  )
  if (( CURRENT == 2 )); then
    _describe 'netform command' commands
    return
  fi
  case $words[2] in
${cases}
  esac
  if (( CURRENT == 3 )) && (( \${#subs} > 0 )); then
    compadd -- $subs
  elif [[ $PREFIX == -* ]]; then
    compadd -- $opts
  else
    _files
  fi
}
compdef _netform netform
`;
}

function quoteFish(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function fishScript(commands: CommandInfo[]): string {
  const lines = [
    '# netform completion for fish: netform completion fish > ~/.config/fish/completions/netform.fish',
    'complete -c netform -f',
  ];
  for (const c of commands)
    lines.push(
      `complete -c netform -n __fish_use_subcommand -a ${c.name} -d ${quoteFish(firstSentence(c.description))}`,
    );
  for (const c of commands) {
    for (const o of c.options) {
      lines.push(
        `complete -c netform -n '__fish_seen_subcommand_from ${c.name}' -l ${o.flag.replace(/^--/, '')} -d ${quoteFish(firstSentence(o.description))}`,
      );
    }
    if (c.subcommands.length > 0)
      lines.push(`complete -c netform -n '__fish_seen_subcommand_from ${c.name}' -a '${c.subcommands.join(' ')}'`);
    else lines.push(`complete -c netform -n '__fish_seen_subcommand_from ${c.name}' -F`);
  }
  return `${lines.join('\n')}\n`;
}
