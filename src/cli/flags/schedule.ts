/** The flags of a scheduled drift (`--every` and what goes with it), refused up front when they cannot work. */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Command } from 'commander';
import { dirname, resolve } from 'node:path';
import { WEBHOOK_FORMATS } from '../../views/escape.js';
import { CliError } from '../exit.js';

export interface ScheduleOptions {
  every?: string;
  timezone?: string;
  runAtStart?: boolean;
  report?: string;
  webhook?: string;
  webhookAlways?: boolean;
  webhookFormat?: string;
}

/** `--every` and the flags that go with it, in the order `drift --help` lists them. */
export function addScheduleOptions(cmd: Command): Command {
  return cmd
    .option(
      '--every <cron>',
      'check on this cron schedule until SIGTERM/SIGINT; a leading sixth field is seconds ("*/30 * * * * *")',
    )
    .option('--timezone <tz>', 'time zone of the schedule (default: the system time zone)')
    .option('--run-at-start', 'with --every: also check once right away')
    .option('--report <file>', 'with --every: keep the latest report in this file (replaced atomically)')
    .option(
      '--webhook <url>',
      'with --every: POST a report whenever the status or the set of differences changes (recovery included); at most 5 s per run',
    )
    .option('--webhook-always', 'with --webhook: also POST every drifted run')
    .option(
      '--webhook-format <format>',
      "with --webhook: how the report's text is written: slack (default: entities, names in code spans) or markdown (CommonMark, for Teams, Discord and Mattermost)",
    );
}

export async function checkSchedule(opts: ScheduleOptions & { every: string }): Promise<void> {
  // node-cron, loaded by a schedule only.
  const { cronExpressionProblem, timeZoneProblem } = await import('../../drift/cron.js');
  const problem = cronExpressionProblem(opts.every);
  if (problem) throw new CliError(`--every: "${opts.every}" is not a valid cron expression (${problem})`);
  const zoneProblem = opts.timezone === undefined ? null : timeZoneProblem(opts.timezone);
  if (zoneProblem) throw new CliError(`--timezone: ${zoneProblem}`);
  if (opts.webhookAlways && !opts.webhook) throw new CliError('--webhook-always needs --webhook URL');
  if (opts.webhook) checkWebhookUrl(opts.webhook);
  if (opts.webhookFormat !== undefined && !opts.webhook) throw new CliError('--webhook-format needs --webhook URL');
  if (opts.webhookFormat !== undefined && !(WEBHOOK_FORMATS as readonly string[]).includes(opts.webhookFormat))
    throw new CliError(`--webhook-format: "${opts.webhookFormat}" is not one of ${WEBHOOK_FORMATS.join(', ')}`);
  if (opts.report) await checkReportFolder(opts.report);
}

async function checkReportFolder(path: string): Promise<void> {
  const folder = dirname(resolve(path));
  try {
    await access(folder, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      `--report: ${code === 'ENOENT' ? `the folder ${folder} does not exist` : `cannot write into ${folder} (${code ?? 'error'})`}`,
    );
  }
}

function checkWebhookUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError('--webhook: not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new CliError('--webhook: not an http(s) URL');
}

/** A single check (no `--every`) refuses the flags that only a schedule uses. */
export function refuseScheduleFlags(opts: ScheduleOptions): void {
  for (const flag of ['report', 'webhook', 'webhookAlways', 'webhookFormat', 'runAtStart', 'timezone'] as const) {
    if (opts[flag] !== undefined) throw new CliError(`--${kebab(flag)} needs --every (it applies to scheduled checks)`);
  }
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
