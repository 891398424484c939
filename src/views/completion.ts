/**
 * Shell completion scripts (bash, zsh, fish) for a list of commands: commands complete first,
 * then each command's options after a dash, and file names otherwise.
 */

export interface CommandInfo {
  name: string;
  description: string;
  options: { flag: string; description: string }[];
  /** `server token`, `server defaults`: completed as the word after the command. */
  subcommands: string[];
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

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
