/**
 * `netform drift`: plan without applying, once (exit 0 clean, 2 drift, 1 error) or on a schedule
 * (`--every CRON`, one JSON line per run) until SIGTERM or SIGINT (drift-schedule.ts, imported
 * only then: a single check loads neither cron nor the sinks). Never writes to the server.
 */
import { Option, type Command } from 'commander';
import { PLAN_FORMATS, type PlanFormat } from '../../views/plan-formats.js';
import { addAdoptBranchOption, proposeAdoption } from '../adopt-branch.js';
import type { CliContext } from '../command.js';
import { ExitCode } from '../exit.js';
import { addNowOption, judgedAt } from '../flags/now.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';
import { addScheduleOptions, refuseScheduleFlags, type ScheduleOptions } from '../flags/schedule.js';
import { inputOf, type CliIo } from '../io.js';
import { EXIT_WITH_PARENT } from '../signals.js';

export interface DriftOptions extends ConnectionOptions, ScheduleOptions {
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
      opts.every === undefined
        ? driftOnce(opts, cli.io)
        : import('./drift-schedule.js').then(({ driftOnSchedule }) => driftOnSchedule(opts, cli.io)),
    ),
  );
}

async function driftOnce(opts: DriftOptions, io: CliIo): Promise<ExitCode> {
  const { checkDrift } = await import('../../ops/drift.js');
  const { connectorOf, resolveConnection } = await import('../flags/session.js');
  const { fullPlanAt, Timings, useColor } = await import('../output.js');
  refuseScheduleFlags(opts);
  const timings = new Timings(io);
  const connect = connectorOf(resolveConnection(opts, io));
  const instant = judgedAt(io, opts, opts.adoptBranch === undefined ? undefined : '--adopt-branch');
  const input = inputOf(io, () => instant);
  const { plan, status } = await checkDrift({ file: opts.file, connect, input, instant }, timings);
  timings.report();
  // The report's views once there is a plan: a drift check that cannot read its files or server needs none.
  const { renderDrift } = await import('../../views/drift-render.js');
  const color = opts.format === 'text' && useColor(opts, io);
  const output = renderDrift(plan, opts.format, { color, fullPlanAt: fullPlanAt(io.env) });
  io.out.write(output.endsWith('\n') ? output : `${output}\n`);
  if (opts.adoptBranch !== undefined && status === 'drift')
    await proposeAdoption(opts.file, opts.adoptBranch, connect, io, plan.server);
  // Drift: changes, or pending with none planned (src/plan/outcome.ts).
  return status === 'drift' ? ExitCode.changes : ExitCode.ok;
}
