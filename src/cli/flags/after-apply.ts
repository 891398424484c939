/**
 * `--live` and `--after-apply`, the two server states an access command can evaluate besides the
 * declared rules (docs/rule-semantics.md §9), as one request source.
 */
import type { Command } from 'commander';
import { evaluatedState, type AccessSource } from '../../ops/access.js';
import type { EvaluatedState } from '../../access/after-apply.js';
import { CliError } from '../exit.js';
import { inputOf, type CliIo } from '../io.js';
import type { ConnectionOptions } from './connection.js';
import { addNowOption, clockOf } from './now.js';
import { connectorOf, resolveConnection } from './session.js';

export interface StateOptions extends ConnectionOptions {
  file?: string;
  live?: boolean;
  afterApply?: boolean;
  /** The hidden `--now TIME`: the instant the files' expiries are judged at. */
  now?: string;
}

export function addAfterApplyOption(cmd: Command): Command {
  // Every access command only reads: each takes the hidden --now.
  addNowOption(cmd);
  return cmd.option(
    '--after-apply',
    'evaluate the server as apply would leave it: the files planned against the server (-f and --url or --embedded), nothing written',
  );
}

/**
 * The files and the server to evaluate (the connection flags resolved once, the files' secrets and
 * `-` read through `io`), and the state that is: files only, live now, or after apply.
 */
export function accessSourceOf(opts: StateOptions, io: CliIo): AccessSource & { state: EvaluatedState } {
  if (opts.afterApply && opts.live) throw new CliError('give --live (the server as it is) or --after-apply, not both');
  if (opts.afterApply && !opts.file)
    throw new CliError('--after-apply needs -f PATH: the files are planned against the server');
  const source: AccessSource = {
    file: opts.file,
    live: opts.live || opts.afterApply ? connectorOf(resolveConnection(opts, io)) : undefined,
    input: inputOf(io, clockOf(io, opts)),
    ...(opts.afterApply ? { afterApply: true } : {}),
  };
  return { ...source, state: evaluatedState(source) };
}
