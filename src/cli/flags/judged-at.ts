/**
 * The hidden `--now` of `plan` and `drift` (flags/now.ts): the instant `acknowledged:` entries are
 * judged at. Refused where the run writes or keeps running (`plan -o`, `drift --every`): those keep
 * their own clock.
 */
import { CliError } from '../exit.js';
import type { CliIo } from '../io.js';
import { addNowOption, instantOf } from './now.js';

export { addNowOption };

/** The run's instant: `--now` when given (refused beside `writes`, a flag that writes or repeats), else the clock. */
export function judgedAt(io: Pick<CliIo, 'clock'>, opts: { now?: string }, writes?: string): Date {
  if (opts.now !== undefined && writes !== undefined)
    throw new CliError(`--now cannot be given with ${writes}: a run that writes or repeats judges at its own clock`);
  return instantOf(io, opts);
}
