/**
 * The command line as a function: `run(argv, io)` parses the arguments, runs the command through
 * `io` (its streams, environment and folder) and returns the exit code (docs/netform.md section
 * 3). It never exits the process and keeps nothing between runs: each run has a commander program
 * of its own and its own secrets (io.secrets). The bin (main.ts) runs it with the process's io;
 * tests and library users with one in memory (io.ts, memoryIo).
 */
import type { EventEmitter } from 'node:events';
import { Command, CommanderError } from 'commander';
import { NETFORM_VERSION } from '../version.js';
import { describeFailure } from './boundary.js';
import type { CliContext } from './command.js';
import { ExitCode } from './exit.js';
import type { CliIo, Env } from './io.js';
import { commands } from './registry.js';

/**
 * Runs `netform ARGV` (the arguments after the program's name) and resolves with its exit code.
 * Expected failures are one `error:` message on io.err with their code; a usage error prints
 * commander's message and the help (exit 1); `--help` and `--version` print on io.out (exit 0).
 * A second stop request (io.stops) during apply, serve or drift ends the run at once with its code.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let exitNow!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (exitNow = resolve));
  const runIo: CliIo = {
    ...io,
    exit: (code) => {
      exitNow(code);
      io.exit(code);
    },
  };
  return Promise.race([parse(argv, runIo), exited]);
}

async function parse(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: ExitCode = ExitCode.ok;
  const cli: CliContext = {
    io,
    registry: commands,
    action:
      (fn) =>
      async (...args) => {
        exitCode = (await fn(...args)) ?? ExitCode.ok;
      },
  };
  try {
    const program = programFor(io);
    const requested = argv[0];
    // `netform help plan` is plan's own help: load plan.
    const target = requested === 'help' ? argv[1] : requested;
    if (target !== undefined && Object.hasOwn(commands, target)) {
      (await commands[target]!.load())(program, cli);
    } else if (requested !== '--version' && requested !== '-V') {
      // The list of commands (help, an unknown command): names and summaries only.
      for (const [name, entry] of Object.entries(commands)) {
        program.command(`${name} ${entry.args}`.trim()).summary(entry.summary);
      }
    }
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    // Help, the version and usage errors: commander has written them already.
    if (error instanceof CommanderError) return error.exitCode;
    const { text, code } = describeFailure(error, io);
    io.err.write(text);
    return code;
  }
}

/** A fresh program for one run: its output on io, its exits thrown (never process.exit), its environment io.env. */
function programFor(io: CliIo): Command {
  const colors = (tty: boolean) => () => hasColors(io.env) ?? tty;
  return new IoCommand('netform', io.env)
    .description('Manage the users, devices and rules of a /v0 network-access server as code.')
    .version(NETFORM_VERSION)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out.write(text),
      writeErr: (text) => io.err.write(text),
      outputError: (text, write) => write(text),
      // Undefined (not a terminal): commander's 80 columns. Its types say a number.
      getOutHelpWidth: (() => io.columns?.out) as () => number,
      getErrHelpWidth: (() => io.columns?.err) as () => number,
      getOutHasColors: colors(io.isTTY.out),
      getErrHasColors: colors(io.isTTY.err),
    });
}

/** Colours forced on or off by the environment (as commander decides it), else undefined. */
function hasColors(env: Env): boolean | undefined {
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return undefined;
}

/** A commander command whose options' environment variables (`.env('NETFORM_URL')`) are read from the run's env. */
class IoCommand extends Command {
  readonly #env: Env;

  constructor(name: string | undefined, env: Env) {
    super(name);
    this.#env = env;
  }

  override createCommand(name?: string): Command {
    return new IoCommand(name, this.#env);
  }

  /** Replaces commander's own, which reads process.env; the same rules otherwise. */
  _parseOptionsEnv(): void {
    for (const option of this.options) {
      const value = option.envVar === undefined ? undefined : this.#env[option.envVar];
      if (value === undefined) continue;
      const key = option.attributeName();
      const source = this.getOptionValueSource(key);
      // Never over a value from the command line or set by the code.
      if (this.getOptionValue(key) !== undefined && !['default', 'config', 'env'].includes(source ?? '')) continue;
      const events = this as unknown as EventEmitter;
      if (option.required || option.optional) events.emit(`optionEnv:${option.name()}`, value);
      else events.emit(`optionEnv:${option.name()}`);
    }
  }
}
