/**
 * The two ways netform touches files it is told to, shared by every folder and the server.
 *
 * Reading: only a regular file, opened non-blocking and checked on the opened descriptor (a FIFO,
 * a device such as `/dev/zero`, a folder or a socket is refused without a read that could block or
 * never end), up to a size bound per kind of file. Every bound is listed in docs/limits.md.
 *
 * Writing: a whole file or nothing, never through a symbolic link already at the path: a
 * temporary file beside it, flushed to disk, renamed over the path (which replaces a link, never
 * its target).
 */
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

/** A token file (`--token-file`, the embedded server's `<database>.token`), a `{ file: }` secret, an approvals file. */
export const SECRET_FILE_MAX_BYTES = 64 * 1024;
/** A PEM file: `--tls-cert`, `--tls-key`, `--ca-file`. */
export const PEM_FILE_MAX_BYTES = 1024 * 1024;
/** The desired-state files of one load (YAML files, or a cdk.tf.json), in total; also one saved plan. */
export const DESIRED_STATE_MAX_BYTES = 256 * 1024 * 1024;

/** The kinds of file read with a size bound of their own, by which the message names the bound. */
export type LimitedFile = 'token_file' | 'pem_file' | 'approvals_file' | 'saved_plan' | 'github_event';

/** A bound whose message its caller words (the desired state's, a secret file's: src/desired). */
export interface WordedLimit {
  bytes: number;
  /** The message when the file holds more (`size` bytes, or more), such as "is larger than 64 KiB, …". */
  tooLarge: (size: number) => string;
}

/** A size bound: for a kind of file (sizeLimit), or worded by its caller. */
export type ReadLimit = { bytes: number; what: LimitedFile } | WordedLimit;

/** The bound on `what`: "is larger than 64 KiB, the limit for a token file" (src/views/model-files.ts). */
export function sizeLimit(bytes: number, what: LimitedFile): ReadLimit {
  return { bytes, what };
}

/**
 * Why a file was not read, as a code and its values (src/views/model-files.ts words it as the end
 * of a sentence naming the file): not a regular file, absent, refused by the system (`errno`, as
 * Node names it), over its bound, or a read stopped before its end.
 */
export type FileProblem =
  | { code: 'not_regular'; kind: 'folder' | 'fifo' | 'socket' | 'device' | null }
  | { code: 'missing' }
  | { code: 'permission_denied' }
  | { code: 'symlink_loop' }
  | { code: 'system'; errno: string | null }
  | { code: 'too_large'; bytes: number; what: LimitedFile }
  /** Over a bound its caller words (WordedLimit), with those words. */
  | { code: 'over_bound'; words: string }
  | { code: 'stopped' };

/** Why a file was not read: `problem`. `rule`: a type or size rule (not merely absent). Its message is the code. */
export class FileReadError extends Error {
  override readonly name = 'FileReadError';
  constructor(
    readonly problem: FileProblem,
    readonly rule: boolean,
  ) {
    super(problem.code);
  }
}

/** What a file that is not a regular file is; null for a regular file. */
export function notRegular(stats: Stats): FileProblem | null {
  if (stats.isFile()) return null;
  if (stats.isDirectory()) return { code: 'not_regular', kind: 'folder' };
  if (stats.isFIFO()) return { code: 'not_regular', kind: 'fifo' };
  if (stats.isSocket()) return { code: 'not_regular', kind: 'socket' };
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return { code: 'not_regular', kind: 'device' };
  return { code: 'not_regular', kind: null };
}

/** Why opening or reading failed (never the file's content). */
export function fileProblem(error: unknown): FileProblem {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return { code: 'missing' };
  if (code === 'EACCES' || code === 'EPERM') return { code: 'permission_denied' };
  if (code === 'ELOOP') return { code: 'symlink_loop' };
  return { code: 'system', errno: code ?? null };
}

/** The problem of a file of `size` bytes (or more) over `limit`. */
export function tooLarge(limit: ReadLimit, size: number): FileProblem {
  return 'what' in limit
    ? { code: 'too_large', bytes: limit.bytes, what: limit.what }
    : { code: 'over_bound', words: limit.tooLarge(size) };
}

