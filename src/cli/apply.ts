/**
 * `netform apply -f PATH` plans and applies; `netform apply plan.json` applies a saved plan
 * exactly, and refuses it (exit 4, nothing changed) when anything it touches changed since.
 * `netform apply -f PATH --reviewed PLANFILE` plans again and writes only what the reviewed plan
 * shows, identically (src/plan/reviewed.ts); the rest is withheld and listed.
 * Exit codes: 0 done, 1 error or a failed write, 3 over a safety limit, 4 stale saved plan,
 * 5 changes withheld as not reviewed (the reviewed ones were applied).
 */
import { createInterface } from 'node:readline/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidArgumentError, type Command } from 'commander';
import {
  applyPlan,
  findStaleChanges,
  readSavedPlan,
  readSavedPlanSecrets,
  SavedPlanError,
  ServerGoneBreaker,
  type ApplySummary,
  type ChangeResult,
} from '../apply/index.js';
import { progressReporter, seconds } from './apply-progress.js';
import { resolveSecret, SecretResolutionError, workingContainment } from '../desired/index.js';
import type { SecretRef } from '../model/secret.js';
import type { PlanKey } from '../plan/seal.js';
import type { Plan } from '../plan/types.js';
import { intersectReviewed, ReviewedPlanError } from '../plan/reviewed.js';
import { planAccessChanges } from '../access/plan.js';
import { renderWithheld, withheldCount } from '../render/reviewed.js';
import { applySummaryLine, renderApplySummary } from '../render/apply.js';
import { limitLine, renderPlan } from '../render/index.js';
import { addConnectionOptions, openConnection, planKeyOf, readLiveState, type Connection } from './connection.js';
import { refuseFailingTests } from './access.js';
import { action } from './boundary.js';
import { inertText } from '../render/escape.js';
import { CliError, ExitCode } from './exit.js';
import { nowManagedLimit } from '../plan/defaults.js';
import { addPlanningOptions, loadDesired, makePlan, reportTimings, useColor, type PlanningOptions } from './plan.js';

interface ApplyCommandOptions extends PlanningOptions {
  yes?: boolean;
  reviewed?: string;
  parallelism: number;
  allowNowManaged?: boolean;
}

function timeoutOf(opts: ApplyCommandOptions): number {
  const seconds = Number(opts.timeout ?? '30');
  return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 30_000;
}

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1)
    throw new InvalidArgumentError('expected a whole number, 1 or more');
  return Number(value);
}

export function registerApply(program: Command): void {
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
    .option('--parallelism <n>', 'writes at once', positiveInteger, 8)
    .option(
      '--allow-now-managed',
      'with -f: make changes that exist only because the files leave a field out, which means its default (refused otherwise, exit 3)',
    );
  addPlanningOptions(cmd);
  addConnectionOptions(cmd);
  cmd.action(
    action(async (savedPlanPath: string | undefined, opts: ApplyCommandOptions) => {
      if (savedPlanPath && opts.file) throw new CliError('give either a saved plan or -f PATH, not both');
      if (!savedPlanPath && !opts.file)
        throw new CliError(
          'nothing to apply: pass -f PATH (desired state) or the path of a saved plan from `netform plan -o`',
        );
      if (savedPlanPath && (opts.replace || opts.rotatePasswords)) {
        throw new CliError(
          '--replace and --rotate-passwords shape a plan: pass them to `netform plan`; a saved plan is applied exactly as it was made',
        );
      }
      if (opts.reviewed && !opts.file)
        throw new CliError(
          '--reviewed goes with -f PATH: the files are planned again and only the reviewed changes are written',
        );
      // Saved plans are sealed under NETFORM_PLAN_KEY or the token: checked before anything is opened.
      const key = savedPlanPath || opts.reviewed ? planKeyOf(opts) : undefined;
      const saved = savedPlanPath ? { plan: readPlanFile(savedPlanPath, key!), key: key! } : undefined;
      const reviewed = opts.reviewed ? readPlanFile(opts.reviewed, key!) : undefined;
      const desired = saved ? undefined : await loadDesired(opts.file!);
      if (desired) refuseFailingTests(desired.state);
      const run = watchSignals(timeoutOf(opts));
      const connection = await openConnection(opts, run.controller.signal);
      try {
        return desired
          ? await planAndApply(desired, opts, connection, run, reviewed)
          : await applySaved(saved!, opts, connection, run);
      } finally {
        run.dispose();
        await connection.close();
      }
    }),
  );
}

