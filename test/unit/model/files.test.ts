/**
 * The bounded read and the atomic write every file netform names goes through (security review
 * 2026-11b, G5 and G7): operator files are regular files within a bound, and a write replaces a
 * link already at the path instead of writing through it.
 */
import { execFileSync } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FileReadError,
  readBoundedFile,
  readBoundedFileSync,
  sizeLimit,
  writeFileAtomically,
} from '../../../src/model/files.js';
import { fileProblemText } from '../../../src/views/model-files.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-files-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIMIT = sizeLimit(64 * 1024, 'token_file');

function refusal(read: () => unknown): FileReadError {
  try {
    read();
  } catch (error) {
    if (error instanceof FileReadError) return error;
    throw error;
  }
  throw new Error('read, not refused');
}

/** The refusal as the messages word it (src/views/model-files.ts), and whether a rule refused it. */
function said(read: () => unknown): { text: string; rule: boolean } {
  const error = refusal(read);
  return { text: fileProblemText(error.problem), rule: error.rule };
}

async function saidAsync(read: () => Promise<unknown>): Promise<string> {
  try {
    await read();
  } catch (error) {
    if (error instanceof FileReadError) return fileProblemText(error.problem);
    throw error;
  }
  throw new Error('read, not refused');
}

describe('readBoundedFileSync', () => {
  it('reads a regular file within the bound, through a symlink too', () => {
    writeFileSync(join(dir, 'token'), 'abc\n');
    symlinkSync(join(dir, 'token'), join(dir, 'token-link'));
    expect(readBoundedFileSync(join(dir, 'token'), LIMIT).toString()).toBe('abc\n');
    expect(readBoundedFileSync(join(dir, 'token-link'), LIMIT).toString()).toBe('abc\n');
  });

  it('refuses /dev/zero, a FIFO and a folder without reading (a FIFO with no writer would block)', () => {
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    mkdirSync(join(dir, 'folder'));
    const started = Date.now();
    expect(refusal(() => readBoundedFileSync('/dev/zero', LIMIT)).problem).toEqual({
      code: 'not_regular',
      kind: 'device',
    });
    expect(said(() => readBoundedFileSync('/dev/zero', LIMIT))).toEqual({
      text: 'is not a regular file (it is a device)',
      rule: true,
    });
    expect(said(() => readBoundedFileSync(join(dir, 'fifo'), LIMIT)).text).toBe('is not a regular file (it is a FIFO)');
    expect(said(() => readBoundedFileSync(join(dir, 'folder'), LIMIT)).text).toBe(
      'is not a regular file (it is a folder)',
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a file over the bound by its size, naming the bound', () => {
    writeFileSync(join(dir, 'big'), Buffer.alloc(64 * 1024 + 1));
    writeFileSync(join(dir, 'exact'), Buffer.alloc(64 * 1024));
    expect(said(() => readBoundedFileSync(join(dir, 'big'), LIMIT))).toEqual({
      text: 'is larger than 64 KiB, the limit for a token file',
      rule: true,
    });
    expect(readBoundedFileSync(join(dir, 'exact'), LIMIT)).toHaveLength(64 * 1024);
    expect(fileProblemText({ code: 'too_large', bytes: 1024 * 1024, what: 'pem_file' })).toBe(
      'is larger than 1 MiB, the limit for a PEM file',
    );
    expect(fileProblemText({ code: 'too_large', bytes: 64 * 1024, what: 'approvals_file' })).toBe(
      'is larger than 64 KiB, the limit for an approvals file',
    );
    expect(fileProblemText({ code: 'too_large', bytes: 256 * 1024 * 1024, what: 'saved_plan' })).toBe(
      'is larger than 256 MiB, the limit for a saved plan',
    );
  });

  it('says a missing file is missing (not a rule broken)', () => {
    expect(said(() => readBoundedFileSync(join(dir, 'absent'), LIMIT))).toEqual({ text: 'no such file', rule: false });
  });

  it('with noFollow, refuses a symlink at the path', () => {
    expect(refusal(() => readBoundedFileSync(join(dir, 'token-link'), LIMIT, { noFollow: true })).rule).toBe(true);
  });
});

describe('readBoundedFile', () => {
  it('reads the same, refuses the same, and stops when its signal is aborted', async () => {
    expect((await readBoundedFile(join(dir, 'token'), LIMIT)).toString()).toBe('abc\n');
    expect(await saidAsync(() => readBoundedFile('/dev/zero', LIMIT))).toBe('is not a regular file (it is a device)');
    const controller = new AbortController();
    controller.abort();
    expect(await saidAsync(() => readBoundedFile(join(dir, 'token'), LIMIT, { signal: controller.signal }))).toBe(
      'was not read to the end (stopped)',
    );
  });
});

describe('writeFileAtomically', () => {
  it('replaces a symlink at the path with the new file, leaving its target as it was', () => {
    const victim = join(dir, 'victim.sh');
    writeFileSync(victim, 'echo original\n');
    const out = join(dir, 'plan.json');
    symlinkSync(victim, out);
    writeFileAtomically(out, '{"plan":1}\n');
    expect(lstatSync(out).isSymbolicLink()).toBe(false);
    expect(readFileSync(out, 'utf8')).toBe('{"plan":1}\n');
    expect(readFileSync(victim, 'utf8')).toBe('echo original\n');
  });

  it('replaces a dangling symlink, and leaves no temporary file', () => {
    const sub = join(dir, 'dangling');
    mkdirSync(sub);
    symlinkSync(join(dir, 'nowhere', 'x'), join(sub, 'out.json'));
    writeFileAtomically(join(sub, 'out.json'), 'x');
    expect(readFileSync(join(sub, 'out.json'), 'utf8')).toBe('x');
    expect(readdirSync(sub)).toEqual(['out.json']);
  });

  it('writes a device as it is (never renamed over), and a new file with the mode asked', () => {
    writeFileAtomically('/dev/null', 'discarded');
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
    const token = join(dir, 'embedded.db.token');
    writeFileAtomically(token, 'secret\n', { mode: 0o600 });
    expect(statSync(token).mode & 0o777).toBe(0o600);
  });

  it('fails with the system error when the folder is missing, creating nothing', () => {
    expect(() => writeFileAtomically(join(dir, 'missing', 'x.json'), 'x')).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });
});

describe('why a file was not read, in words', () => {
  it('words the system refusals as before', () => {
    expect(fileProblemText({ code: 'permission_denied' })).toBe('permission denied');
    expect(fileProblemText({ code: 'symlink_loop' })).toBe('too many levels of symlinks');
    expect(fileProblemText({ code: 'system', errno: 'EIO' })).toBe('EIO');
    expect(fileProblemText({ code: 'system', errno: null })).toBe('cannot be read');
    expect(fileProblemText({ code: 'not_regular', kind: null })).toBe('is not a regular file');
    expect(fileProblemText({ code: 'not_regular', kind: 'socket' })).toBe('is not a regular file (it is a socket)');
  });
});
