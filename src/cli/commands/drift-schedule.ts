/** `netform drift --every CRON`: a check on a schedule, one JSON line per run, until a stop request. */
import { startDriftSchedule } from '../../ops/drift-schedule.js';
import { NETFORM_VERSION } from '../../version.js';
import { driftText, SCHEDULE_WORDS } from '../../views/drift.js';
import { inertText, type WebhookFormat } from '../../views/escape.js';
import { CliError, ExitCode } from '../exit.js';
import { judgedAt } from '../flags/now.js';
import { checkSchedule } from '../flags/schedule.js';
import { connectorOf, resolveConnection } from '../flags/session.js';
import { inputOf, type CliIo } from '../io.js';
import { Timings } from '../output.js';
import { followsParent, watchStopRequests } from '../signals.js';
import type { DriftOptions } from './drift.js';

/** How long a scheduled drift may take to stop once asked (the run in progress is cancelled first). */
const STOP_BOUND_MS = 10_000;

export async function driftOnSchedule(opts: DriftOptions, io: CliIo): Promise<ExitCode> {
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
      clock: io.scheduleClock,
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
  let bound: NodeJS.Timeout | undefined;
  const stopWithin = (reason: string) => {
    // Bounded: the run in progress is cancelled; if it still has not ended, exit anyway.
    bound ??= setTimeout(() => {
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
  clearTimeout(bound);
  watch.dispose();
  log(`drift: stopped after ${schedule.runs} run(s)`);
  return exitCode;
}