function readPlanFile(path: string, key: PlanKey): Plan {
  try {
    return readSavedPlan(path, key);
  } catch (error) {
    if (error instanceof SavedPlanError) throw new CliError(error.message);
    throw error;
  }
}

async function planAndApply(
  desired: Awaited<ReturnType<typeof loadDesired>>,
  opts: ApplyCommandOptions,
  connection: Connection,
  run: ApplyRun,
  reviewed?: Plan,
): Promise<ExitCode> {
  if (reviewed) return applyReviewed(desired, reviewed, opts, connection, run);
  const { plan, timings } = await makePlan(desired, opts, connection);
  const color = useColor(opts);
  process.stdout.write(renderPlan(plan, 'text', { color }));
  reportTimings(timings);
  // Changes that exist only because a left-out field now means its default: a safety limit (src/plan/defaults.ts).
  const nowManaged = nowManagedLimit(plan.changes, opts.allowNowManaged === true);
  const overLimit = [...plan.limits.filter((l) => l.exceeded).map(limitLine), ...(nowManaged ? [nowManaged] : [])];
  return confirmAndApply(plan, overLimit, opts, connection, run);
}

/**
 * `apply -f PATH --reviewed PLANFILE`: the files planned again, and of that plan only what the
 * reviewed plan shows identically is written, unasked (the review was the approval). The rest is
 * listed before any write, and makes the exit code 5 once the reviewed changes are applied.
 */
async function applyReviewed(
  desired: Awaited<ReturnType<typeof loadDesired>>,
  reviewed: Plan,
  opts: ApplyCommandOptions,
  connection: Connection,
  run: ApplyRun,
): Promise<ExitCode> {
  const reading = readLiveState(connection, { configuration: desired.state.configuration !== undefined });
  const { plan: fresh, timings } = await makePlan(desired, opts, connection, reading);
  let result: ReturnType<typeof intersectReviewed>;
  try {
    result = intersectReviewed(fresh, reviewed);
  } catch (error) {
    if (error instanceof ReviewedPlanError) throw new CliError(error.message);
    throw error;
  }
  const plan = result.plan;
  plan.access = planAccessChanges(plan, await reading, desired.state);
  const color = useColor(opts);
  process.stdout.write(
    renderPlan(plan, 'text', {
      color,
      noChangesLine:
        result.withheld.length > 0
          ? 'Nothing to apply: no change of the plan is in the reviewed plan as it is now.'
          : undefined,
    }),
  );
  process.stdout.write(renderWithheld(result, { color }));
  reportTimings(timings);
  const code = await confirmAndApply(
    plan,
    plan.limits.filter((l) => l.exceeded).map(limitLine),
    opts,
    connection,
    run,
    undefined,
    true,
  );
  if (result.withheld.length === 0) return code;
  process.stderr.write(
    `Withheld ${withheldCount(result.withheld.length)} that the reviewed plan does not show as ${result.withheld.length === 1 ? 'it is' : 'they are'} now (listed above): none of ${result.withheld.length === 1 ? 'it was' : 'them were'} written. ` +
      'Review them (netform plan -f PATH shows them), then apply them in a run a maintainer approves.\n',
  );
  return code === ExitCode.ok ? ExitCode.unreviewed : code;
}

async function applySaved(
  { plan, key }: { plan: Plan; key: PlanKey },
  opts: ApplyCommandOptions,
  connection: Connection,
  run: ApplyRun,
): Promise<ExitCode> {
  if (plan.server !== connection.url) {
    throw new CliError(
      `the saved plan was made against ${plan.server}, not ${connection.url}; plan again against this server`,
    );
  }
  const color = useColor(opts);
  process.stdout.write(renderPlan(plan, 'text', { color }));
  if (plan.changes.length === 0) return ExitCode.ok;
  const secrets = readSecretsAgain(plan, key);
  const live = await readLiveState(connection, { configuration: plan.changes.some((c) => c.kind === 'configuration') });
  // A secret that changed since the plan makes its change stale, as a changed object does.
  const changedOnServer = findStaleChanges(plan, live);
  const stale = [...changedOnServer, ...secrets.changed];
  if (stale.length > 0) {
    const what =
      secrets.changed.length === 0
        ? 'the server changed'
        : changedOnServer.length === 0
          ? 'a secret it sends changed'
          : 'the server and a secret it sends changed';
    process.stderr.write(
      `The saved plan is stale: ${what} since it was made. Nothing was changed.\n${stale.map((s) => `  - ${inertText(s)}`).join('\n')}\nRun netform plan again.\n`,
    );
    return ExitCode.stale;
  }
  // The limits as the plan recorded them, unless lifted again for this run.
  const overLimit = plan.limits
    .map((limit) => {
      const override = limit.kind === 'delete' ? opts.allowDeletes : opts.allowUpdates;
      const allowed = override ?? limit.allowed;
      return limit.planned > allowed
        ? limitLine({
            ...limit,
            allowed,
            exceeded: true,
            source: override !== undefined ? `--allow-${limit.kind}s ${override}` : limit.source,
          })
        : null;
    })
    .filter((line): line is string => line !== null);
  return confirmAndApply(plan, overLimit, opts, connection, run, secrets.values);
}

