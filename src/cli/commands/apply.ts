/**
 * `netform apply -f PATH` plans and applies; `netform apply plan.json` applies a saved plan
 * exactly, and refuses it (exit 4, nothing changed) when anything it touches changed since;
 * `apply -f PATH --reviewed PLANFILE` writes only what the reviewed plan shows identically.
 * Exit codes: 0 done, 1 error or a failed write, 3 over a safety limit, 4 stale saved plan,
 * 5 changes withheld as not reviewed. The first SIGINT/SIGTERM during the writes stops new
 * writes; the second exits at once.
 */
import type { Command } from 'commander';
import type { ApplyEvents } from '../../ops/apply.js';
import type { ProgressReporter } from '../../views/progress.js';
import type { CliContext } from '../command.js';
import type { ExitCode } from '../exit.js';
import { checkApplySources } from '../flags/apply-sources.js';
import { addApprovalOptions, approvalsRequest, type ApprovalOptions } from '../flags/approvals.js';
import { addConnectionOptions } from '../flags/connection.js';
import { parsePositive } from '../flags/numbers.js';
import { addExpiryApplyOptions, type ExpiryApplyOptions } from '../flags/expiry.js';
import { addPlanAgeOption, checkSavedPlanAge } from '../flags/plan-age.js';
import { addPlanningOptions, planShaping, type PlanningOptions } from '../flags/planning.js';
import { inputOf, type CliIo } from '../io.js';
import { watchStopRequests } from '../signals.js';
import { applyViews, savedPlanReading, type ApplyViews } from '../apply-views.js';

interface ApplyOptions extends PlanningOptions, ApprovalOptions, ExpiryApplyOptions {
  yes?: boolean;
  parallelism: number;
  allowNowManaged?: boolean;
  planMaxAge: string;
}

export function registerApply(program: Command, cli: CliContext): void {
  const cmd = program
    .command('apply [saved-plan]')
    .description(
      'make the server match the desired state (-f PATH), or apply a saved plan exactly; exit 0 done, 1 error or failed writes, 3 over a safety limit, 4 stale saved plan, 5 unreviewed changes withheld (--reviewed)',
    )
    .option(
      '-f, --file <path>',
      'desired state to plan and apply: a YAML file, a folder of YAML files, or a cdk.tf.json',
    )
    .option(
      '-y, --yes',
      'apply without asking for confirmation (needed without a terminal; a saved plan is applied without asking)',
    )
    .option(
      '--reviewed <plan-file>',
      'with -f: plan again, and write only the changes this saved plan (the one reviewed) shows identically; the rest are withheld and listed (exit 5)',
    )
    .option('--parallelism <n>', 'writes at once', parsePositive, 8)
    .option(
      '--allow-now-managed',
      'with -f: make changes that exist only because the files leave a field out, which means its default (refused otherwise, exit 3)',
    );
  addApprovalOptions(addPlanAgeOption(addExpiryApplyOptions(cmd)));
  addPlanningOptions(cmd);
  addConnectionOptions(cmd);
  cmd.action(cli.action((saved: string | undefined, opts: ApplyOptions) => runApply(saved, opts, cli.io)));
}

async function runApply(savedPlanPath: string | undefined, opts: ApplyOptions, io: CliIo): Promise<ExitCode> {
  const { resolveSecret } = await import('../../desired/secrets.js');
  const { applyPlanned, applySaved } = await import('../../ops/apply.js');
  const { connectorOf, resolveConnection } = await import('../flags/session.js');
  const { progressOnTerminal, Timings, useColor } = await import('../output.js');
  checkApplySources(savedPlanPath, opts);
  const approvals = await approvalsRequest(opts);
  // Saved plans are sealed under NETFORM_PLAN_KEY or the token: checked before anything is opened.
  const connection = resolveConnection(opts, io);
  const sealed = savedPlanPath || opts.reviewed ? await savedPlanReading() : undefined;
  const key = sealed?.planKeyOf(connection, io);
  const saved = savedPlanPath ? sealed!.readSavedPlanFile(savedPlanPath, key!) : undefined;
  const reviewed = opts.reviewed ? sealed!.readSavedPlanFile(opts.reviewed, key!) : undefined;
  // Apply's views once there is a plan (events.planned loads them; armed `stop` comes after it).
  let views: ApplyViews | undefined = saved ? await applyViews() : undefined;
  if (saved) await checkSavedPlanAge(savedPlanPath!, saved, opts.planMaxAge, 'apply', io);
  if (reviewed) await checkSavedPlanAge(opts.reviewed!, reviewed, opts.planMaxAge, 'reviewed', io);
  const timings = new Timings(io);
  const color = useColor(opts, io);
  let reporter: ProgressReporter | undefined;
  let graceMs = 0;
  // Armed when the writes start: before that a signal ends the process as usual (nothing was written).
  const stop = watchStopRequests(
    io,
    (signal, first) => {
      if (first) io.err.write(views!.say.stoppingLine(signal, graceMs, reporter?.inFlight().size ?? 0));
      else {
        io.err.write(views!.say.exitingNowLine(signal));
        io.exit(views!.exitCodeOf(signal));
      }
    },
    { parent: false, armed: false },
  );
  const events: ApplyEvents = {
    phase: timings.phase,
    planned: async (plan, review) => {
      const { say, renderPlan, renderWithheld } = (views ??= await applyViews());
      const noChangesLine = review?.withheld.length ? say.NOTHING_REVIEWED : undefined;
      io.out.write(renderPlan(plan, 'text', { color, noChangesLine }));
      if (review) io.out.write(renderWithheld(review, { color }));
      if (!saved) timings.report();
    },
    ...(opts.yes || saved || reviewed
      ? {}
      : { confirm: async (p, url) => (views ??= await applyViews()).confirm(p, url, io) }),
    writing: (plan, grace) => {
      graceMs = grace;
      stop.arm();
      reporter = progressOnTerminal(plan.changes.length, io);
    },
    onStart: (change) => reporter?.onStart(change),
    onSettled: (result, detail) => reporter?.onSettled(result, detail),
    onProgress: (progress) => reporter?.onProgress(progress),
    written: () => reporter?.stop(),
    halted: (reason) => io.err.write(views!.say.haltedLine(reason)),
    unpinned: (count) => io.err.write(views!.say.unpinnedLine(count)),
  };
  // Apply judges expiries and acknowledgements at its own clock, read once.
  const instant = io.clock();
  const request = { connect: connectorOf(connection), parallelism: opts.parallelism, instant, clock: () => instant };
  try {
    const outcome = saved
      ? await applySaved(
          { ...request, ...planShaping(opts), plan: saved, key: key!, readSecret: (ref) => views!.readSecret(ref, io) },
          events,
          stop.signal,
        )
      : await applyPlanned(
          {
            ...request,
            ...planShaping(opts),
            file: opts.file!,
            input: inputOf(io),
            reviewed,
            wordPlan: sealed?.wordedPlan,
            key,
            allowNowManaged: opts.allowNowManaged === true,
            ...approvals,
            expiredOnly: opts.expiredOnly === true,
            resolveSecret: (ref) => resolveSecret(ref, io.env),
          },
          events,
          stop.signal,
        );
    timings.reportWrites();
    return (views ??= await applyViews()).outcomeCode(outcome, io, color, reporter?.logged());
  } finally {
    stop.dispose();
  }
}
