/**
 * `netform review`: the periodic access review of a server (src/ops/review.ts): who reaches what,
 * stale devices, users never signed in or without devices, shadowed rules and accept rules that
 * grant nothing, as markdown, JSON or CSV. With -f, rules carry their `file:line` and the access
 * tests run against the live server. The report is the whole access map: it is written to stdout or -o.
 */
import { Option, type Command } from 'commander';
import { reviewServer, writeReviewFile } from '../../ops/review.js';
import { DEFAULT_EXPIRING_DAYS } from '../../review/expiries.js';
import { DEFAULT_STALE_DAYS } from '../../review/report.js';
import { inertText } from '../../views/escape.js';
import { formatReview, REVIEW_FORMATS, type ReviewFormat } from '../../views/review.js';
import type { CliContext } from '../command.js';
import { inputOf, type CliIo } from '../io.js';
import { CliError, ExitCode } from '../exit.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';
import { connectorOf, resolveConnection } from '../flags/session.js';
import { wholeNumber } from '../flags/numbers.js';
import { addNowOption, clockOf } from '../flags/now.js';

interface ReviewOptions extends ConnectionOptions {
  file?: string;
  afterApply?: boolean;
  format: ReviewFormat;
  staleDays: string;
  output?: string;
  expiringDays: string;
  now?: string;
}

export function registerReview(program: Command, cli: CliContext): void {
  const { io } = cli;
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
    .option('-o, --output <file>', 'write the review to this file instead of stdout')
    .option(
      '--expiring-days <n>',
      'with -f: grants whose expires: falls within this many days are listed',
      String(DEFAULT_EXPIRING_DAYS),
    )
    .option(
      '--after-apply',
      'with -f: run the access tests on the server as apply would leave it (the files planned against it, nothing written)',
    );
  addConnectionOptions(addNowOption(cmd));
  cmd.action(cli.action(async (opts: ReviewOptions) => runReview(opts, io)));
}

async function runReview(opts: ReviewOptions, io: CliIo): Promise<ExitCode> {
  const staleDays = wholeNumber(opts.staleDays, { min: 1, max: Number.MAX_SAFE_INTEGER });
  if (staleDays === null)
    throw new CliError(`--stale-days: expected a whole number of days, 1 or more (got ${inertText(opts.staleDays)})`);
  const expiringDays = wholeNumber(opts.expiringDays, { min: 0, max: 36_500 });
  if (expiringDays === null)
    throw new CliError(
      `--expiring-days: expected a whole number of days, 0 to 36500 (got ${inertText(opts.expiringDays)})`,
    );
  const clock = clockOf(io, opts);
  const report = await reviewServer({
    file: opts.file,
    connect: connectorOf(resolveConnection(opts, io)),
    staleDays,
    input: inputOf(io, clock),
    now: clock(),
    expiringDays,
    ...(opts.afterApply ? { afterApply: true } : {}),
  });
  const text = formatReview(report, opts.format);
  if (opts.output && opts.output !== '-') {
    await writeReviewFile(opts.output, text);
    io.err.write(`review written to ${inertText(opts.output)}\n`);
  } else io.out.write(text);
  return ExitCode.ok;
}
