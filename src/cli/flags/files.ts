/**
 * Files named by the operator (`--token-file`, `--tls-cert`, `--tls-key`, `--ca-file`, the
 * embedded server's token): regular files only, read non-blocking, each kind with its bound
 * (docs/limits.md). `/dev/zero` or a FIFO is refused before any read.
 */
import {
  FileReadError,
  PEM_FILE_MAX_BYTES,
  readBoundedFileSync,
  SECRET_FILE_MAX_BYTES,
  sizeLimit,
  type ReadLimit,
} from '../../model/files.js';
import { fileProblemText } from '../../views/model-files.js';
import { CliError } from '../exit.js';

export const TOKEN_FILE_LIMIT: ReadLimit = sizeLimit(SECRET_FILE_MAX_BYTES, 'token_file');
export const PEM_FILE_LIMIT: ReadLimit = sizeLimit(PEM_FILE_MAX_BYTES, 'pem_file');

/**
 * The bytes of the file `flag` names, or a CliError naming the flag and the path (`--tls-cert:
 * /dev/zero is not a regular file (it is a device)`, `--tls-key: cannot read k.pem (no such
 * file)`). `absent` answers a missing file instead.
 */
export function readFlagFile(flag: string, path: string, limit: ReadLimit, absent?: () => Buffer): Buffer {
  try {
    return readBoundedFileSync(path, limit);
  } catch (error) {
    if (!(error instanceof FileReadError)) throw error;
    if (absent && error.problem.code === 'missing') return absent();
    const problem = fileProblemText(error.problem);
    throw new CliError(error.rule ? `${flag}: ${path} ${problem}` : `${flag}: cannot read ${path} (${problem})`);
  }
}
