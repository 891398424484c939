/**
 * Files a desired state makes netform read (the desired-state files themselves, `{ file: PATH }`
 * secrets, a `cdk.tf.json`) are contained: their real path, symlinks resolved, must lie inside the
 * git work tree that holds them or, outside git, inside the folder that takes its place. Only
 * regular files are read (a FIFO, a folder, a socket or a device is refused without being opened
 * for a read that could block), up to a size bound. Every refusal names the rule broken, never
 * anything the file holds: a pull request must not be able to make netform read or print another
 * file of the machine that runs it.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
  existsSync,
  type Stats,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { displayPath } from './files.js';

/** A `{ file: PATH }` secret is a password or a key: small. */
export const SECRET_FILE_MAX_BYTES = 64 * 1024;
/** The desired-state files of one load (YAML files, or a cdk.tf.json), in total. */
export const DESIRED_STATE_MAX_BYTES = 256 * 1024 * 1024;

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

/** What a file that is not a regular file is, for messages; null for a regular file. */
function notRegular(stats: Stats): string | null {
  if (stats.isFile()) return null;
  if (stats.isDirectory()) return 'is not a regular file (it is a folder)';
  if (stats.isFIFO()) return 'is not a regular file (it is a FIFO)';
  if (stats.isSocket()) return 'is not a regular file (it is a socket)';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'is not a regular file (it is a device)';
  return 'is not a regular file';
}

function problemOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ELOOP') return 'too many levels of symlinks';
  return code ?? 'cannot be read';
}

export interface ReadLimit {
  bytes: number;
  /** The message when the file holds more (`size` bytes, or more), such as "is larger than 64 KiB, …". */
  tooLarge: (size: number) => string;
}

const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);
const CHUNK = 1024 * 1024;

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
    throw new ContainedFileError(problemOf(error), false);
  }
  checkOpened(stats, limit);
  return real;
}

/**
 * Checks, without opening it, that `path` lies inside `within`, is a regular file and is within the
 * limit: what readContainedFileSync checks first. Returns its size. Throws ContainedFileError.
 */
export function checkContainedFile(path: string, within: Containment | null, limit: ReadLimit): number {
  return statSync(checkedTarget(path, within, limit)).size;
}

function checkOpened(stats: Stats, limit: ReadLimit): void {
  const kind = notRegular(stats);
  if (kind) throw new ContainedFileError(kind, true);
  if (stats.size > limit.bytes) throw new ContainedFileError(limit.tooLarge(stats.size), true);
}

/**
 * Reads a contained regular file of at most `limit.bytes`. The file is opened non-blocking and
 * checked again on the opened descriptor, so a file swapped for a FIFO in between is refused too,
 * and a file that grows while read stops at the limit. Throws ContainedFileError.
 */
export function readContainedFileSync(path: string, within: Containment | null, limit: ReadLimit): Buffer {
  const target = checkedTarget(path, within, limit);
  let fd: number;
  try {
    fd = openSync(target, READ_FLAGS);
  } catch (error) {
    throw new ContainedFileError(problemOf(error), false);
  }
  try {
    checkOpened(fstatSync(fd), limit);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, limit.bytes + 1 - total));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      chunks.push(chunk.subarray(0, read));
      total += read;
      if (total > limit.bytes) throw new ContainedFileError(limit.tooLarge(total), true);
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof ContainedFileError) throw error;
    throw new ContainedFileError(problemOf(error), false);
  } finally {
    closeSync(fd);
  }
}

/** readContainedFileSync without blocking the event loop while a large file is read. */
export async function readContainedFile(path: string, within: Containment | null, limit: ReadLimit): Promise<Buffer> {
  const target = checkedTarget(path, within, limit);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(target, READ_FLAGS);
  } catch (error) {
    throw new ContainedFileError(problemOf(error), false);
  }
  try {
    const stats = await handle.stat();
    checkOpened(stats, limit);
    // One buffer of the size the file has (plus one byte to see it grow past the limit).
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const size = Math.min(Math.max(stats.size + 1 - total, CHUNK), limit.bytes + 1 - total);
      const chunk = Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit.bytes) throw new ContainedFileError(limit.tooLarge(total), true);
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof ContainedFileError) throw error;
    throw new ContainedFileError(problemOf(error), false);
  } finally {
    await handle.close();
  }
}

/** The bound on what one load reads, in total: what is left of DESIRED_STATE_MAX_BYTES. */
export function desiredStateLimit(used: number): ReadLimit {
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
