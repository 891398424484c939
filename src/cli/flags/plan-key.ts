/**
 * The key that seals saved plans and checks them (src/plan/seal.ts): NETFORM_PLAN_KEY when set,
 * otherwise the API token (the one the connection read) or, with --embedded, the embedded server's token.
 */
import { resolve } from 'node:path';
import { embeddedTokenPath } from '../../ops/session.js';
import { PlanKey, PlanKeyError } from '../../plan/seal.js';
import { planKeyProblemText } from '../../views/plan-key.js';
import { CliError } from '../exit.js';
import type { CliIo } from '../io.js';
import { readFlagFile, TOKEN_FILE_LIMIT } from './files.js';
import { tokenOf, type Connection } from './session.js';

/**
 * Known without connecting, so a saved plan is checked before anything is opened; with
 * --embedded, call it after the connection when sealing (the first run issues the token).
 */
export function planKeyOf(connection: Connection, io: Pick<CliIo, 'env' | 'secrets'>): PlanKey {
  if (connection.exclusive) throw connection.exclusive;
  try {
    if (connection.embedded !== null) {
      const tokenPath = embeddedTokenPath(resolve(connection.embedded));
      return PlanKey.from(io.env, () => readEmbeddedToken(tokenPath, io), 'embedded-token');
    }
    return PlanKey.from(io.env, () => tokenOf(connection), 'token');
  } catch (error) {
    if (error instanceof PlanKeyError) throw new CliError(planKeyProblemText(error.problem));
    throw error;
  }
}

function readEmbeddedToken(tokenPath: string, io: Pick<CliIo, 'secrets'>): string {
  const token = readFlagFile('the embedded token', tokenPath, TOKEN_FILE_LIMIT, () => Buffer.alloc(0))
    .toString('utf8')
    .trim();
  if (token === '')
    throw new CliError(
      `the embedded server has no token (${tokenPath}), and saved plans made with --embedded are sealed with it: plan again with --embedded, or set NETFORM_PLAN_KEY for both plan and apply`,
    );
  io.secrets.add(token);
  return token;
}
