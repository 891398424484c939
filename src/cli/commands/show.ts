/**
 * `netform show [KEY...]`: live objects in the desired-state YAML format: a whole document of
 * all, or the fragments of those named (`user:EMAIL`, `device:EMAIL/NAME`, `rule:KEY`, as in
 * plans), ready to paste; `--document` prints those as a whole document with their users.
 */
import type { Command } from 'commander';
import type { CliContext } from '../command.js';
import { ExitCode } from '../exit.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';

export function registerShow(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('show [keys...]')
    .description(
      'print live objects as desired-state YAML: all, or those given as user:EMAIL, device:EMAIL/NAME, rule:KEY',
    )
    .option('--document', 'print a whole document (header, settings, the users they belong to), not fragments');
  addConnectionOptions(cmd);
  cmd.action(
    cli.action(async (keys: string[], opts: ConnectionOptions & { document?: boolean }) => {
      const { shippedSchemaReference } = await import('../../ops/export.js');
      const { showLive } = await import('../../ops/show.js');
      const { connectorOf, resolveConnection } = await import('../flags/session.js');
      const schemaRef = shippedSchemaReference(io.cwd);
      const document = opts.document === true;
      io.out.write(await showLive({ connect: connectorOf(resolveConnection(opts, io)), keys, schemaRef, document }));
      return ExitCode.ok;
    }),
  );
}
