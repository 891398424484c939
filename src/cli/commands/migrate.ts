/**
 * `netform migrate firezone-1x`: a 0.7 state compiled into Firezone 1.x objects (main.tf.json for
 * the official provider) with the per-user comparison (report.md, report.json). Reads the files
 * (-f), the live server (--url or --embedded), or both (the state after apply); writes to no server.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { fileProblem, writeFileAtomically } from '../../model/files.js';
import { parseCidrOrAddress } from '../../model/net.js';
import { migrateToFirezone1x } from '../../ops/migrate.js';
import { inputOf } from '../io.js';
import { migrateSummary, reportJson, reportMarkdown } from '../../views/migrate.js';
import { fileProblemText } from '../../views/model-files.js';
import type { CliContext } from '../command.js';
import { CliError, ExitCode } from '../exit.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';
import { connectorOf, resolveConnection } from '../flags/session.js';
import { Timings } from '../output.js';

interface MigrateOptions extends ConnectionOptions {
  file?: string;
  output: string;
  everyoneGroup?: string;
  prefer: 'narrower' | 'wider';
  assumeFilterRouting?: boolean;
  within?: string;
}

const TARGETS = ['firezone-1x'];

function scopeOf(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const blocks = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const block of blocks)
    if (!parseCidrOrAddress(block))
      throw new CliError(`--within: ${JSON.stringify(block)} is not an address or ADDRESS/PREFIX`);
  return blocks;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function registerMigrate(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('migrate <target>')
    .description(
      'compile the 0.7 state into Firezone 1.x objects (TARGET firezone-1x): main.tf.json for the official Terraform provider, ' +
        "and report.md/report.json comparing each user's reach; -f DIR (the files), --url (the live server), or both (the state after apply); writes to no server",
    )
    .option('-f, --file <path>', 'desired state: a YAML file or a folder of YAML files')
    .option(
      '-o, --output <dir>',
      'folder for main.tf.json, report.md and report.json (created if missing)',
      'firezone-1x',
    )
    .option(
      '--everyone-group <id>',
      "grant the global rules' reach to the account's Everyone group (its id), which covers future users",
    )
    .addOption(
      new Option(
        '--prefer <side>',
        'where 1.x cannot express a reach exactly: the largest inside it, or the smallest around it',
      )
        .choices(['narrower', 'wider'])
        .default('narrower'),
    )
    .option(
      '--assume-filter-routing',
      'allow overlapping resources (fewer objects): right only for clients with firezone#12684',
    )
    .option(
      '--within <cidrs>',
      'the migrated scope, comma-separated (default: the private IPv4 ranges); rule destinations are always in it',
    );
  addConnectionOptions(cmd);
  cmd.action(
    cli.action(async (target: string, opts: MigrateOptions) => {
      if (!TARGETS.includes(target))
        throw new CliError(`TARGET ${JSON.stringify(target)}: netform migrates to ${TARGETS.join(', ')}`);
      // With -f, only a --url typed here adds the server (the state after apply): a NETFORM_URL in
      // the environment of a CI job does not turn a migration of the files into another one.
      const typedUrl = opts.file ? opts.urlGivenOnCommandLine === true : opts.url !== undefined;
      const server = typedUrl || opts.embedded !== undefined;
      if (!opts.file && !server)
        throw new CliError('give -f DIR (the files), --url (the live server), or both (the state after apply)');
      // The 1.x API's group ids are UUIDs (openapi.json: group_id, format uuid; docs/firezone-1x.md §7).
      if (opts.everyoneGroup !== undefined && !UUID.test(opts.everyoneGroup))
        throw new CliError(
          `--everyone-group: ${JSON.stringify(opts.everyoneGroup)} is not a group id (a UUID, as the 1.x portal shows it)`,
        );
      const scope = scopeOf(opts.within);
      const timings = new Timings(io);
      const result = await migrateToFirezone1x(
        {
          file: opts.file,
          live: server ? connectorOf(resolveConnection(opts, io)) : undefined,
          input: inputOf(io),
          ...(opts.file && server ? { afterApply: true } : {}),
          options: {
            prefer: opts.prefer,
            assumeFilterRouting: opts.assumeFilterRouting === true,
            ...(opts.everyoneGroup !== undefined ? { everyoneGroup: opts.everyoneGroup } : {}),
            ...(scope ? { scope } : {}),
          },
        },
        timings,
      );
      const dir = resolve(io.cwd, opts.output);
      const files: [string, string][] = [
        ['main.tf.json', result.terraform],
        ['report.md', reportMarkdown(result)],
        ['report.json', reportJson(result)],
      ];
      try {
        mkdirSync(dir, { recursive: true });
        for (const [name, text] of files) writeFileAtomically(join(dir, name), text);
      } catch (error) {
        throw new CliError(`cannot write to ${opts.output}: ${fileProblemText(fileProblem(error))}`);
      }
      io.out.write(migrateSummary(result, opts.output));
      timings.report();
      return ExitCode.ok;
    }),
  );
}
