/**
 * `netform drift`: plan without applying, once (exit 0 clean, 2 drift, 1 error) or on a schedule
 * (`--every CRON`, one JSON line per run) until SIGTERM or SIGINT. Never writes to the server.
 */
import { Option, type Command } from 'commander';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { cronExpressionProblem, cronTicker, timeZoneProblem } from '../drift/cron.js';
import { collectGarbage } from '../drift/memory.js';
import { DriftLoop, type DriftRunContext, type ReportSink } from '../drift/loop.js';
import { redactSecrets } from '../drift/report.js';
import { jsonLinesSink, reportFileSink, webhookSink } from '../drift/sinks.js';
import type { Plan } from '../plan/types.js';
import { renderPlan } from '../render/index.js';
import { addConnectionOptions, openConnection, type ConnectionOptions } from './connection.js';
import { DesiredStateReuse } from '../desired/reuse.js';
import { action } from './boundary.js';
import { inertText } from '../render/escape.js';
import { watchStopRequests, type StopWatch } from './signals.js';
import { CliError, ExitCode } from './exit.js';
import { isPending } from '../plan/outcome.js';
import { fullPlanAt, loadDesired, loadDesiredAndLive, makePlan, reportTimings, useColor } from './plan.js';

const require = createRequire(import.meta.url);
const { version } = require('../../../package.json') as { version: string };

type Format = 'text' | 'json' | 'markdown';

/** How long a scheduled drift may take to stop once asked (the run in progress is cancelled first). */
const STOP_BOUND_MS = 10_000;

interface DriftCommandOptions extends ConnectionOptions {
  file: string;
  format: Format;
  color?: boolean;
  every?: string;
  timezone?: string;
  runAtStart?: boolean;
  report?: string;
  webhook?: string;
  webhookAlways?: boolean;
}

export function registerDrift(program: Command): void {
  const cmd = program
    .command('drift')
    .description(
      'report differences between the desired state and the server, without writing anything; once, or on a schedule',
    )
    .requiredOption('-f, --file <path>', 'desired-state file or folder (read again at every scheduled run)')
    .addOption(
      new Option('--format <format>', 'output of a single check (a schedule always writes JSON lines)')
        .choices(['text', 'json', 'markdown'])
        .default('text'),
    )
    .option('--no-color', 'no colour in text output')
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
    .option('--webhook-always', 'with --webhook: also POST every drifted run');
  addConnectionOptions(cmd);
  cmd.action(
    action(async (opts: DriftCommandOptions) => (opts.every === undefined ? driftOnce(opts) : driftOnSchedule(opts))),
  );
}

/** Reads the files and the server (at the same time, see loadDesiredAndLive), and plans: the same steps and messages as `netform plan`. */
async function checkDrift(opts: DriftCommandOptions, reuse?: DesiredStateReuse, cancel?: AbortSignal): Promise<Plan> {
  const { desired, connection, live } = await loadDesiredAndLive(
    opts.file,
    opts,
    reuse ? (path) => reuse.load(path) : undefined,
    cancel,
  );
  try {
    const { plan, timings } = await makePlan(desired, opts, connection, live);
    reportTimings(timings);
    return plan;
  } finally {
    await connection.close();
  }
}

async function driftOnce(opts: DriftCommandOptions): Promise<ExitCode> {
  for (const flag of ['report', 'webhook', 'webhookAlways', 'runAtStart', 'timezone'] as const) {
    if (opts[flag] !== undefined) throw new CliError(`--${kebab(flag)} needs --every (it applies to scheduled checks)`);
  }
  const plan = await checkDrift(opts);
  process.stdout.write(
    ensureNewline(
      renderPlan(plan, opts.format, { color: opts.format === 'text' && useColor(opts), fullPlanAt: fullPlanAt() }),
    ),
  );
  return isPending(plan) ? ExitCode.changes : ExitCode.ok;
}

