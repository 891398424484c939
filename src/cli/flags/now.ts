/**
 * The instant a run judges expiries and acknowledgements at: the run's clock, or, for commands that
 * only read, the hidden `--now TIME` (for tests and for asking "what will be true on that day").
 * Commands that write (apply, plan -o, drift --every) keep their own clock.
 */
import { Option, type Command } from 'commander';
import { parseInstant } from '../../model/instant.js';
import { inertText } from '../../views/escape.js';
import { instantProblemText } from '../../views/model-instant.js';
import { CliError } from '../exit.js';
import type { CliIo } from '../io.js';

export function addNowOption(cmd: Command): Command {
  return cmd.addOption(new Option('--now <time>', 'judge expiries as at this instant (read-only commands)').hideHelp());
}

/** `--now` when given (a date or a date-time with an offset), else the run's clock. */
export function instantOf(io: Pick<CliIo, 'clock'>, options: { now?: string }): Date {
  if (options.now === undefined) return io.clock();
  const parsed = parseInstant(options.now);
  if (!parsed.ok) throw new CliError(`--now: ${instantProblemText(parsed.problem)} (got ${inertText(options.now)})`);
  return parsed.instant;
}

/** The clock a read-only command judges expiries at: `--now` when given, else the run's. */
export function clockOf(io: Pick<CliIo, 'clock'>, options: { now?: string }): () => Date {
  if (options.now === undefined) return () => io.clock();
  const at = instantOf(io, options);
  return () => at;
}

/** `--now` where a command writes (or schedules): refused, since writing judges at its own clock. */
export function refuseNow(options: { now?: string }, what: string): void {
  if (options.now !== undefined)
    throw new CliError(`--now is only for commands that read: ${what} judges expiries at its own clock`);
}

/** The run's instant: `--now` when given (refused beside `writes`, a flag that writes or repeats), else the clock. */
export function judgedAt(io: Pick<CliIo, 'clock'>, opts: { now?: string }, writes?: string): Date {
  if (opts.now !== undefined && writes !== undefined)
    throw new CliError(`--now cannot be given with ${writes}: a run that writes or repeats judges at its own clock`);
  return instantOf(io, opts);
}
