/**
 * `netform adopt -f DIR [KEY...]`: the live values of the named objects (or of every difference
 * drift reports, `--all-drift`) written into the desired-state files as small edits that keep
 * every comment, so that `plan` is clean for them; the diff on standard output, what was written
 * and what was left on standard error. Never writes to the server.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from '../command.js';
import { ExitCode } from '../exit.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';
import { inputOf } from '../io.js';

interface AdoptOptions extends ConnectionOptions {
  file: string;
  allDrift?: boolean;
  dryRun?: boolean;
  into?: string;
  removeDeleted?: boolean;
}

export function registerAdopt(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('adopt [keys...]')
    .description(
      'write the live values of objects changed by hand into the desired-state files (small edits, comments kept): user:EMAIL, device:EMAIL/NAME, rule:KEY, or --all-drift',
    )
    .requiredOption('-f, --file <path>', 'desired-state file or folder to edit')
    .option('--all-drift', 'adopt every difference drift reports')
    .option('--dry-run', 'print the diff, write nothing')
    .option(
      '--into <file>',
      'where new objects go that no declared user holds (default: the file export --split would choose)',
    )
    .option('--remove-deleted', 'remove declarations of objects deleted from the server by hand (with their comments)');
  addConnectionOptions(cmd);
  cmd.action(
    cli.action(async (keys: string[], opts: AdoptOptions) => {
      const { adoptFromServer } = await import('../../ops/adopt.js');
      const { adoptCdktfText, adoptDiff, adoptReport } = await import('../../views/adopt.js');
      const { connectorOf, resolveConnection } = await import('../flags/session.js');
      const result = await adoptFromServer({
        file: opts.file,
        connect: connectorOf(resolveConnection(opts, io)),
        keys,
        allDrift: opts.allDrift ?? false,
        dryRun: opts.dryRun ?? false,
        ...(opts.into !== undefined ? { into: resolve(io.cwd, opts.into) } : {}),
        removeDeleted: opts.removeDeleted ?? false,
        input: inputOf(io),
        now: io.clock(),
      });
      if (result.cdktf !== undefined) {
        io.out.write(adoptCdktfText(result.cdktf));
        return ExitCode.ok;
      }
      io.out.write(adoptDiff(result.files));
      io.err.write(adoptReport(result.notes, result.files, opts.dryRun ?? false));
      return ExitCode.ok;
    }),
  );
}
