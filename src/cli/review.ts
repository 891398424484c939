/**
 * `netform review`: the periodic access review of a server (src/review): who reaches what, stale
 * devices, users never signed in or without devices, shadowed rules and accept rules that grant
 * nothing, as markdown, JSON or CSV. With -f, rules carry their `file:line` and the access tests
 * run against the live server. The report is the whole access map: it is written to stdout or -o.
 */
import { Option, type Command } from 'commander';
import { writeFileAtomically } from '../drift/sinks.js';
import { inertText } from '../render/escape.js';
import {
  buildReview,
  DEFAULT_STALE_DAYS,
  formatReview,
  REVIEW_FORMATS,
  telemetrySupport,
  type ReviewFormat,
} from '../review/index.js';
import { action } from './boundary.js';
import { addConnectionOptions, openConnection, readLiveState, type ConnectionOptions } from './connection.js';
import { CliError, ExitCode } from './exit.js';
import { loadDesired } from './plan.js';

interface ReviewOptions extends ConnectionOptions {
  file?: string;
  format: ReviewFormat;
  staleDays: string;
  output?: string;
}

export function registerReview(program: Command): void {
  const cmd = program
    .command('review')
    .description(
      'a periodic access review of the server: every user with role, devices and what they reach; stale devices, users never signed in or without devices, shadowed rules, accept rules that grant nothing',
    )
    .option(
      '-f, --file <path>',
      'desired state: rule locations (file:line) and its access tests run against the server',
    )
    .addOption(new Option('--format <format>', 'output format').choices([...REVIEW_FORMATS]).default('markdown'))
    .option('--stale-days <n>', 'a device with no handshake in this many days is listed', String(DEFAULT_STALE_DAYS))
    .option('-o, --output <file>', 'write the review to this file instead of stdout');
  addConnectionOptions(cmd);
  cmd.action(action(async (opts: ReviewOptions) => runReview(opts)));
}

async function runReview(opts: ReviewOptions): Promise<ExitCode> {
  const staleDays = Number(opts.staleDays);
  if (!/^\d+$/.test(opts.staleDays.trim()) || !Number.isSafeInteger(staleDays) || staleDays < 1)
    throw new CliError(`--stale-days: expected a whole number of days, 1 or more (got ${inertText(opts.staleDays)})`);
  // Bad files stop the review before the server is read.
  const desired = opts.file ? (await loadDesired(opts.file)).state : undefined;
  const connection = await openConnection(opts);
  let text: string;
  try {
    const live = await readLiveState(connection);
    const ownServer = opts.embedded ? true : await connection.client.isNetformServer();
    const report = buildReview({
      live,
      ...(desired ? { desired } : {}),
      telemetry: telemetrySupport(live, ownServer),
      now: new Date(),
      staleDays,
      server: connection.url,
    });
    text = formatReview(report, opts.format);
  } finally {
    await connection.close();
  }
  if (opts.output && opts.output !== '-') {
    try {
      await writeFileAtomically(opts.output, text);
    } catch (error) {
      throw new CliError(`-o: cannot write ${opts.output} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    process.stderr.write(`review written to ${inertText(opts.output)}\n`);
  } else process.stdout.write(text);
  return ExitCode.ok;
}
