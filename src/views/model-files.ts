/**
 * Why a file was not read, in words (the codes are src/model/files.ts's): the end of a sentence
 * that names the file (`--tls-key: k.pem is not a regular file (it is a folder)`, `cannot read
 * k.pem (no such file)`).
 */
import type { FileProblem, LimitedFile } from '../model/files.js';

const LIMITED: Record<LimitedFile, string> = {
  token_file: 'a token file',
  pem_file: 'a PEM file',
  approvals_file: 'an approvals file',
  saved_plan: 'a saved plan',
  github_event: 'a GitHub event',
};

const KIND = { folder: 'a folder', fifo: 'a FIFO', socket: 'a socket', device: 'a device' } as const;

/** `64 KiB`, `256 MiB`. */
function size(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

export function fileProblemText(problem: FileProblem): string {
  switch (problem.code) {
    case 'not_regular':
      return problem.kind === null ? 'is not a regular file' : `is not a regular file (it is ${KIND[problem.kind]})`;
    case 'missing':
      return 'no such file';
    case 'permission_denied':
      return 'permission denied';
    case 'symlink_loop':
      return 'too many levels of symlinks';
    case 'system':
      return problem.errno ?? 'cannot be read';
    case 'too_large':
      return `is larger than ${size(problem.bytes)}, the limit for ${LIMITED[problem.what]}`;
    case 'over_bound':
      return problem.words;
    case 'stopped':
      return 'was not read to the end (stopped)';
  }
}
