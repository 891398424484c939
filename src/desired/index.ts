/**
 * The desired state: loaded from YAML files (one file, or a folder of *.yaml/*.yml files merged)
 * or from a synthesized CDKTF stack, then checked with the server's own rules. Every problem of
 * one run is reported together, each at the file, line and column of the value at fault.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { DesiredState } from '../model/state.js';
import {
  ContainedFileError,
  desiredStateContainment,
  desiredStateLimit,
  escapeFrom,
  readDesiredStateFile,
  type Containment,
  type WordedLimit,
} from './containment.js';
import { CDKTF_STACK_FILE, displayPath } from './files.js';
import { readDocuments } from './pipeline.js';
import type { ParsedDocument } from './positions.js';
import type { Diagnostic, LoadOptions, LoadResult } from './types.js';
import { parseYamlInto } from './yaml.js';

export { checkDesiredState } from './check/state.js';
export { displayPath } from './files.js';
export { resolveSecret } from './secrets.js';
export type { Diagnostic, LoadOptions, LoadResult } from './types.js';

/** `-f -`: one YAML document stream read from standard input, shown under this name. */
export const STDIN_PATH = '-';
const STDIN_NAME = 'stdin';

/** At most `limit.bytes` of standard input. */
async function readStdin(
  limit: WordedLimit,
  stdin: NonNullable<LoadOptions['stdin']> = process.stdin,
): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stdin) {
    total += (chunk as Buffer).length;
    if (total > limit.bytes) {
      stdin.destroy();
      throw new ContainedFileError(limit.tooLarge(total), true);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const YAML_FILE = /\.ya?ml$/i;

/** What a desired-state path names: its files and the containment they must lie in. */
export type Target = { files: string[]; within: Containment } | { cdktf: true } | { diagnostic: Diagnostic };

/** The diagnostic's message for a -f path that does not exist (what `plan --base-file` tells apart). */
export const NO_SUCH_PATH = 'no such file or folder';

async function yamlFilesOf(path: string): Promise<Target> {
  let isFolder: boolean;
  try {
    isFolder = (await stat(path)).isDirectory();
  } catch {
    return { diagnostic: { file: displayPath(path), message: NO_SUCH_PATH } };
  }
  if (!isFolder) {
    if (basename(path) === CDKTF_STACK_FILE) return { cdktf: true };
    return { files: [path], within: desiredStateContainment(path, false) };
  }
  const within = desiredStateContainment(path, true);
  // A folder reached through a symlink that leads outside is not even listed.
  const escape = escapeFrom(path, within);
  if (escape) return { diagnostic: { file: displayPath(path), message: `${escape}; it is not read` } };
  const entries = await readdir(path, { withFileTypes: true });
  if (entries.some((e) => e.name === CDKTF_STACK_FILE)) return { cdktf: true };
  // Dot files are editor and tool leftovers; subfolders hold other things (secrets, other teams).
  const names = entries
    .filter((e) => !e.isDirectory() && YAML_FILE.test(e.name) && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  if (names.length === 0) {
    return {
      diagnostic: {
        file: displayPath(path),
        message: 'no *.yaml or *.yml file in this folder (subfolders are not read)',
      },
    };
  }
  return { files: names.map((name) => join(path, name)), within };
}

async function loadYamlFiles(paths: string[], within: Containment | null, options: LoadOptions): Promise<LoadResult> {
  const files = paths.map((p) => (p === STDIN_PATH ? STDIN_NAME : displayPath(p)));
  const diagnostics: Diagnostic[] = [];
  const documents: ParsedDocument[] = [];
  let used = 0;
  for (const [i, path] of paths.entries()) {
    const file = files[i]!;
    let text: string;
    if (path === STDIN_PATH) {
      try {
        text = await readStdin(desiredStateLimit(used), options.stdin);
      } catch (error) {
        if (!(error instanceof ContainedFileError)) throw error;
        diagnostics.push({ file, message: error.message });
        continue;
      }
    } else {
      const read = await readDesiredStateFile(path, within, used);
      if ('problem' in read) {
        diagnostics.push({ file, message: read.problem });
        continue;
      }
      used += read.bytes.length;
      text = read.bytes.toString('utf8');
    }
    await parseYamlInto(text, file, documents, diagnostics);
  }
  return readDocuments(documents, files, options.env ?? process.env, diagnostics, { unparsed: true });
}

/**
 * The YAML files a load of `path` reads and the containment they lie in (the same discovery as
 * loadDesiredState), `cdktf` for a synthesized stack, or why the path names neither.
 */
export async function desiredStateFilesOf(path: string): Promise<Target> {
  return yamlFilesOf(path);
}

/**
 * Loads the desired state at `path`: a `cdk.tf.json` file or a folder holding one goes to the
 * CDKTF loader; anything else is YAML (a file, or a folder of *.yaml/*.yml files).
 */
export async function loadDesiredState(path: string, options: LoadOptions = {}): Promise<LoadResult> {
  if (path === STDIN_PATH) return loadYamlFiles([STDIN_PATH], null, options);
  const target = await yamlFilesOf(path);
  if ('diagnostic' in target) return { ok: false, diagnostics: [target.diagnostic] };
  // The CDKTF translator (and the provider schema it reads) is loaded only for a stack.
  if ('cdktf' in target) return (await import('./cdktf/load.js')).loadCdktfStack(path, options);
  return loadYamlFiles(target.files, target.within, options);
}

/**
 * What a load of `path` reads, as one digest: the YAML files it would read (names and contents),
 * or null when the path is not a set of YAML files (stdin, a CDKTF stack, a missing path), which
 * is then never reused. The same discovery as loadDesiredState, so the two cannot disagree.
 */
export async function yamlInputsDigest(path: string): Promise<string | null> {
  if (path === STDIN_PATH) return null;
  const target = await yamlFilesOf(path);
  if (!('files' in target)) return null;
  const hash = createHash('sha256');
  let used = 0;
  for (const file of target.files) {
    const read = await readDesiredStateFile(file, target.within, used);
    if ('problem' in read) return null;
    used += read.bytes.length;
    hash.update(`${file}\0${read.bytes.length}\0`).update(read.bytes);
  }
  return hash.digest('hex');
}

/** Counts for a one-line summary. */
export function countDeclarations(state: DesiredState): { users: number; devices: number; rules: number } {
  const devices = state.users.reduce((n, u) => n + u.devices.length, 0);
  const rules = state.users.reduce((n, u) => n + u.rules.length, state.rules.length);
  return { users: state.users.length, devices, rules };
}
