/**
 * Files a desired state makes netform read (the desired-state files themselves, `{ file: PATH }`
 * secrets, a `cdk.tf.json`) are contained: their real path, symlinks resolved, must lie inside the
 * git work tree that holds them or, outside git, inside the folder that takes its place. Only
 * regular files are read (a FIFO, a folder, a socket or a device is refused without being opened
 * for a read that could block), up to a size bound. Every refusal names the rule broken, never
 * anything the file holds: a pull request must not be able to make netform read or print another
 * file of the machine that runs it.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  DESIRED_STATE_MAX_BYTES,
  fileProblem,
  FileReadError,
  readBoundedFile,
  readBoundedFileSync,
  checkFileStats,
  type ReadLimit,
  type WordedLimit,
} from '../model/files.js';
import { fileProblemText } from '../views/model-files.js';
import { displayPath } from './files.js';

export { DESIRED_STATE_MAX_BYTES, SECRET_FILE_MAX_BYTES, type ReadLimit, type WordedLimit } from '../model/files.js';

/** Where reads must stay. */
export interface Containment {
  /** The folder, absolute, as named (symlinks not resolved). */
  readonly folder: string;
  /** Its real path. */
  readonly real: string;
  /** How messages name it: `the repository (.)`, or the folder and why it stands in for one. */
  readonly name: string;
}

/** Why a file was not read. `rule`: it breaks a containment, type or size rule (not merely absent). */
export class ContainedFileError extends Error {
  override readonly name = 'ContainedFileError';
  constructor(
    message: string,
    readonly rule: boolean,
  ) {
    super(message);
  }
}

const repositoryRoots = new Map<string, string | null>();

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The git work tree holding `folder` (the nearest ancestor with a `.git`, as the path is written),
 * or null outside git. A work tree inside another one (a submodule) is its own repository only when
 * it really lies inside the outer one: a symlink committed in one repository that points at another
 * checkout of the machine leaves the path in the first repository, and so outside it.
 */
export function repositoryRootOf(folder: string): string | null {
  const start = resolve(folder);
  const known = repositoryRoots.get(start);
  if (known !== undefined) return known;
  let root: string | null = null;
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) {
      const outer = dirname(dir) === dir ? null : repositoryRootOf(dirname(dir));
      root = outer === null || isInside(realLocation(outer), realLocation(dir)) ? dir : outer;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  repositoryRoots.set(start, root);
  return root;
}

/**
 * The real path of `path`: symlinks resolved as far as the path exists, the part that does not
 * exist (yet) appended as written, so that a missing file behind a symlinked folder, or a dangling
 * symlink, is still placed where reading it would go.
 */
export function realLocation(path: string, depth = 0): string {
  const missing: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    try {
      return join(realpathSync.native(at), ...missing);
    } catch {
      // `at` does not resolve: a dangling symlink is followed by hand, anything else is absent.
    }
    try {
      if (depth < 40 && lstatSync(at).isSymbolicLink())
        return realLocation(join(resolve(dirname(at), readlinkSync(at)), ...missing), depth + 1);
    } catch {
      // not there at all
    }
    if (dirname(at) === at) return resolve(path);
    missing.unshift(basename(at));
  }
}

/**
 * The containment of files found from `folder`: the git work tree holding it, or, outside git,
 * `folder` itself, which `outsideGit` describes for messages (such as "the folder named with -f").
 */
export function containmentOf(folder: string, outsideGit: string): Containment {
  const root = repositoryRootOf(folder);
  const chosen = root ?? resolve(folder);
  const shown = displayPath(chosen);
  return {
    folder: chosen,
    real: realLocation(chosen),
    name: root !== null ? `the repository (${shown})` : `${outsideGit} (${shown}; not in a git repository)`,
  };
}

/**
 * The containment of the desired state at `path`: the git work tree holding it or, outside git,
 * the folder named (for a file, its folder).
 */