/** Refuses a file that is not regular or is over the limit, by its metadata. */
export function checkFileStats(stats: Stats, limit: ReadLimit): void {
  const kind = notRegular(stats);
  if (kind) throw new FileReadError(kind, true);
  if (stats.size > limit.bytes) throw new FileReadError(tooLarge(limit, stats.size), true);
}

const CHUNK = 1024 * 1024;

export interface ReadOptions {
  /** Refuse a symbolic link at the path itself (the caller resolved it already). */
  noFollow?: boolean;
}

function flags(options: ReadOptions): number {
  return constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (options.noFollow ? (constants.O_NOFOLLOW ?? 0) : 0);
}

/**
 * Reads a regular file of at most `limit.bytes`. Its metadata is checked before it is opened (a
 * device is never opened), and again on the opened descriptor, so a file swapped for a FIFO in
 * between is refused too; a file that grows while read stops at the limit. Throws FileReadError.
 */
export function readBoundedFileSync(path: string, limit: ReadLimit, options: ReadOptions = {}): Buffer {
  let fd: number;
  try {
    checkFileStats(options.noFollow ? lstatSync(path) : statSync(path), limit);
    fd = openSync(path, flags(options));
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    throw new FileReadError(fileProblem(error), false);
  }
  try {
    checkFileStats(fstatSync(fd), limit);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, limit.bytes + 1 - total));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      chunks.push(chunk.subarray(0, read));
      total += read;
      if (total > limit.bytes) throw new FileReadError(tooLarge(limit, total), true);
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    throw new FileReadError(fileProblem(error), false);
  } finally {
    closeSync(fd);
  }
}

/**
 * readBoundedFileSync without blocking the event loop while a large file is read: a signal's
 * handler runs between chunks, and an aborted `signal` stops the read.
 */
export async function readBoundedFile(
  path: string,
  limit: ReadLimit,
  options: ReadOptions & { signal?: AbortSignal } = {},
): Promise<Buffer> {
  const { open, lstat, stat } = await import('node:fs/promises');
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    checkFileStats(await (options.noFollow ? lstat(path) : stat(path)), limit);
    handle = await open(path, flags(options));
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    throw new FileReadError(fileProblem(error), false);
  }
  try {
    const stats = await handle.stat();
    checkFileStats(stats, limit);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      if (options.signal?.aborted) throw new FileReadError({ code: 'stopped' }, false);
      const size = Math.min(Math.max(stats.size + 1 - total, CHUNK), limit.bytes + 1 - total);
      const chunk = Buffer.allocUnsafe(size);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit.bytes) throw new FileReadError(tooLarge(limit, total), true);
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    throw new FileReadError(fileProblem(error), false);
  } finally {
    await handle.close();
  }
}

export interface WriteOptions {
  /** The new file's permissions (default: 0666 less the umask). */
  mode?: number;
}

/**
 * Writes `content` to `path` whole or not at all, never through a link already there: a temporary
 * file in the same folder, flushed (fsync), renamed over `path`. A symbolic link at `path` is
 * replaced by the new file and its target left as it was. A path that is, or leads to, a device or
 * a FIFO (`/dev/null`, `/dev/stdout`) is written as it is: renaming over it would replace the
 * device or pipe with a file (as root, `/dev/null` itself), and no file is overwritten there.
 * Throws the system error (its `code` says why).
 */
export function writeFileAtomically(path: string, content: string | Uint8Array, options: WriteOptions = {}): void {
  let target: Stats | null = null;
  try {
    target = statSync(path);
  } catch {
    // absent, or a dangling link: replaced below
  }
  if (target && !target.isFile() && !target.isDirectory()) {
    writeFileSync(path, content);
    return;
  }
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(temporary, 'wx', options.mode ?? 0o666);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temporary);
    } catch {
      // never created, or renamed already
    }
    throw error;
  }
}
