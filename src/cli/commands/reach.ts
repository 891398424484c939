/**
 * `netform who-can-reach TO` and `netform reach USER`: the reverse questions, offline against the
 * declared rules (-f) or with --live against the server's rules and devices (src/ops/reach.ts).
 */
import { Option, type Command } from 'commander';
import { parseReachSource, parseReachTarget } from '../../access/reach.js';
import { reachOfUser, whoCanReachTarget } from '../../ops/reach.js';
import { elapsedSince } from '../../ops/events.js';
import { reachOutput, whoCanReachOutput } from '../../views/reach.js';
import type { CliContext } from '../command.js';
import type { CliIo } from '../io.js';
import { CliError, ExitCode } from '../exit.js';
import { accessSourceOf, addAfterApplyOption, type StateOptions } from '../flags/after-apply.js';
import { addConnectionOptions } from '../flags/connection.js';
import { Timings } from '../output.js';

interface ReachOptions extends StateOptions {
  all?: boolean;
  format: 'text' | 'json';
}

function common(cmd: Command): void {
  cmd
    .option('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option('--live', "evaluate against the server's rules and devices (--url or --embedded)")
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'));
  addAfterApplyOption(cmd);
  addConnectionOptions(cmd);
}

/** The request's source: the file, and the server with --live or --after-apply. */
function sourceOf(opts: ReachOptions, io: CliIo) {
  if (!opts.file && !opts.live) throw new CliError('give -f PATH (the desired state), or --live with --url/--embedded');
  return accessSourceOf(opts, io);
}

/** Writes the output, with its render phase (NETFORM_TIMINGS). */
function show(timings: Timings, io: CliIo, render: () => string): ExitCode {
  const started = performance.now();
  const output = render();
  io.out.write(output);
  timings.phase('render', elapsedSince(started));
  timings.report();
  return ExitCode.ok;
}

export function registerWhoCanReach(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('who-can-reach <to>')
    .description(
      'every source that reaches TO, with the deciding rule and what it reaches; TO is ADDRESS (any protocol and port), ' +
        'ADDRESS/PREFIX (any part of the block), ADDRESS:PORT/tcp|udp, ADDRESS/icmp or ADDRESS/other',
    )
    .option(
      '--all',
      'list every source, also those reaching it by default, and every part (lists are bounded at 100 otherwise)',
    );
  common(cmd);
  cmd.action(
    cli.action(async (toText: string, opts: ReachOptions) => {
      const target = parseReachTarget(toText);
      if (!target.ok) throw new CliError(`TO ${target.message}`);
      const timings = new Timings(io);
      const all = opts.all === true;
      const { state, ...source } = sourceOf(opts, io);
      const result = await whoCanReachTarget({ ...source, to: target.value, all }, timings);
      return show(timings, io, () => whoCanReachOutput(result, opts.format, state, all));
    }),
  );
}

export function registerReach(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('reach <user>')
    .description(
      "everything a user's devices reach, as address blocks, protocols and ports with the rule behind each; " +
        'USER is EMAIL (each device), EMAIL/DEVICE, or EMAIL/* (any future device of theirs)',
    );
  common(cmd);
  cmd.action(
    cli.action(async (userText: string, opts: ReachOptions) => {
      const source = parseReachSource(userText);
      if (!source.ok) throw new CliError(`USER ${source.message}`);
      const timings = new Timings(io);
      const { state, ...from } = sourceOf(opts, io);
      const result = await reachOfUser({ ...from, user: source.value }, timings);
      return show(timings, io, () => reachOutput(result, opts.format, state));
    }),
  );
}
