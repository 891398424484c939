/** `netform export`: the live server as desired-state YAML, to start managing an existing server. */
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { fetchConfiguration } from '../client/index.js';
import { describeCounts, ExportError, exportLiveState, type ExportedFile } from '../desired/export.js';
import { writeFileAtomically } from '../drift/sinks.js';
import { addConnectionOptions, openConnection, type ConnectionOptions } from './connection.js';
import { action } from './boundary.js';
import { inertText } from '../render/escape.js';
import { CliError, ExitCode } from './exit.js';

interface ExportCommandOptions extends ConnectionOptions {
  output?: string;
  split?: boolean;
  force?: boolean;
  addresses: boolean;
  explicitDefaults?: boolean;
  schema?: string;
  prune: boolean;
}

/** The schema shipped with this installation of netform. */
const SHIPPED_SCHEMA = fileURLToPath(new URL('../../../schemas/netform.schema.json', import.meta.url));

export function registerExport(program: Command): void {
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
      'also write `role: unprivileged` and `use_default_<x>: true` (the same meaning: fields left out are managed at these defaults anyway)',
    )
    .option(
      '--schema <ref>',
      'what the `# yaml-language-server: $schema=` comment points at (default: the schema of this netform, relative to the output)',
    );
  addConnectionOptions(cmd);
  cmd.action(action(async (opts: ExportCommandOptions) => runExport(opts)));
}

async function runExport(opts: ExportCommandOptions): Promise<ExitCode> {
  // `-o -` is standard output, as without -o (never a folder named "-").
  if (opts.output === '-') delete opts.output;
  if (opts.split && !opts.output) throw new CliError('--split writes one file per user: give the folder with -o DIR');
  const outputDir = opts.output ? resolve(opts.output) : null;
  const schemaRef = opts.schema ?? schemaReference(outputDir ?? process.cwd());

  const connection = await openConnection(opts);
  let files: ExportedFile[];
  let counts: { users: number; devices: number; rules: number };
  let leftOut: string[];
  try {
    // The lists are grouped as each arrives, while the others are still on their way.
    const { client } = connection;
    const lists = {
      users: client.list('users'),
      devices: client.list('devices'),
      rules: client.list('rules'),
      configuration: fetchConfiguration(client, 'optional'),
    };
    ({ files, counts, leftOut } = await exportLiveState(lists, {
      split: opts.split ?? false,
      addresses: opts.addresses,
      explicitDefaults: opts.explicitDefaults ?? false,
      prune: opts.prune,
      schemaRef,
      server: connection.url,
    }));
  } catch (error) {
    if (error instanceof ExportError) throw new CliError(error.message);
    throw error;
  } finally {
    await connection.close();
  }

  const summary = describeCounts(counts);
  if (!outputDir) {
    process.stdout.write(files[0]!.content);
    process.stderr.write(`exported ${summary}\n`);
    warnLeftOut(leftOut);
    return ExitCode.ok;
  }

  await writeExport(outputDir, files, opts.force ?? false);
  const shown = opts.output!;
  process.stderr.write(`exported ${summary} to ${files.length} file(s) in ${shown}\n`);
  warnLeftOut(leftOut);
  const others = await otherYamlFiles(outputDir, files);
  if (others.length > 0) {
    process.stderr.write(
      `warning: ${shown} also holds ${others.join(', ')}, which \`netform plan -f ${shown}\` reads together with the export; remove what no longer applies\n`,
    );
  }
  process.stderr.write(
    `next: review the files, commit them, and check with \`netform plan -f ${shown}\` (no changes expected)\n`,
  );
  return ExitCode.ok;
}

/** One warning per object the export left out (by id, with why), and what to do about them. */
function warnLeftOut(leftOut: string[]): void {
  if (leftOut.length === 0) return;
  for (const line of leftOut) process.stderr.write(`warning: left out ${inertText(line)}\n`);
  process.stderr.write(
    `warning: no desired state can declare ${leftOut.length === 1 ? 'that object' : `those ${leftOut.length} objects`} as the server holds ${leftOut.length === 1 ? 'it' : 'them'}: fix or delete ${leftOut.length === 1 ? 'it' : 'them'} on the server (by id), then export again; until then \`netform plan\` shows ${leftOut.length === 1 ? 'it' : 'them'} (with prune on, as deletions)\n`,
  );
}

async function writeExport(dir: string, files: ExportedFile[], force: boolean): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new CliError(`-o: cannot create the folder ${dir} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!force) {
    const existing = files.map((f) => f.name).filter((name) => existsSync(join(dir, name)));
    if (existing.length > 0) {
      const shown = existing.slice(0, 5).join(', ') + (existing.length > 5 ? ` and ${existing.length - 5} more` : '');
      throw new CliError(
        `-o: ${shown} already exist(s) in ${dir}; nothing was written. Pass --force to overwrite, or choose an empty folder`,
      );
    }
  }
  for (const file of files) {
    const path = join(dir, file.name);
    try {
      // Without --force, `wx` also refuses a file that appeared since the check above.
      if (force) await writeFileAtomically(path, file.content);
      else await writeFile(path, file.content, { encoding: 'utf8', flag: 'wx' });
    } catch (error) {
      throw new CliError(`cannot write ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
}

async function otherYamlFiles(dir: string, written: ExportedFile[]): Promise<string[]> {
  const ours = new Set(written.map((f) => f.name));
  const entries = await readdir(dir);
  return entries.filter((name) => /\.ya?ml$/i.test(name) && !ours.has(name)).sort();
}

/** The shipped schema as a path relative to where the files go, with forward slashes for editors. */
function schemaReference(fromDir: string): string {
  const path = relative(fromDir, SHIPPED_SCHEMA);
  return path.split(sep).join('/');
}
