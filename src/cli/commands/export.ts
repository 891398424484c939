/** `netform export`: the live server as desired-state YAML, to start managing an existing server. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from '../command.js';
import type { CliIo } from '../io.js';
import { CliError, ExitCode } from '../exit.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';

interface ExportOptions extends ConnectionOptions {
  output?: string;
  split?: boolean;
  force?: boolean;
  addresses: boolean;
  explicitDefaults?: boolean;
  schema?: string;
  prune: boolean;
}

export function registerExport(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('export')
    .description('write the live server as desired-state YAML (secrets as references, never values)')
    .option(
      '-o, --output <dir>',
      'write the files into this folder (created if missing); without it or with -, print one document',
    )
    .option('--split', 'one file per user plus one for the global rules (needs -o)')
    .option('--force', 'overwrite files that already exist in the folder')
    .option('--no-addresses', 'leave device tunnel addresses (ipv4, ipv6) out, so the server keeps choosing them')
    .option(
      '--no-prune',
      'do not write `settings: { prune: true }`: objects removed from the files later are left on the server',
    )
    .option(
      '--explicit-defaults',
      'also write `role: unprivileged` and `use_default_<x>: true`; both exports write `version: 2`, where fields left out are managed at these defaults too, so the files mean the same',
    )
    .option(
      '--schema <ref>',
      'what the `# yaml-language-server: $schema=` comment points at (default: the schema of this netform, relative to the output)',
    );
  addConnectionOptions(cmd);
  cmd.action(cli.action((opts: ExportOptions) => runExport(opts, io)));
}

async function runExport(opts: ExportOptions, io: CliIo): Promise<ExitCode> {
  const { describeCounts } = await import('../../desired/export/files.js');
  const { exportServer, shippedSchemaReference, writeExportFiles } = await import('../../ops/export.js');
  const { leftOutText } = await import('../../views/export.js');
  const { connectorOf, resolveConnection } = await import('../flags/session.js');
  // `-o -` is standard output, as without -o (never a folder named "-").
  if (opts.output === '-') delete opts.output;
  if (opts.split && !opts.output) throw new CliError('--split writes one file per user: give the folder with -o DIR');
  const outputDir = opts.output ? resolve(opts.output) : null;
  const { files, counts, leftOut } = await exportServer({
    connect: connectorOf(resolveConnection(opts, io)),
    split: opts.split ?? false,
    addresses: opts.addresses,
    explicitDefaults: opts.explicitDefaults ?? false,
    prune: opts.prune,
    schemaRef: opts.schema ?? shippedSchemaReference(outputDir ?? io.cwd),
  });
  const summary = describeCounts(counts);
  if (!outputDir) {
    io.out.write(files[0]!.content);
    io.err.write(`exported ${summary}\n${leftOutText(leftOut)}`);
    return ExitCode.ok;
  }
  const others = await writeExportFiles(outputDir, files, opts.force ?? false);
  const shown = opts.output!;
  io.err.write(`exported ${summary} to ${files.length} file(s) in ${shown}\n${leftOutText(leftOut)}`);
  if (others.length > 0) {
    io.err.write(
      `warning: ${shown} also holds ${others.join(', ')}, which \`netform plan -f ${shown}\` reads together with the export; remove what no longer applies\n`,
    );
  }
  io.err.write(
    `next: review the files, commit them, and check with \`netform plan -f ${shown}\` (no changes expected)\n`,
  );
  return ExitCode.ok;
}
