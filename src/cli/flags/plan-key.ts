/**
 * The key that seals saved plans and checks them (src/plan/seal.ts): NETFORM_PLAN_KEY when set,
 * otherwise the API token or, with --embedded, the embedded server's token.
 */
import { resolve } from 'node:path';
import { DEFAULT_EMBEDDED_DB, embeddedTokenPath } from '../../ops/session.js';
import { PlanKey, PlanKeyError } from '../../ops/apply.js';
import { rememberSecret } from '../boundary.js';
import { CliError } from '../exit.js';
import { readToken, type ConnectionOptions } from './connection.js';
import { readFlagFile, TOKEN_FILE_LIMIT } from './files.js';

/**
 * Known without connecting, so a saved plan is checked before anything is opened; with
 * --embedded, call it after the connection when sealing (the first run issues the token).
 */
export function planKeyOf(opts: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): PlanKey {
  if (opts.embedded && opts.urlGivenOnCommandLine)
    throw new CliError('--url and --embedded exclude each other: choose one');
  try {
    if (opts.embedded) {
      const tokenPath = embeddedTokenPath(resolve(opts.embedded === true ? DEFAULT_EMBEDDED_DB : opts.embedded));
      return PlanKey.from(env, () => readEmbeddedToken(tokenPath), 'embedded-token');
    }
    return PlanKey.from(env, () => readToken(opts), 'token');
  } catch (error) {
    if (error instanceof PlanKeyError) throw new CliError(error.message);
    throw error;
  }
}

function readEmbeddedToken(tokenPath: string): string {
  const token = readFlagFile('the embedded token', tokenPath, TOKEN_FILE_LIMIT, () => Buffer.alloc(0))
    .toString('utf8')
    .trim();
  if (token === '')
    throw new CliError(
      `the embedded server has no token (${tokenPath}), and saved plans made with --embedded are sealed with it: plan again with --embedded, or set NETFORM_PLAN_KEY for both plan and apply`,
    );
  rememberSecret(token);
  return token;
}
