/**
 * Apply's expiry flags: `--expired-only` (write only the deletions and demotions expiries cause),
 * and the hidden `--now`, refused: apply judges expiries at its own clock.
 */
import type { Command } from 'commander';
import { CliError } from '../exit.js';
import { addNowOption, refuseNow } from './now.js';

export interface ExpiryApplyOptions {
  expiredOnly?: boolean;
  now?: string;
  reviewed?: string;
}

export function addExpiryApplyOptions(cmd: Command): Command {
  addNowOption(cmd).option(
    '--expired-only',
    'with -f: write only the deletions and demotions that expiries (expires:, role_expires:) cause; exit 2 when other changes are pending',
  );
  // Checked before anything is read: apply's time is its own.
  return cmd.hook('preAction', (_command, action) => {
    const opts = action.opts<ExpiryApplyOptions>();
    const saved = action.args.length > 0 && action.args[0] !== undefined;
    refuseNow(opts, 'apply');
    if (opts.expiredOnly && (saved || opts.reviewed))
      throw new CliError(
        "--expired-only goes with -f PATH alone: the files are planned at apply's clock and only their expiries are written",
      );
  });
}