/**
 * Every secret a saved plan will send is read here, within the repository apply runs in (never a
 * folder the plan names), before anything is written, and compared with the plan's HMAC of it: one
 * that cannot be read refuses the plan (nothing is written); the values read are the ones sent.
 */
function readSecretsAgain(plan: Plan, key: PlanKey): ReturnType<typeof readSavedPlanSecrets> {
  const within = workingContainment();
  const secrets = readSavedPlanSecrets(plan, key, (ref) => {
    try {
      return { value: resolveSecret(ref, process.env, { within }) };
    } catch (error) {
      if (!(error instanceof SecretResolutionError)) throw error;
      return { problem: error.message };
    }
  });
  const problems = new Set(secrets.unreadable);
  if (problems.size > 0)
    throw new CliError(
      `the saved plan's secrets cannot be read here; nothing was changed:\n${[...problems].map((p) => `  - ${p}`).join('\n')}`,
    );
  return secrets;
}

async function confirmAndApply(
  plan: Plan,
  overLimit: string[],
  opts: ApplyCommandOptions,
  connection: Connection,
  run: ApplyRun,
  savedSecrets?: Map<SecretRef, string>,
  /** Apply without asking: a saved plan, or the reviewed changes of `--reviewed` (the review was the approval). */
  unasked = savedSecrets !== undefined,
): Promise<ExitCode> {
  if (overLimit.length > 0) {
    process.stderr.write(
      `Refused: the plan is over a safety limit. Nothing was changed.\n${overLimit.map((l) => `  - ${inertText(l)}`).join('\n')}\n`,
    );
    return ExitCode.refused;
  }
  if (plan.changes.length === 0) return ExitCode.ok;
  // Writing a saved plan was the approval (as with `terraform apply PLANFILE`): it is applied unasked.
  if (!opts.yes && !unasked) {
    if (!process.stdin.isTTY) {
      throw new CliError(
        'refusing to apply without confirmation: there is no terminal to ask on; pass --yes to apply unattended, or apply a saved plan (netform plan -o FILE, then netform apply FILE)',
      );
    }
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    const answer = await rl.question(
      `\nApply these ${plan.changes.length} change(s) to ${connection.url}? Only "yes" applies: `,
    );
    rl.close();
    if (answer.trim() !== 'yes') {
      process.stderr.write('Apply cancelled. Nothing was changed.\n');
      return ExitCode.error;
    }
  }
  return writeChanges(plan, opts, connection, run, savedSecrets);
}

/**
 * The writes, watched: per-write progress, a breaker for a server that went away, and the first
 * SIGINT/SIGTERM stopping new writes (the second exits at once). Ends with the summary.
 */
