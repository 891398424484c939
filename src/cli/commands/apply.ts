/**
 * `netform apply -f PATH` plans and applies; `netform apply plan.json` applies a saved plan
 * exactly, and refuses it (exit 4, nothing changed) when anything it touches changed since.
 * Exit codes: 0 done, 1 error or a failed write, 3 over a safety limit, 4 stale saved plan.
 * The first SIGINT/SIGTERM during the writes stops new writes; the second exits at once.
 */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { resolveSecret } from '../../desired/index.js';
import type { SecretRef } from '../../model/secret.js';
import { applyPlanned, applySaved, readSavedPlanFile, type ApplyEvents, type ApplyOutcome } from '../../ops/apply.js';
import type { Plan } from '../../plan/types.js';
import * as say from '../../views/apply.js';
import { renderPlan } from '../../views/plan.js';
import type { ProgressReporter } from '../../views/progress.js';
import { action } from '../boundary.js';
import { CliError, ExitCode } from '../exit.js';
import { addConnectionOptions, connectorOf } from '../flags/connection.js';
import { parsePositive } from '../flags/numbers.js';
import { addPlanningOptions, planShaping, type PlanningOptions } from '../flags/planning.js';
import { progressOnTerminal, Timings, useColor } from '../output.js';
import { watchStopRequests } from '../signals.js';

interface ApplyOptions extends PlanningOptions {
  yes?: boolean;
  parallelism: number;
}

export function registerApply(program: Command): void {
  const cmd = program
    .command('apply [saved-plan]')
    .description(
      'make the server match the desired state (-f PATH), or apply a saved plan exactly; exit 0 done, 1 error or failed writes, 3 over a safety limit, 4 stale saved plan',
    )
    .option(
      '-f, --file <path>',
      'desired state to plan and apply: a YAML file, a folder of YAML files, or a cdk.tf.json',
    )
    .option(
      '-y, --yes',
      'apply without asking for confirmation (needed without a terminal; a saved plan is applied without asking)',
    )
    .option('--parallelism <n>', 'writes at once', parsePositive, 8);
  addPlanningOptions(cmd);
  addConnectionOptions(cmd);
  cmd.action(action(runApply));
}

async function runApply(savedPlanPath: string | undefined, opts: ApplyOptions): Promise<ExitCode> {
  if (savedPlanPath && opts.file) throw new CliError('give either a saved plan or -f PATH, not both');
  if (!savedPlanPath && !opts.file)
    throw new CliError(
      'nothing to apply: pass -f PATH (desired state) or the path of a saved plan from `netform plan -o`',
    );
  if (savedPlanPath && (opts.replace || opts.rotatePasswords))
    throw new CliError(
      '--replace and --rotate-passwords shape a plan: pass them to `netform plan`; a saved plan is applied exactly as it was made',
    );
  const saved = savedPlanPath ? readSavedPlanFile(savedPlanPath) : undefined;
  const timings = new Timings();
  const color = useColor(opts);
  let reporter: ProgressReporter | undefined;
  let graceMs = 0;
  // Armed when the writes start: before that a signal ends the process as usual (nothing was written).
  const stop = watchStopRequests(
    (signal, first) => {
      if (first) process.stderr.write(say.stoppingLine(signal, graceMs, reporter?.inFlight().size ?? 0));
      else {
        process.stderr.write(say.exitingNowLine(signal));
        process.exit(exitCodeOf(signal));
      }
    },
    { parent: false, armed: false },
  );
  const events: ApplyEvents = {
    phase: timings.phase,
    planned: (plan) => {
      process.stdout.write(renderPlan(plan, 'text', { color }));
      if (!saved) timings.report();
    },
    ...(opts.yes || saved ? {} : { confirm }),
    writing: (plan, grace) => {
      graceMs = grace;
      stop.arm();
      reporter = progressOnTerminal(plan.changes.length);
    },
    onStart: (change) => reporter?.onStart(change),
    onSettled: (result, detail) => reporter?.onSettled(result, detail),
    onProgress: (progress) => reporter?.onProgress(progress),
    written: () => reporter?.stop(),
    halted: (reason) => process.stderr.write(say.haltedLine(reason)),
  };
  const request = {
    connect: connectorOf(opts),
    parallelism: opts.parallelism,
    resolveSecret: (ref: SecretRef) => resolveSecret(ref, process.env),
  };
  try {
    const outcome = saved
      ? await applySaved({ ...request, plan: saved, ...planShaping(opts) }, events, stop.signal)
      : await applyPlanned({ ...request, ...planShaping(opts), file: opts.file! }, events, stop.signal);
    timings.reportWrites();
    return outcomeCode(outcome, color);
  } finally {
    stop.dispose();
  }
}

function exitCodeOf(signal: unknown): ExitCode {
  return signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated;
}

/** Asks on the terminal; without one, refuses. */
async function confirm(plan: Plan, server: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    throw new CliError(
      'refusing to apply without confirmation: there is no terminal to ask on; pass --yes to apply unattended, or apply a saved plan (netform plan -o FILE, then netform apply FILE)',
    );
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const answer = await rl.question(say.confirmQuestion(plan.changes.length, server));
  rl.close();
  return answer.trim() === 'yes';
}

/** What the outcome says, and its exit code. */
function outcomeCode(outcome: ApplyOutcome, color: boolean): ExitCode {
  if (outcome.status === 'no-changes') return ExitCode.ok;
  if (outcome.status === 'refused') return (process.stderr.write(say.refusedText(outcome.overLimit)), ExitCode.refused);
  if (outcome.status === 'stale') return (process.stderr.write(say.staleText(outcome.stale)), ExitCode.stale);
  if (outcome.status === 'cancelled') return (process.stderr.write(say.CANCELLED), ExitCode.error);
  const { summary, stoppedBy } = outcome;
  process.stdout.write(`\n${say.renderApplySummary(summary, { color })}`);
  if (stoppedBy !== null) {
    process.stderr.write(say.unfinishedLine(summary, String(stoppedBy)));
    // Writes still in flight after the wait are abandoned, not waited for again.
    if (outcome.abandoned) process.exit(exitCodeOf(stoppedBy));
    return exitCodeOf(stoppedBy);
  }
  if (summary.failed > 0 || summary.notAttempted > 0) {
    process.stderr.write(say.unfinishedLine(summary, null));
    return ExitCode.error;
  }
  return ExitCode.ok;
}
