/** What a command module gives the registry in main.ts, and what the registry is. */
import type { Command } from 'commander';

/** Registers a command on the program; the completion command reads the whole registry. */
export type Register = (program: Command, registry: Registry) => void;

export interface CommandEntry {
  /** The command's module, imported only when the command runs or its own help is asked for. */
  load: () => Promise<Register>;
  /** Its arguments and one line for the list of commands, so that `netform --help` imports none of them. */
  args: string;
  summary: string;
}

export type Registry = Readonly<Record<string, CommandEntry>>;
