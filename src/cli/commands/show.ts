/**
 * `netform show [KEY...]`: live objects in the desired-state YAML format: all, or those named
 * (`user:EMAIL`, `device:EMAIL/NAME`, `rule:KEY`, as in plans) with the user each belongs to.
 */
import type { Command } from 'commander';
import { shippedSchemaReference } from '../../ops/export.js';
import { showLive } from '../../ops/show.js';
import { action } from '../boundary.js';
import { ExitCode } from '../exit.js';
import { addConnectionOptions, connectorOf, type ConnectionOptions } from '../flags/connection.js';

export function registerShow(program: Command): void {
  const cmd = program
    .command('show [keys...]')
    .description(
      'print live objects as desired-state YAML: all, or those given as user:EMAIL, device:EMAIL/NAME, rule:KEY',
    );
  addConnectionOptions(cmd);
  cmd.action(
    action(async (keys: string[], opts: ConnectionOptions) => {
      const schemaRef = shippedSchemaReference(process.cwd());
      process.stdout.write(await showLive({ connect: connectorOf(opts), keys, schemaRef }));
      return ExitCode.ok;
    }),
  );
}
