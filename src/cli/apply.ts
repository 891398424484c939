/**
 * `netform apply -f PATH` plans and applies; `netform apply plan.json` applies a saved plan
 * exactly, and refuses it (exit 4, nothing changed) when anything it touches changed since.
 * Exit codes: 0 done, 1 error or a failed write, 3 over a safety limit, 4 stale saved plan.
 */
import { createInterface } from 'node:readline/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { applyPlan, findStaleChanges, readSavedPlan, SavedPlanError, type ApplyProgress } from '../apply/index.js';
import { resolveSecret } from '../desired/index.js';
import type { Plan } from '../plan/types.js';
import { applySummaryLine, renderApplySummary } from '../render/apply.js';
import { limitLine, renderPlan } from '../render/index.js';
import { addConnectionOptions, openConnection, readLiveState, type Connection } from './connection.js';
import { action, CliError, ExitCode } from './exit.js';
import { addPlanningOptions, loadDesired, makePlan, reportTimings, useColor, type PlanningOptions } from './plan.js';

interface ApplyCommandOptions extends PlanningOptions {
  yes?: boolean;
  parallelism: number;
}

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError('expected a whole number, 1 or more');
  return Number(value);
}

export function registerApply(program: Command): void {
  const cmd = program
    .command('apply [saved-plan]')
    .description('make the server match the desired state (-f PATH), or apply a saved plan exactly; exit 0 done, 1 error or failed writes, 3 over a safety limit, 4 stale saved plan')
    .option('-f, --file <path>', 'desired state to plan and apply: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option('-y, --yes', 'apply without asking for confirmation (needed without a terminal)')
    .option('--parallelism <n>', 'writes at once', positiveInteger, 8);
  addPlanningOptions(cmd);
  addConnectionOptions(cmd);
  cmd.action(
    action(async (savedPlanPath: string | undefined, opts: ApplyCommandOptions) => {
      if (savedPlanPath && opts.file) throw new CliError('give either a saved plan or -f PATH, not both');
      if (!savedPlanPath && !opts.file) throw new CliError('nothing to apply: pass -f PATH (desired state) or the path of a saved plan from `netform plan -o`');
      if (savedPlanPath && (opts.replace || opts.rotatePasswords)) {
        throw new CliError('--replace and --rotate-passwords shape a plan: pass them to `netform plan`; a saved plan is applied exactly as it was made');
      }
      let saved: Plan | undefined;
      if (savedPlanPath) {
        try {
          saved = readSavedPlan(savedPlanPath);
        } catch (error) {
          if (error instanceof SavedPlanError) throw new CliError(error.message);
          throw error;
        }
      }
      const desired = saved ? undefined : await loadDesired(opts.file!);
      const connection = await openConnection(opts);
      try {
        return desired ? await planAndApply(desired, opts, connection) : await applySaved(saved!, opts, connection);
      } finally {
        await connection.close();
      }
    }),
  );
}

async function planAndApply(desired: Awaited<ReturnType<typeof loadDesired>>, opts: ApplyCommandOptions, connection: Connection): Promise<ExitCode> {
  const { plan, timings } = await makePlan(desired, opts, connection);
  const color = useColor(opts);
  process.stdout.write(renderPlan(plan, 'text', { color }));
  reportTimings(timings);
  return confirmAndApply(plan, plan.limits.filter((l) => l.exceeded).map(limitLine), opts, connection);
}

async function applySaved(plan: Plan, opts: ApplyCommandOptions, connection: Connection): Promise<ExitCode> {
  if (plan.server !== connection.url) {
    throw new CliError(`the saved plan was made against ${plan.server}, not ${connection.url}; plan again against this server`);
  }
  const color = useColor(opts);
  process.stdout.write(renderPlan(plan, 'text', { color }));
  if (plan.changes.length === 0) return ExitCode.ok;
  const live = await readLiveState(connection, { configuration: plan.changes.some((c) => c.kind === 'configuration') });
  const stale = findStaleChanges(plan, live);
  if (stale.length > 0) {
    process.stderr.write(`The saved plan is stale: the server changed since it was made. Nothing was changed.\n${stale.map((s) => `  - ${s}`).join('\n')}\nRun netform plan again.\n`);
    return ExitCode.stale;
  }
  // The limits as the plan recorded them, unless lifted again for this run.
  const overLimit = plan.limits
    .map((limit) => {
      const override = limit.kind === 'delete' ? opts.allowDeletes : opts.allowUpdates;
      const allowed = override ?? limit.allowed;
      return limit.planned > allowed ? limitLine({ ...limit, allowed, exceeded: true, source: override !== undefined ? `--allow-${limit.kind}s ${override}` : limit.source }) : null;
    })
    .filter((line): line is string => line !== null);
  return confirmAndApply(plan, overLimit, opts, connection);
}

async function confirmAndApply(plan: Plan, overLimit: string[], opts: ApplyCommandOptions, connection: Connection): Promise<ExitCode> {
  if (overLimit.length > 0) {
    process.stderr.write(`Refused: the plan is over a safety limit. Nothing was changed.\n${overLimit.map((l) => `  - ${l}`).join('\n')}\n`);
    return ExitCode.refused;
  }
  if (plan.changes.length === 0) return ExitCode.ok;
  if (!opts.yes) {
    if (!process.stdin.isTTY) {
      throw new CliError('refusing to apply without confirmation: there is no terminal to ask on; pass --yes to apply unattended');
    }
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    const answer = await rl.question(`\nApply these ${plan.changes.length} change(s) to ${connection.url}? Only "yes" applies: `);
    rl.close();
    if (answer.trim() !== 'yes') {
      process.stderr.write('Apply cancelled. Nothing was changed.\n');
      return ExitCode.error;
    }
  }
  const progress = progressLine(plan.changes.length);
  const summary = await applyPlan(plan, {
    client: connection.client,
    parallelism: opts.parallelism,
    resolveSecret: (ref) => resolveSecret(ref, process.env),
    onProgress: progress.update,
  });
  progress.clear();
  process.stdout.write(`\n${renderApplySummary(summary, { color: useColor(opts) })}`);
  if (summary.failed > 0 || summary.notAttempted > 0) {
    process.stderr.write(`${applySummaryLine(summary)} Running apply again retries what is left.\n`);
    return ExitCode.error;
  }
  return ExitCode.ok;
}

/** One line on a terminal's stderr showing how far a long apply is; nothing elsewhere. */
function progressLine(total: number): { update: (p: ApplyProgress) => void; clear: () => void } {
  const stream = process.stderr;
  if (!stream.isTTY || total < 10) return { update: () => {}, clear: () => {} };
  let last = 0;
  let shown = false;
  return {
    update: (p) => {
      const now = Date.now();
      if (now - last < 100 && p.settled < p.total) return;
      last = now;
      shown = true;
      stream.write(`\r\x1b[2KApplying: ${p.settled}/${p.total} settled${p.failed ? `, ${p.failed} failed` : ''}`);
    },
    clear: () => {
      if (shown) stream.write('\r\x1b[2K');
    },
  };
}
