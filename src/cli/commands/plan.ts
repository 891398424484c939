/**
 * `netform plan -f PATH [-o plan.json] [--format text|json|markdown]`: what apply would do.
 * Exit codes: 0 nothing to do, 2 changes or pending (the server does not match), 3 over a safety
 * limit (the plan is printed in full first), 1 error (also when an access test fails: the whole
 * plan is still written, its failures first, but no saved plan: it cannot be applied).
 */
import { Option, type Command } from 'commander';
import type { PlanResult } from '../../ops/plan.js';
import { PLAN_FORMATS, type PlanFormat } from '../../views/plan-formats.js';
import { CliError, ExitCode } from '../exit.js';
import type { CliContext } from '../command.js';
import { addPullRequestOptions, pullRequestOf, type PullRequestOptions } from '../flags/approvals.js';
import { addConnectionOptions } from '../flags/connection.js';
import { addNowOption, judgedAt } from '../flags/now.js';
import { addPlanningOptions, planShaping, type PlanningOptions } from '../flags/planning.js';
import { inputOf, type CliIo } from '../io.js';
import type { Timings } from '../output.js';

/** 3 over a limit; 2 when the server does not match (changes, or pending: src/plan/outcome.ts); else 0. */
function planExitCode({ plan, differs }: PlanResult): ExitCode {
  if (plan.limits.some((l) => l.exceeded)) return ExitCode.refused;
  return differs ? ExitCode.changes : ExitCode.ok;
}

/**
 * A plan whose access test fails: the document goes to stdout (also with `-o -`: a pull-request
 * comment shows the failures), `-o` writes nothing, and the exit code is 1.
 */
function refuseToSave(output: string, failed: number, out: string | undefined, timings: Timings, io: CliIo): never {
  io.out.write(output);
  if (out && out !== '-')
    io.err.write(`-o ${out}: not written: an access test fails, so this plan cannot be applied\n`);
  timings.report();
  throw new CliError(
    `${failed} access test${failed === 1 ? '' : 's'} failed (listed first in the plan); no saved plan was written`,
  );
}

export function registerPlan(program: Command, cli: CliContext): void {
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
    .addOption(new Option('--format <format>', 'output format').choices(PLAN_FORMATS as string[]).default('text'))
    .option(
      '--base <ref>',
      "compare with the same -f path at this git ref (a pull request's base): each change is marked as this pull request's or already there, and what it undoes is listed",
    )
    .option(
      '--base-file <path>',
      "like --base, with the base's desired state at this path (a synthesized cdk.tf.json)",
    );
  addPullRequestOptions(cmd);
  addPlanningOptions(cmd);
  addConnectionOptions(addNowOption(cmd));
  cmd.action(cli.action((opts: PlanCommandOptions) => runPlan(opts, cli.io)));
}

interface PlanCommandOptions extends PlanningOptions, PullRequestOptions {
  file: string;
  out?: string;
  format: PlanFormat;
  base?: string;
  baseFile?: string;
  now?: string;
}

async function runPlan(opts: PlanCommandOptions, io: CliIo): Promise<ExitCode> {
  const { planAgainstServer } = await import('../../ops/plan.js');
  const { formatDiagnostic } = await import('../../views/diagnostics.js');
  const { connectorOf, resolveConnection } = await import('../flags/session.js');
  const { refuseOverwritingInput, Timings } = await import('../output.js');
  const instant = judgedAt(io, opts, opts.out ? '-o' : undefined);
  if (opts.out) refuseOverwritingInput(opts.out, opts.file);
  if (opts.base !== undefined && opts.baseFile !== undefined)
    throw new CliError('give --base REF or --base-file PATH, not both');
  const base =
    opts.base !== undefined ? { ref: opts.base } : opts.baseFile !== undefined ? { file: opts.baseFile } : undefined;
  const timings = new Timings(io);
  const connection = resolveConnection(opts, io);
  const request = {
    ...planShaping(opts),
    file: opts.file,
    input: inputOf(io, () => instant),
    base,
    connect: connectorOf(connection),
    runTests: true,
    accessDelta: opts.format === 'json' || opts.out !== undefined,
    instant,
    routeOwners: true,
    pullRequest: pullRequestOf(opts, io),
    // A plan needs no production secret: a variable unset here is read at apply, not pinned.
    unreadableSecrets: 'unpin' as const,
  };
  const warning = (d: Parameters<typeof formatDiagnostic>[0]) => io.err.write(`warning: ${formatDiagnostic(d)}\n`);
  const result = await planAgainstServer(request, { phase: timings.phase, warning });
  const { plan } = result;
  const started = performance.now();
  // What shows and saves a plan: loaded once there is one (a plan whose files or server fail needs none of it).
  const { elapsedSince } = await import('../../ops/events.js');
  const { wordedPlan } = await import('../../views/notes.js');
  const { renderPlan } = await import('../../views/plan.js');
  const { fullPlanAt, useColor, wholeOutput, writeSavedPlan } = await import('../output.js');
  // `-o -`: the saved plan goes to stdout, so the plan for people goes to stderr.
  const toStdout = opts.out === '-';
  const shownOn = toStdout ? 'err' : 'out';
  // A plan whose access test fails is shown whole, failures first, but cannot be applied.
  const testsFail = (plan.tests?.failed ?? 0) > 0;
  // The JSON document is a saved plan, sealed with NETFORM_PLAN_KEY or the token (src/plan/planfile.ts);
  // not when a test fails: that plan cannot be applied.
  const sealing = !testsFail && (opts.format === 'json' || opts.out);
  const seal = sealing ? (await import('../flags/plan-key.js')).planKeyOf(connection, io) : undefined;
  // The saved-plan writer (and the plan schema it checks against) only when a plan is saved.
  const savedPlanJson = seal ? (await import('../../plan/planfile.js')).savedPlanJson : undefined;
  const output =
    opts.format === 'json' && savedPlanJson
      ? wholeOutput(opts.out ? 'saved_plan' : 'plan_json', () => savedPlanJson(wordedPlan(plan), seal!))
      : renderPlan(plan, opts.format, {
          color: opts.format === 'text' && useColor(opts, io, shownOn),
          fullPlanAt: fullPlanAt(io.env),
        });
  timings.phase('render', elapsedSince(started));
  if (testsFail) return refuseToSave(output, plan.tests!.failed, opts.out, timings, io);
  if (!(toStdout && opts.format === 'json')) io[shownOn].write(output);
  const saved = () => wholeOutput('saved_plan', () => savedPlanJson!(wordedPlan(plan), seal!));
  if (opts.out) writeSavedPlan(opts.out, opts.format === 'json' ? output : saved(), io);
  timings.report();
  return planExitCode(result);
}
