/**
 * `netform drift`: plan without applying, once (exit 0 clean, 2 drift, 1 error) or on a schedule
 * (`--every CRON`, one JSON line per run) until SIGTERM or SIGINT. Never writes to the server.
 */
import { Option, type Command } from 'commander';
import { checkDrift, startDriftSchedule } from '../../ops/drift.js';
import { NETFORM_VERSION } from '../../version.js';
import { driftText, SCHEDULE_WORDS } from '../../views/drift.js';
import { inertText, type WebhookFormat } from '../../views/escape.js';
import { renderDrift } from '../../views/drift-render.js';
import { PLAN_FORMATS, type PlanFormat } from '../../views/plan.js';
import { addAdoptBranchOption, proposeAdoption } from '../adopt-branch.js';
import type { CliContext } from '../command.js';
import { CliError, ExitCode } from '../exit.js';
import { addNowOption, judgedAt } from '../flags/now.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';
import { addScheduleOptions, checkSchedule, refuseScheduleFlags, type ScheduleOptions } from '../flags/schedule.js';
import { connectorOf, resolveConnection } from '../flags/session.js';
import { inputOf, type CliIo } from '../io.js';
import { fullPlanAt, Timings, useColor } from '../output.js';
import { EXIT_WITH_PARENT, followsParent, watchStopRequests } from '../signals.js';

/** How long a scheduled drift may take to stop once asked (the run in progress is cancelled first). */
const STOP_BOUND_MS = 10_000;

interface DriftOptions extends ConnectionOptions, ScheduleOptions {
  file: string;
  adoptBranch?: string;
  exitWithParent?: boolean;
  format: PlanFormat;
  color?: boolean;
  now?: string;
}

export function registerDrift(program: Command, cli: CliContext): void {
  const cmd = program
    .command('drift')
    .description(
      'report differences between the desired state and the server, without writing anything; once, or on a schedule',
    )
    .requiredOption('-f, --file <path>', 'desired-state file or folder (read again at every scheduled run)')
    .addOption(
      new Option('--format <format>', 'output of a single check (a schedule always writes JSON lines)')
        .choices(PLAN_FORMATS as string[])
        .default('text'),
    )
    .option('--no-color', 'no colour in text output');
  addAdoptBranchOption(addScheduleOptions(addNowOption(cmd)).option('--exit-with-parent', EXIT_WITH_PARENT));
  addConnectionOptions(cmd);
  cmd.action(
    cli.action(async (opts: DriftOptions) =>
      opts.every === undefined ? driftOnce(opts, cli.io) : driftOnSchedule(opts, cli.io),
    ),
  );
}

async function driftOnce(opts: DriftOptions, io: CliIo): Promise<ExitCode> {
  refuseScheduleFlags(opts);
  const timings = new Timings(io);
  const connect = connectorOf(resolveConnection(opts, io));
  const instant = judgedAt(io, opts, opts.adoptBranch === undefined ? undefined : '--adopt-branch');
  const input = inputOf(io, () => instant);
  const { plan, status } = await checkDrift({ file: opts.file, connect, input, instant }, timings);
  timings.report();
  const color = opts.format === 'text' && useColor(opts, io);
  const output = renderDrift(plan, opts.format, { color, fullPlanAt: fullPlanAt(io.env) });
  io.out.write(output.endsWith('\n') ? output : `${output}\n`);
  if (opts.adoptBranch !== undefined && status === 'drift')
    await proposeAdoption(opts.file, opts.adoptBranch, connect, io, plan.server);
  // Drift: changes, or pending with none planned (src/plan/outcome.ts).
  return status === 'drift' ? ExitCode.changes : ExitCode.ok;
}

async function driftOnSchedule(opts: DriftOptions, io: CliIo): Promise<ExitCode> {
  const every = opts.every!;
  if (opts.adoptBranch !== undefined)
    throw new CliError('--adopt-branch is for a single check, not a schedule (--every)');
  if (opts.file === '-')
    throw new CliError(
      '-f - (stdin) can be read once only: a schedule reads the files again at every run; give a path',
    );
  judgedAt(io, opts, '--every');
  await checkSchedule({ ...opts, every });
  const log = (message: string) => io.err.write(`${inertText(message)}\n`);
  const timings = new Timings(io);
  const stop = new AbortController();
  const schedule = await startDriftSchedule(
    {
      file: opts.file,
      input: inputOf(io),
      connect: connectorOf(resolveConnection(opts, io), { readAgain: true }),
      every,
      timezone: opts.timezone,
      runAtStart: opts.runAtStart,
      write: (text) => io.out.write(text),
      reportFile: opts.report,
      ...(opts.webhook
        ? {
            webhook: {
              url: opts.webhook,
              always: opts.webhookAlways ?? false,
              userAgent: `netform/${NETFORM_VERSION}`,
              text: (report, previous) =>
                driftText(report, previous, undefined, (opts.webhookFormat ?? 'slack') as WebhookFormat),
            },
          }
        : {}),
      secrets: [opts.token, io.env.NETFORM_TOKEN, opts.webhook].filter((s): s is string => !!s),
      ...SCHEDULE_WORDS,
    },
    { log, phase: timings.phase, checked: () => timings.report() },
    stop.signal,
  );

  let exitCode: ExitCode = ExitCode.ok;
  const stopWithin = (reason: string) => {
    // Bounded: the run in progress is cancelled; if it still has not ended, exit anyway.
    setTimeout(() => {
      log(`drift: not stopped within ${STOP_BOUND_MS / 1000} s: exiting`);
      io.exit(ExitCode.error);
    }, STOP_BOUND_MS).unref();
    stop.abort(reason);
  };
  // Reports that cannot be written (stdout closed: `| head`, a dead log pipe) end the schedule.
  io.out.on('error', (error: NodeJS.ErrnoException) => {
    if (exitCode !== ExitCode.ok) return;
    exitCode = ExitCode.error;
    log(`drift: cannot write reports to stdout (${error.code ?? error.message}): stopping`);
    stopWithin('stdout closed');
  });
  const watch = watchStopRequests(
    io,
    (reason, first) => {
      if (!first) {
        log(`drift: ${reason} again: stopping now, without waiting for the run in progress`);
        io.exit(ExitCode.error);
      }
      log(`drift: ${reason}: stopping${schedule.running ? ' (the run in progress is cancelled)' : ''}`);
      stopWithin(reason);
    },
    { parent: followsParent(opts.exitWithParent, io.env) },
  );
  const next = schedule.nextRun ? `; next run at ${schedule.nextRun.toISOString()}` : '';
  log(`drift: checking ${opts.file} against ${schedule.server} on "${every}"${next}`);
  await schedule.stopped;
  watch.dispose();
  log(`drift: stopped after ${schedule.runs} run(s)`);
  return exitCode;
}