async function writeChanges(
  plan: Plan,
  opts: ApplyCommandOptions,
  connection: Connection,
  run: ApplyRun,
  savedSecrets?: Map<SecretRef, string>,
): Promise<ExitCode> {
  // A saved plan sends the secrets read and checked against its HMACs (readSecretsAgain), within the
  // repository apply runs in; -f resolves each at write time, within its declaring file's repository.
  const resolveAtWrite = (ref: SecretRef): string => {
    if (!savedSecrets) return resolveSecret(ref, process.env);
    const value = savedSecrets.get(ref);
    if (value === undefined) throw new Error('a secret of the saved plan was not read before the writes');
    return value;
  };
  run.arm();
  const writesStarted = performance.now();
  const reporter = progressReporter({ total: plan.changes.length, terminal: process.stderr.isTTY === true });
  const breaker = new ServerGoneBreaker();
  const settled = new Map<string, ChangeResult>();
  let announcedBreak = false;
  const stopReason = (): string | null => {
    if (run.signal) return `not started: apply was interrupted (${run.signal})`;
    const reason = breaker.tripped;
    if (reason && !announcedBreak) {
      announcedBreak = true;
      process.stderr.write(`${reason}: starting no new writes\n`);
    }
    return reason ? `not started: ${reason}` : null;
  };
  const applying = applyPlan(plan, {
    client: connection.client,
    parallelism: opts.parallelism,
    resolveSecret: resolveAtWrite,
    onProgress: reporter.onProgress,
    onStart: reporter.onStart,
    onSettled: (result, detail) => {
      settled.set(result.id, result);
      breaker.observe(result, detail.error);
      reporter.onSettled(result, detail);
    },
    shouldStart: stopReason,
  });
  run.onInterrupt = () => {
    const waiting = reporter.inFlight().size;
    process.stderr.write(
      `${run.signal}: starting no new writes; waiting up to ${seconds(run.timeoutMs)} for the ${waiting} in flight (send it again to exit at once)\n`,
    );
  };
  // After an interrupt, writes in flight get at most one request timeout to finish.
  const summary = await Promise.race([
    applying,
    run.interrupted.then(() => sleep(run.timeoutMs + 1000, null, { ref: false })),
  ]);
  reporter.stop();
  if (process.env.NETFORM_TIMINGS)
    process.stderr.write(
      `netform-write-timings ${JSON.stringify({ writes: Math.round(performance.now() - writesStarted) })}\n`,
    );
  const final = summary ?? summaryOf(plan, settled, reporter.inFlight());
  process.stdout.write(`\n${renderApplySummary(final, { color: useColor(opts) })}`);
  if (run.signal) {
    process.stderr.write(
      `Interrupted by ${run.signal}. ${applySummaryLine(final)} Running apply again finishes what is left.\n`,
    );
    const code = run.signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated;
    // Writes still in flight after the wait are abandoned, not waited for again.
    if (summary === null) process.exit(code);
    return code;
  }
  if (final.failed > 0 || final.notAttempted > 0) {
    process.stderr.write(`${applySummaryLine(final)} Running apply again retries what is left.\n`);
    return ExitCode.error;
  }
  return ExitCode.ok;
}

/** The summary when the writes in flight did not finish in time: those are reported as unknown. */
function summaryOf(plan: Plan, settled: Map<string, ChangeResult>, inFlight: ReadonlySet<string>): ApplySummary {
  const results = plan.changes.map((change): ChangeResult => {
    const done = settled.get(change.id);
    if (done) return done;
    const label = change.label ?? `${change.kind} ${change.key}`;
    if (inFlight.has(change.id))
      return {
        id: change.id,
        label,
        action: change.action,
        status: 'failed',
        message: 'still in flight when apply stopped waiting: its outcome is unknown (netform plan shows it)',
      };
    return {
      id: change.id,
      label,
      action: change.action,
      status: 'not_attempted',
      message: 'not started: apply was interrupted',
    };
  });
  return {
    results,
    done: results.filter((r) => r.status === 'done').length,
    failed: results.filter((r) => r.status === 'failed').length,
    notAttempted: results.filter((r) => r.status === 'not_attempted').length,
  };
}

/**
 * One apply's signal state. Before the writes start a signal ends the process as usual (nothing
 * was written); during them the first one stops new writes and the second exits at once.
 */
interface ApplyRun {
  controller: AbortController;
  signal: NodeJS.Signals | null;
  interrupted: Promise<void>;
  onInterrupt: () => void;
  timeoutMs: number;
  /** Takes over SIGINT/SIGTERM (when the writes start). */
  arm(): void;
  dispose(): void;
}

function watchSignals(timeoutMs: number): ApplyRun {
  const controller = new AbortController();
  let resolveInterrupted!: () => void;
  const run: ApplyRun = {
    controller,
    signal: null,
    interrupted: new Promise<void>((resolve) => (resolveInterrupted = resolve)),
    onInterrupt: () => {},
    timeoutMs,
    arm: () => {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    },
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (run.signal) {
      process.stderr.write(
        `${signal} again: exiting now. Writes in flight may or may not have happened; netform plan shows where the server is.\n`,
      );
      process.exit(signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated);
    }
    run.signal = signal;
    controller.abort();
    run.onInterrupt();
    resolveInterrupted();
  };
  return run;
}