export function desiredStateContainment(path: string, isFolder: boolean): Containment {
  return containmentOf(isFolder ? path : dirname(path), 'the folder named with -f');
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Why `path` is not inside `within`, or null. A path written outside it (`../x`, `/etc/x`) and one
 * that leads outside through a symlink (the file itself, or a folder on its way) are both refused.
 * Reads nothing.
 */
export function escapeFrom(path: string, within: Containment): string | null {
  const lexical = resolve(path);
  if (!isInside(within.folder, lexical)) return `is outside ${within.name}`;
  const real = realLocation(lexical);
  if (isInside(within.real, real)) return null;
  if (!isSymlink(lexical)) return `is in a symlinked folder that leads outside ${within.name}`;
  let noun = 'file';
  try {
    if (statSync(real).isDirectory()) noun = 'folder';
  } catch {
    // a dangling symlink: still a symlink to outside
  }
  return `is a symlink to a ${noun} outside ${within.name}`;
}

/**
 * The path to open, once `path` passed containment (when `within` is given) and is, by its
 * metadata, a regular file within the limit. Throws ContainedFileError.
 */
function checkedTarget(path: string, within: Containment | null, limit: ReadLimit): string {
  if (within) {
    const escape = escapeFrom(path, within);
    if (escape) throw new ContainedFileError(escape, true);
  }
  const real = realLocation(path);
  let stats: Stats;
  try {
    stats = statSync(real);
  } catch (error) {
    throw new ContainedFileError(fileProblemText(fileProblem(error)), false);
  }
  try {
    checkFileStats(stats, limit);
  } catch (error) {
    throw contained(error);
  }
  return real;
}

/**
 * Checks, without opening it, that `path` lies inside `within`, is a regular file and is within the
 * limit: what readContainedFileSync checks first. Returns its size. Throws ContainedFileError.
 */
export function checkContainedFile(path: string, within: Containment | null, limit: ReadLimit): number {
  return statSync(checkedTarget(path, within, limit)).size;
}

function contained(error: unknown): unknown {
  return error instanceof FileReadError ? new ContainedFileError(fileProblemText(error.problem), error.rule) : error;
}

/**
 * Reads a contained regular file of at most `limit.bytes` (readBoundedFileSync on its real path,
 * which must not turn into a symlink meanwhile). Throws ContainedFileError.
 */
export function readContainedFileSync(path: string, within: Containment | null, limit: ReadLimit): Buffer {
  const target = checkedTarget(path, within, limit);
  try {
    return readBoundedFileSync(target, limit, { noFollow: true });
  } catch (error) {
    throw contained(error);
  }
}

/** readContainedFileSync without blocking the event loop while a large file is read. */
export async function readContainedFile(path: string, within: Containment | null, limit: ReadLimit): Promise<Buffer> {
  const target = checkedTarget(path, within, limit);
  try {
    return await readBoundedFile(target, limit, { noFollow: true });
  } catch (error) {
    throw contained(error);
  }
}

/** The bound on what one load reads, in total: what is left of DESIRED_STATE_MAX_BYTES. */
export function desiredStateLimit(used: number): WordedLimit {
  const mib = DESIRED_STATE_MAX_BYTES / (1024 * 1024);
  return {
    bytes: DESIRED_STATE_MAX_BYTES - used,
    tooLarge: (size) =>
      size > DESIRED_STATE_MAX_BYTES
        ? `is larger than ${mib} MiB, the limit for the desired state`
        : `takes the desired state past ${mib} MiB in total, the limit for the desired state; it is not read`,
  };
}

/** Reads one desired-state file within its containment and the size left; the problem as a message otherwise. */
export async function readDesiredStateFile(
  path: string,
  within: Containment | null,
  used: number,
): Promise<{ bytes: Buffer } | { problem: string }> {
  try {
    return { bytes: await readContainedFile(path, within, desiredStateLimit(used)) };
  } catch (error) {
    if (!(error instanceof ContainedFileError)) throw error;
    if (!error.rule) return { problem: `cannot be read: ${error.message}` };
    return { problem: error.message.includes(' outside ') ? `${error.message}; it is not read` : error.message };
  }
}
