/** What a command module gives the registry in run.ts, and what it gets: the registry and the run. */
import type { Command } from 'commander';
import type { ExitCode } from './exit.js';
import type { CliIo } from './io.js';

/** One run of the command line, as its commands see it. */
export interface CliContext {
  io: CliIo;
  /** Every command (the completion command reads it whole). */
  registry: Registry;
  /** Wraps a command's action: its returned exit code (none: 0) is the run's; a failure goes to run()'s boundary. */
  action<A extends unknown[]>(run: (...args: A) => Promise<ExitCode | void>): (...args: A) => Promise<void>;
}

/** Registers a command on the program. */
export type Register = (program: Command, cli: CliContext) => void;

export interface CommandEntry {
  /** The command's module, imported only when the command runs or its own help is asked for. */
  load: () => Promise<Register>;
  /** Its arguments and one line for the list of commands, so that `netform --help` imports none of them. */
  args: string;
  summary: string;
}

export type Registry = Readonly<Record<string, CommandEntry>>;
