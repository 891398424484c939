/** `--tls-cert` / `--tls-key` of `netform serve`: read before the server starts, with a warning for a key others can read. */
import { statSync } from 'node:fs';
import { CliError } from '../exit.js';
import type { CliIo } from '../io.js';
import { PEM_FILE_LIMIT, readFlagFile } from './files.js';

export function tlsOptions(
  options: { tlsCert?: string; tlsKey?: string },
  io: Pick<CliIo, 'err'>,
): { cert: Buffer; key: Buffer } | undefined {
  if (options.tlsCert === undefined && options.tlsKey === undefined) return undefined;
  if (options.tlsCert === undefined || options.tlsKey === undefined) {
    throw new CliError(
      '--tls-cert and --tls-key (NETFORM_TLS_CERT, NETFORM_TLS_KEY) go together: give both or neither',
    );
  }
  const tls = { cert: readPem(options.tlsCert, '--tls-cert'), key: readPem(options.tlsKey, '--tls-key') };
  warnIfReadableByOthers(options.tlsKey, io);
  return tls;
}

/** A private key any user of the machine can read is as good as published there: say so at start. */
function warnIfReadableByOthers(path: string, io: Pick<CliIo, 'err'>): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return; // read a moment ago; nothing more to say
  }
  if ((mode & 0o004) === 0) return;
  io.err.write(
    `warning: the TLS key ${path} is readable by every user of this machine (mode ${mode.toString(8).padStart(4, '0')}); ` +
      'make it readable by the server only (chmod 600, or 640 with a group of its own)\n',
  );
}

function readPem(path: string, flag: string): Buffer {
  return readFlagFile(flag, path, PEM_FILE_LIMIT);
}
