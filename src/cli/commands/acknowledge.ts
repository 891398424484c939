/**
 * `netform acknowledge KEY [FIELD] --until DATE --reason TEXT -f PATH`: reads the live server and
 * writes an `acknowledged:` entry (the live value of FIELD, or the object's fingerprint for the
 * object as a whole) into the desired-state files with a minimal edit; says which file it wrote.
 * Never writes to the server. Exit 0 written, 1 refused (nothing differs, unknown key, a past date).
 */
import type { Command } from 'commander';
import { acknowledgeLive } from '../../ops/acknowledge.js';
import { displayPath } from '../../desired/files.js';
import { acknowledgedLine } from '../../views/acknowledge.js';
import type { CliContext } from '../command.js';
import { ExitCode } from '../exit.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';
import { connectorOf, resolveConnection } from '../flags/session.js';
import { inputOf } from '../io.js';

interface AcknowledgeOptions extends ConnectionOptions {
  file: string;
  until: string;
  reason: string;
}

export function registerAcknowledge(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('acknowledge <key> [field]')
    .description(
      'keep a difference from the files until a date: write an acknowledged: entry with the live value of FIELD (or of the whole object: user:EMAIL, device:EMAIL/NAME, rule:KEY)',
    )
    .requiredOption('-f, --file <path>', 'desired-state YAML file or folder to write the entry into')
    .requiredOption('--until <date>', 'until when: a date (2026-12-31) or a date-time with an offset')
    .requiredOption('--reason <text>', 'why the difference is kept');
  addConnectionOptions(cmd);
  cmd.action(
    cli.action(async (key: string, field: string | undefined, opts: AcknowledgeOptions) => {
      const result = await acknowledgeLive({
        file: opts.file,
        input: inputOf(io),
        connect: connectorOf(resolveConnection(opts, io)),
        key,
        ...(field !== undefined ? { field } : {}),
        until: opts.until,
        reason: opts.reason,
        now: io.clock(),
      });
      io.out.write(`${acknowledgedLine(result.entry, displayPath(result.file), result.replaced)}\n`);
      return ExitCode.ok;
    }),
  );
}
