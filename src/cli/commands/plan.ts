/**
 * `netform plan -f PATH [-o plan.json] [--format text|json|markdown]`: what apply would do.
 * Exit codes: 0 nothing to do, 2 changes pending, 3 over a safety limit (the plan is printed in
 * full first), 1 error.
 */
import { Option, type Command } from 'commander';
import { elapsedSince } from '../../ops/events.js';
import { planAgainstServer } from '../../ops/plan.js';
import type { Plan } from '../../plan/types.js';
import { PLAN_FORMATS, renderPlan, type PlanFormat } from '../../views/plan.js';
import { action } from '../boundary.js';
import { ExitCode } from '../exit.js';
import { addConnectionOptions, connectorOf } from '../flags/connection.js';
import { addPlanningOptions, planShaping, type PlanningOptions } from '../flags/planning.js';
import { fullPlanAt, refuseOverwritingInput, Timings, useColor, writeSavedPlan } from '../output.js';

function planExitCode(plan: Plan): ExitCode {
  if (plan.limits.some((l) => l.exceeded)) return ExitCode.refused;
  return plan.changes.length > 0 ? ExitCode.changes : ExitCode.ok;
}

export function registerPlan(program: Command): void {
  const cmd = program
    .command('plan')
    .description(
      'show what apply would change on the server; exit 0 nothing to do, 2 changes, 3 over a safety limit, 1 error',
    )
    .requiredOption(
      '-f, --file <path>',
      'desired state: a YAML file, a folder of YAML files, a cdk.tf.json, or - for a YAML stream on stdin',
    )
    .option(
      '-o, --out <path>',
      'also write the plan as a saved plan (JSON) for `netform apply <path>`; - writes it to stdout (the plan for people then goes to stderr)',
    )
    .addOption(new Option('--format <format>', 'output format').choices(PLAN_FORMATS as string[]).default('text'));
  addPlanningOptions(cmd);
  addConnectionOptions(cmd);
  cmd.action(
    action(async (opts: PlanningOptions & { file: string; out?: string; format: PlanFormat }) => {
      if (opts.out) refuseOverwritingInput(opts.out, opts.file);
      const timings = new Timings();
      const request = { ...planShaping(opts), file: opts.file, connect: connectorOf(opts), refuseFailingTests: true };
      const { plan } = await planAgainstServer(request, timings);
      const started = performance.now();
      // `-o -`: the saved plan goes to stdout, so the plan for people goes to stderr.
      const toStdout = opts.out === '-';
      const shownOn = toStdout ? process.stderr : process.stdout;
      const output = renderPlan(plan, opts.format, {
        color: opts.format === 'text' && useColor(opts, shownOn),
        fullPlanAt: fullPlanAt(),
      });
      timings.phase('render', elapsedSince(started));
      if (!(toStdout && opts.format === 'json')) shownOn.write(output);
      if (opts.out)
        writeSavedPlan(opts.out, opts.format === 'json' ? output : renderPlan(plan, 'json', { color: false }));
      timings.report();
      return planExitCode(plan);
    }),
  );
}
