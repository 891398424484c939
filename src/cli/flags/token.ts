/** The API token of the connection flags (`--token`, NETFORM_TOKEN, `--token-file`), read once per run. */
import { CliError } from '../exit.js';
import type { Secrets } from '../io.js';
import { readFlagFile, TOKEN_FILE_LIMIT } from './files.js';

export interface TokenOptions {
  token?: string;
  tokenFile?: string;
}

/** The token, or why there is none; a token read is added to the run's secrets. */
export function readToken(opts: TokenOptions, secrets: Secrets): string {
  if (opts.token && opts.tokenFile) throw new CliError('--token and --token-file exclude each other: choose one');
  if (opts.tokenFile) {
    const token = readFlagFile('--token-file', opts.tokenFile, TOKEN_FILE_LIMIT).toString('utf8').trim();
    if (token === '') throw new CliError(`--token-file: ${opts.tokenFile} is empty`);
    secrets.add(token);
    return token;
  }
  if (opts.token?.trim()) {
    secrets.add(opts.token.trim());
    return opts.token.trim();
  }
  throw new CliError('no API token: pass --token TOKEN, set NETFORM_TOKEN, or pass --token-file PATH');
}
