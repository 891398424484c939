/**
 * The desired state as another commit has it (`netform plan --base REF`): the same `-f` path,
 * relative to the repository's root, read from REF's tree with git, never checked out. YAML files
 * are loaded under the paths they have in the working tree, so diagnostics, sources and
 * `{ file: }` secret references read exactly as for the files on disk (secret files come from the
 * working tree: they are rarely committed). Symbolic links and submodules in REF's tree are not
 * followed. Needs `git` on the PATH.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { desiredStateLimit } from './containment.js';
import { CDKTF_STACK_FILE, displayPath } from './files.js';
import { STDIN_PATH } from './index.js';
import { readDocuments } from './pipeline.js';
import type { ParsedDocument } from './positions.js';
import type { Diagnostic, LoadOptions, LoadResult } from './types.js';
import { parseYamlInto } from './yaml.js';

const run = promisify(execFile);

/** A problem with the repository or the ref: the message says what to do. */
export class GitRefError extends Error {
  override readonly name = 'GitRefError';
}

const YAML_FILE = /\.ya?ml$/i;
/** Git file modes of a symbolic link and of a submodule: never read as desired state. */
const NOT_A_FILE = new Set(['120000', '160000']);

interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

/** What git answers besides blobs (a listing of the tree, a hash, a size): small. */
const GIT_ANSWER_MAX_BYTES = 64 * 1024 * 1024;

async function git(cwd: string, args: string[], maxBytes = GIT_ANSWER_MAX_BYTES): Promise<string> {
  try {
    const { stdout } = await run('git', ['-C', cwd, ...args], {
      encoding: 'utf8',
      maxBuffer: maxBytes,
      env: { ...process.env, LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0' },
    });
    return stdout;
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    if (failure.code === 'ENOENT') throw new GitRefError('git is not installed (or not on the PATH): --base needs it');
    throw Object.assign(new GitRefError((failure.stderr ?? '').trim() || failure.message), { cause: error });
  }
}

function parseTree(listing: string): TreeEntry[] {
  return listing
    .split('\0')
    .filter((line) => line !== '')
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode = '', type = '', oid = ''] = line.slice(0, tab).split(' ');
      return { mode, type, oid, path: line.slice(tab + 1) };
    });
}

/** What REF holds at the `-f` path. */
export type FoundAtRef =
  | { kind: 'yaml'; files: { path: string; text: string }[] }
  | { kind: 'cdktf'; text: string }
  /** Nothing to read there; `why` says so (`does not exist`, `holds no *.yaml file`). */
  | { kind: 'missing'; why: string };

export interface DesiredAtRef {
  ref: string;
  /** The commit REF names (full hash). */
  commit: string;
  /** The `-f` path inside the repository, as git names it (`.` for its root). */
  repoPath: string;
  found: FoundAtRef;
}

