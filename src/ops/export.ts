/**
 * Export as an operation: the live server as desired-state YAML, to start managing an existing
 * server, returned as files or written into a folder. Secrets are written as references, never
 * values.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchConfiguration } from '../client/index.js';
import { exportLiveState } from '../desired/export/index.js';
import { ExportError, type ExportedFile, type ExportOptions, type ExportResult } from '../desired/export/types.js';
import { writeFileAtomically } from '../model/files.js';
import { OpError } from './errors.js';
import { serverRefused, type Connector } from './session.js';

/**
 * The schema shipped with this installation of netform: three folders up from the built file
 * (dist/src/ops), two from the sources (tests run them in-process).
 */
const [BUILT_SCHEMA, SOURCE_SCHEMA] = ['../../../schemas/', '../../schemas/'].map((dir) =>
  fileURLToPath(new URL(dir + 'netform.schema.json', import.meta.url)),
) as [string, string];
const SHIPPED_SCHEMA = existsSync(BUILT_SCHEMA) || !existsSync(SOURCE_SCHEMA) ? BUILT_SCHEMA : SOURCE_SCHEMA;

/** The shipped schema as a path relative to `fromDir`, with forward slashes for editors. */
export function shippedSchemaReference(fromDir: string): string {
  return relative(fromDir, SHIPPED_SCHEMA).split(sep).join('/');
}

export interface ExportRequest extends Omit<ExportOptions, 'server'> {
  connect: Connector;
}

/** The server's users, devices, rules and configuration as desired-state files. */
export async function exportServer(request: ExportRequest): Promise<ExportResult> {
  const { connect, ...options } = request;
  const session = await connect.open();
  try {
    // The lists are grouped as each arrives, while the others are still on their way.
    const { client, ownUserId } = session;
    // netform's own embedded admin is in no scope: not exported either.
    const notOwn = <T extends { id: string; user_id?: string | null }>(items: T[]) =>
      ownUserId === undefined ? items : items.filter((item) => item.id !== ownUserId && item.user_id !== ownUserId);
    const lists = {
      users: client.list('users').then(notOwn),
      devices: client.list('devices').then(notOwn),
      rules: client.list('rules').then(notOwn),
      configuration: fetchConfiguration(client, 'optional'),
    };
    return await exportLiveState(lists, {
      ...options,
      server: session.url,
      ...(session.tunnel ? { tunnel: session.tunnel } : {}),
    });
  } catch (error) {
    throw serverRefused(exportFailed(error));
  } finally {
    await session.close();
  }
}

/** A live state that cannot be written without guessing, as an expected failure. */
export function exportFailed(error: unknown): unknown {
  return error instanceof ExportError ? new OpError('export', error.message) : error;
}

/**
 * Writes the files into `dir` (created when missing). Without `force`, refuses (nothing written)
 * when one of them exists. Returns the other YAML files already in `dir`, which a plan of the
 * folder reads together with the export.
 */
export async function writeExportFiles(dir: string, files: ExportedFile[], force: boolean): Promise<string[]> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new OpError('export', { code: 'export_folder_not_created', dir, error: codeOf(error) });
  }
  if (!force) {
    const existing = files.map((f) => f.name).filter((name) => existsSync(join(dir, name)));
    if (existing.length > 0) throw new OpError('export', { code: 'export_files_exist', names: existing, dir });
  }
  for (const file of files) {
    const path = join(dir, file.name);
    try {
      // Without force, `wx` also refuses a file that appeared since the check above.
      if (force) writeFileAtomically(path, file.content);
      else await writeFile(path, file.content, { encoding: 'utf8', flag: 'wx' });
    } catch (error) {
      throw new OpError('export', `cannot write ${path} (${codeOf(error)})`);
    }
  }
  const ours = new Set(files.map((f) => f.name));
  return (await readdir(dir)).filter((name) => /\.ya?ml$/i.test(name) && !ours.has(name)).sort();
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'error';
}