async function driftOnSchedule(opts: DriftCommandOptions): Promise<ExitCode> {
  const expression = opts.every!;
  if (opts.file === '-')
    throw new CliError(
      '-f - (stdin) can be read once only: a schedule reads the files again at every run; give a path',
    );
  const problem = cronExpressionProblem(expression);
  if (problem) throw new CliError(`--every: "${expression}" is not a valid cron expression (${problem})`);
  const zoneProblem = opts.timezone === undefined ? null : timeZoneProblem(opts.timezone);
  if (zoneProblem) throw new CliError(`--timezone: ${zoneProblem}`);
  if (opts.webhookAlways && !opts.webhook) throw new CliError('--webhook-always needs --webhook URL');
  if (opts.webhook) checkWebhookUrl(opts.webhook);
  if (opts.report) await checkReportFolder(opts.report);

  const log = (message: string) => process.stderr.write(`${inertText(message)}\n`);
  // Settings that can never work are refused now, not reported as failed runs forever after.
  await loadDesired(opts.file);
  const probe = await openConnection(opts);
  const server = probe.url;
  await probe.close();

  const secrets = [opts.token, process.env.NETFORM_TOKEN, opts.webhook];
  const sinks: ReportSink[] = [jsonLinesSink((text) => process.stdout.write(text))];
  if (opts.report) sinks.push(reportFileSink(opts.report));
  if (opts.webhook)
    sinks.push(
      webhookSink({
        url: opts.webhook,
        always: opts.webhookAlways ?? false,
        userAgent: `netform/${version}`,
        secrets: secrets.filter((s): s is string => !!s),
        log,
      }),
    );

  const ticker = cronTicker(expression, { timezone: opts.timezone, log });
  // Aborted when the schedule stops: the run in progress stops reading at once.
  const runs = new AbortController();
  // Files read at every run: while they (and the secrets they name) are unchanged, the state read
  // last time is used again instead of parsing and checking them anew.
  const reuse = new DesiredStateReuse();
  const loop = new DriftLoop({
    ticker,
    now: () => Date.now(),
    sinks,
    log,
    describeError: (error) => redactSecrets(error instanceof Error ? error.message : String(error), secrets),
    // Connecting again at each run picks up a renewed --token-file without a restart.
    run: async (context: DriftRunContext) => {
      context.sources = [opts.file];
      context.server = server;
      return checkDrift(opts, reuse, runs.signal);
    },
    // What a run leaves behind is freed while the process waits for the next one (see memory.ts).
    afterRun: () => void collectGarbage(),
  });

  let exitCode: ExitCode = ExitCode.ok;
  let stopWatch: StopWatch | undefined;
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      // Bounded: the run in progress is cancelled below; if it still has not ended, exit anyway.
      setTimeout(() => {
        log(`drift: not stopped within ${STOP_BOUND_MS / 1000} s: exiting`);
        process.exit(ExitCode.error);
      }, STOP_BOUND_MS).unref();
      void loop.stop().then(resolve);
    };
    // Reports that cannot be written (stdout closed: `| head`, a dead log pipe) end the schedule.
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (exitCode !== ExitCode.ok) return;
      exitCode = ExitCode.error;
      log(`drift: cannot write reports to stdout (${error.code ?? error.message}): stopping`);
      runs.abort();
      stop();
    });
    stopWatch = watchStopRequests((reason, first) => {
      if (!first) {
        log(`drift: ${reason} again: stopping now, without waiting for the run in progress`);
        process.exit(ExitCode.error);
      }
      log(`drift: ${reason}: stopping${loop.running ? ' (the run in progress is cancelled)' : ''}`);
      runs.abort();
      stop();
    });
  });

  loop.start();
  if (opts.runAtStart) loop.tick();
  const next = ticker.nextRun();
  log(
    `drift: checking ${opts.file} against ${server} on "${expression}"${next ? `; next run at ${next.toISOString()}` : ''}`,
  );
  await stopped;
  stopWatch?.dispose();
  log(`drift: stopped after ${loop.runs} run(s)`);
  return exitCode;
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

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
