/**
 * `netform who-can-reach TO` and `netform reach USER`: the reverse questions, offline against the
 * declared rules (-f) or with --live against the server's rules and devices. The evaluation is
 * src/access/reach.ts (pure); this file only reads the state and prints.
 */
import { Option, type Command } from 'commander';
import { performance } from 'node:perf_hooks';
import {
  accessModelOfDesired,
  accessModelOfLive,
  accessSettingsOf,
  parseReachSource,
  parseReachTarget,
  reachJson,
  reachLines,
  reachOf,
  whoCanReach,
  whoCanReachJson,
  whoCanReachLines,
  type AccessModel,
} from '../access/index.js';
import { action } from './boundary.js';
import { addConnectionOptions, openConnection, readLiveState, type ConnectionOptions } from './connection.js';
import { CliError, ExitCode } from './exit.js';
import { loadDesired } from './plan.js';

interface ReachOptions extends ConnectionOptions {
  file?: string;
  live?: boolean;
  all?: boolean;
  format: 'text' | 'json';
}

const SOURCE = 'give -f PATH (the desired state), or --live with --url/--embedded';

/** Phase durations (ms), written as one `netform-timings` line on stderr with NETFORM_TIMINGS set (bench/). */
class Phases {
  readonly #times: Record<string, number> = {};
  #last = performance.now();
  done(phase: string): void {
    const now = performance.now();
    this.#times[phase] = Math.round(now - this.#last);
    this.#last = now;
  }
  report(): void {
    if (process.env.NETFORM_TIMINGS)
      process.stderr.write(
        `netform-timings ${JSON.stringify({ ...this.#times, rss_peak_mb: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`,
      );
  }
}

/** The declared access model, or with --live the server's (with -f too: its settings apply). */
async function modelOf(opts: ReachOptions, phases: Phases): Promise<AccessModel> {
  if (!opts.file && !opts.live) throw new CliError(SOURCE);
  const desired = opts.file ? (await loadDesired(opts.file)).state : undefined;
  if (desired) phases.done('load');
  if (!opts.live) return accessModelOfDesired(desired!);
  const connection = await openConnection(opts);
  try {
    const live = await readLiveState(connection);
    phases.done('fetch');
    return accessModelOfLive(live, desired ? accessSettingsOf(desired) : undefined);
  } finally {
    await connection.close();
  }
}

function common(cmd: Command): void {
  cmd
    .option('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option('--live', "evaluate against the server's rules and devices (--url or --embedded)")
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'));
  addConnectionOptions(cmd);
}

function write(lines: string[]): void {
  process.stdout.write(`${lines.join('\n')}\n`);
}

export function registerWhoCanReach(program: Command): void {
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
    action(async (toText: string, opts: ReachOptions) => {
      const target = parseReachTarget(toText);
      if (!target.ok) throw new CliError(`TO ${target.message}`);
      const phases = new Phases();
      const model = await modelOf(opts, phases);
      const result = whoCanReach(model, target.value, { all: opts.all === true });
      phases.done('evaluate');
      if (opts.format === 'json')
        process.stdout.write(`${JSON.stringify(whoCanReachJson(result, opts.live ? 'live' : 'declared'), null, 2)}\n`);
      else write(whoCanReachLines(result, opts.live ? 'the live server' : 'the declared rules', opts.all === true));
      phases.done('render');
      phases.report();
      return ExitCode.ok;
    }),
  );
}

export function registerReach(program: Command): void {
  const cmd = program
    .command('reach <user>')
    .description(
      "everything a user's devices reach, as address blocks, protocols and ports with the rule behind each; " +
        'USER is EMAIL (each device), EMAIL/DEVICE, or EMAIL/* (any future device of theirs)',
    );
  common(cmd);
  cmd.action(
    action(async (userText: string, opts: ReachOptions) => {
      const source = parseReachSource(userText);
      if (!source.ok) throw new CliError(`USER ${source.message}`);
      const phases = new Phases();
      const model = await modelOf(opts, phases);
      const result = reachOf(model, source.value, opts.live ? 'live' : 'declared');
      if (!result.ok) throw new CliError(result.message);
      phases.done('evaluate');
      if (opts.format === 'json')
        process.stdout.write(`${JSON.stringify(reachJson(result.value, opts.live ? 'live' : 'declared'), null, 2)}\n`);
      else write(reachLines(result.value, opts.live ? 'the live server' : 'the declared rules'));
      phases.done('render');
      phases.report();
      return ExitCode.ok;
    }),
  );
}