/** Reads the `-f` path as REF has it, without touching the working tree. */
export async function readDesiredAtRef(path: string, ref: string): Promise<DesiredAtRef> {
  if (path === STDIN_PATH) throw new GitRefError('--base reads the -f path at another commit: give -f a path, not -');
  const absolute = resolve(path);
  let isFolder: boolean;
  try {
    isFolder = (await stat(absolute)).isDirectory();
  } catch {
    throw new GitRefError(`${displayPath(path)}: no such file or folder`);
  }
  const folder = isFolder ? absolute : dirname(absolute);
  let root: string;
  try {
    root = (await git(folder, ['rev-parse', '--show-toplevel'])).trim();
  } catch (error) {
    if (error instanceof GitRefError && error.message.includes('not installed')) throw error;
    throw new GitRefError(
      `${displayPath(path)} is not inside a git repository: --base reads the same path at another commit of it`,
    );
  }
  const inside = relative(await realpath(root), await realpath(absolute));
  const repoPath = inside.split(sep).join('/');
  let commit: string;
  try {
    commit = (await git(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])).trim();
  } catch {
    commit = '';
  }
  if (!/^[0-9a-f]{40,64}$/.test(commit)) {
    throw new GitRefError(
      `--base ${ref}: no such commit in this repository (a shallow CI checkout may need it fetched first: git fetch origin ${ref})`,
    );
  }
  const tree = (spec: string[]) => git(root, ['ls-tree', '-z', '--full-tree', commit, '--', ...spec]).then(parseTree);
  // Blobs are read one at a time, each only once its size (`cat-file -s`) fits in what is left of
  // the bound on the desired state, as the working tree's files are.
  let used = 0;
  const blob = async (entry: TreeEntry): Promise<string> => {
    const size = Number((await git(root, ['cat-file', '-s', entry.oid])).trim());
    const limit = desiredStateLimit(used);
    if (!Number.isSafeInteger(size) || size > limit.bytes)
      throw new GitRefError(`${entry.path} at --base ${ref}: ${limit.tooLarge(size)}`);
    used += size;
    return git(root, ['cat-file', 'blob', entry.oid], size + 1);
  };
  const shown = repoPath === '' ? '.' : repoPath;
  const result = (found: FoundAtRef): DesiredAtRef => ({ ref, commit, repoPath: shown, found });

  let entries: TreeEntry[];
  if (repoPath === '') {
    entries = await git(root, ['ls-tree', '-z', '--full-tree', commit]).then(parseTree);
  } else {
    const [self] = await tree([repoPath]);
    if (!self || self.path !== repoPath) return result({ kind: 'missing', why: 'does not exist' });
    if (self.type === 'blob') {
      if (NOT_A_FILE.has(self.mode)) return result({ kind: 'missing', why: 'is a symbolic link, not a file' });
      const text = await blob(self);
      return result(
        basename(repoPath) === CDKTF_STACK_FILE ? { kind: 'cdktf', text } : { kind: 'yaml', files: [{ path, text }] },
      );
    }
    if (self.type !== 'tree') return result({ kind: 'missing', why: 'is not a file or folder' });
    entries = await tree([`${repoPath}/`]);
  }
  // The files a folder is read for, as the working-tree loader picks them (index.ts).
  const files = entries.filter((e) => e.type === 'blob' && !NOT_A_FILE.has(e.mode));
  const stack = files.find((e) => basename(e.path) === CDKTF_STACK_FILE);
  if (stack) return result({ kind: 'cdktf', text: await blob(stack) });
  const yaml = files
    .filter((e) => YAML_FILE.test(basename(e.path)) && !basename(e.path).startsWith('.'))
    .sort((a, b) => (basename(a.path) < basename(b.path) ? -1 : basename(a.path) > basename(b.path) ? 1 : 0));
  if (yaml.length === 0) return result({ kind: 'missing', why: 'holds no *.yaml or *.yml file' });
  const read: { path: string; text: string }[] = [];
  for (const e of yaml) read.push({ path: join(path, basename(e.path)), text: await blob(e) });
  return result({ kind: 'yaml', files: read });
}

/**
 * YAML files whose texts are given (REF's), loaded under the paths they have in the working tree:
 * the same reading pipeline as files on disk (index.ts), so diagnostics, sources and `{ file: }`
 * secret references read exactly as theirs do.
 */
async function loadYamlTexts(files: { path: string; text: string }[], options: LoadOptions): Promise<LoadResult> {
  const names = files.map((f) => displayPath(f.path));
  const diagnostics: Diagnostic[] = [];
  const documents: ParsedDocument[] = [];
  for (const [i, { text }] of files.entries()) {
    const file = names[i]!;
    await parseYamlInto(text, file, documents, diagnostics);
  }
  return readDocuments(documents, names, options.env ?? process.env, diagnostics);
}

/** REF's desired state at the `-f` path, loaded (or why there is none). */
export type BaseDesired = Omit<DesiredAtRef, 'found'> & ({ result: LoadResult } | { missing: string });

export async function loadDesiredStateAtRef(
  path: string,
  ref: string,
  options: LoadOptions = {},
): Promise<BaseDesired> {
  const { found, ...at } = await readDesiredAtRef(path, ref);
  if (found.kind === 'missing') return { ...at, missing: found.why };
  if (found.kind === 'yaml') return { ...at, result: await loadYamlTexts(found.files, options) };
  // A CDKTF stack is read by its own loader, from a file: a temporary copy of REF's.
  const folder = await mkdtemp(join(tmpdir(), 'netform-base-'));
  try {
    const file = join(folder, CDKTF_STACK_FILE);
    await writeFile(file, found.text);
    const { loadCdktfStack } = await import('./cdktf/load.js');
    return { ...at, result: await loadCdktfStack(file, options) };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
