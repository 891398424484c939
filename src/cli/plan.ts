/**
 * `netform plan -f PATH [-o plan.json] [--format text|json|markdown]`: what apply would do.
 * Exit codes: 0 nothing to do, 2 changes pending, 3 over a safety limit (the plan is printed in
 * full first), 1 error.
 */
import { statSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { formatDiagnostic, loadDesiredState, type LoadResult } from '../desired/index.js';
import { GitRefError, loadDesiredStateAtRef } from '../desired/git-ref.js';
import { compareWithBase } from '../plan/base.js';
import type { PlanBase } from '../plan/types.js';
import { ApiError, fetchConfiguration } from '../client/index.js';
import type { DesiredState, LiveState } from '../model/state.js';
import { planChanges, PlanError, type Plan } from '../plan/index.js';
import { isPending } from '../plan/outcome.js';
import { liveKeyIds, normalizeTarget, targetPlan, TargetError } from '../plan/target.js';
import { indexLiveState } from '../plan/live-index.js';
import { PLAN_FORMATS, renderPlan, type PlanFormat } from '../render/index.js';
import {
  addConnectionOptions,
  openConnection,
  planKeyOf,
  readLiveState,
  type Connection,
  type ConnectionOptions,
} from './connection.js';
import { accessChangesAfter, planAccessChanges } from '../access/plan.js';
import { portRuleWarnings } from '../access/tests.js';
import { refuseFailingTests } from './access.js';
import { action } from './boundary.js';
import { CliError, ExitCode } from './exit.js';

export interface PlanningOptions extends ConnectionOptions {
  file?: string;
  allowDeletes?: number;
  allowUpdates?: number;
  replace?: boolean;
  rotatePasswords?: boolean;
  color?: boolean;
  target?: string[];
}

export interface Timings {
  load: number;
  fetch: number;
  diff: number;
  /** Computing the plan's access changes. */
  access?: number;
  render?: number;
  /** Resident memory (MB) at the end of each phase, to see which one needs the memory. */
  rss_mb: Record<string, number>;
}

function rssMb(): number {
  return Math.round(process.memoryUsage.rss() / 1048576);
}

export function nonNegativeInteger(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('expected a whole number, 0 or more');
  return Number(value);
}

/** Options shared by plan and apply -f: what to plan and how. */
export function addPlanningOptions(cmd: Command): Command {
  return cmd
    .option(
      '--allow-deletes <n>',
      'allow up to N deletions (cascades included) in this run, whatever the limits say',
      nonNegativeInteger,
    )
    .option(
      '--allow-updates <n>',
      'allow up to N updates (replacements included) in this run, whatever the limits say',
      nonNegativeInteger,
    )
    .option(
      '--replace',
      'plan device changes that Firezone 0.7.26+ ignores on update as delete-then-create, keeping keys and addresses',
    )
    .option('--rotate-passwords', 'send declared passwords to existing users too (normally only on create)')
    .option(
      '--target <key>',
      'limit the plan to this object and what it needs (user:EMAIL, device:EMAIL/NAME, rule:KEY); repeatable',
      (v: string, all: string[] = []) => [...all, v],
    )
    .option('--no-color', 'no colours in the output');
}

/** Whether text output gets colours: a terminal, no NO_COLOR, no --no-color. */
export function useColor(opts: { color?: boolean }, stream: NodeJS.WriteStream = process.stdout): boolean {
  return opts.color !== false && stream.isTTY === true && !('NO_COLOR' in process.env && process.env.NO_COLOR !== '');
}

/**
 * Where the full plan is, for a markdown comment that had to leave changes out: in a GitHub
 * Actions run, that run's page (its artifacts); elsewhere NETFORM_FULL_PLAN_AT if set.
 */
export function fullPlanAt(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NETFORM_FULL_PLAN_AT) return env.NETFORM_FULL_PLAN_AT;
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID) {
    return `the artifacts of ${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`;
  }
  return undefined;
}

/** Reads the desired state; errors name file, line and column. Done before connecting, so bad files touch no server. */
export async function loadDesired(
  file: string,
  load: (path: string) => Promise<LoadResult> = loadDesiredState,
): Promise<{ state: DesiredState; ms: number; rss: number }> {
  const started = performance.now();
  const loaded = await load(file);
  if (!loaded.ok) {
    throw new CliError(
      `the desired state has errors:\n${loaded.diagnostics.map((d) => `  ${formatDiagnostic(d)}`).join('\n')}`,
    );
  }
  return { state: loaded.state, ms: elapsedSince(started), rss: rssMb() };
}

function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

/**
 * The desired state, a connection, and the server's state being read: at the same time against a
 * remote server (it prepares its lists while the files are parsed), so a plan costs little more
 * than the slower of the two. Bad files still stop the command with their own errors before
 * anything is written; with --embedded (or no usable connection) the files are read first, so
 * that bad files touch no database.
 */
export async function loadDesiredAndLive(
  file: string,
  opts: ConnectionOptions,
  load?: (path: string) => Promise<LoadResult>,
  cancel?: AbortSignal,
): Promise<{ desired: LoadedDesired; connection: Connection; live: Promise<LiveState> }> {
  if (opts.embedded) {
    const desired = await loadDesired(file, load);
    const connection = await openConnection(opts, undefined, cancel);
    return { desired, connection, live: readLiveState(connection) };
  }
  let connection: Connection;
  // Bad files make the reads pointless: they are abandoned (no retries of a server that is down).
  // Abandoning is safe in any state of a read (not started, in flight, ended): see the client's
  // linkedAbort, which keeps an abort from reaching a request whose exchange is over.
  const unwanted = new AbortController();
  const abandon = cancel ? AbortSignal.any([unwanted.signal, cancel]) : unwanted.signal;
  try {
    connection = await openConnection(opts, undefined, abandon);
  } catch (error) {
    await loadDesired(file, load); // the files' errors come first
    throw error;
  }
  const lists = readLiveState(connection);
  lists.catch(() => {}); // awaited by makePlan; when the files fail, their errors are the answer
  try {
    const desired = await loadDesired(file, load);
    // `configuration:` is read only when declared, which is known now.
    const live = desired.state.configuration === undefined ? lists : withConfiguration(lists, connection);
    return { desired, connection, live };
  } catch (error) {
    unwanted.abort();
    await connection.close();
    throw error;
  }
}

async function withConfiguration(lists: Promise<LiveState>, connection: Connection): Promise<LiveState> {
  const [live, configuration] = await Promise.all([
    lists,
    fetchConfiguration(connection.client, 'required').catch((error: unknown) => {
      if (error instanceof ApiError) throw new CliError(`cannot read the server's state: ${error.message}`);
      throw error;
    }),
  ]);
  return configuration ? { ...live, configuration } : live;
}

/** `--target` values in the plan's key notation, checked before anything is read. */
export function checkTargets(opts: PlanningOptions): void {
  try {
    opts.target?.forEach(normalizeTarget);
  } catch (error) {
    if (error instanceof TargetError) throw new CliError(error.message);
    throw error;
  }
}

export type LoadedDesired = Awaited<ReturnType<typeof loadDesired>>;

/** Reads the live state (one list call per collection; or waits for `reading`, started earlier) and plans against it. */
export async function makePlan(
  desired: LoadedDesired,
  opts: PlanningOptions,
  connection: Connection,
  reading?: Promise<LiveState>,
): Promise<{ plan: Plan; timings: Timings }> {
  let started = performance.now();
  checkTargets(opts);
  const live = await (reading ??
    readLiveState(connection, { configuration: desired.state.configuration !== undefined }));
  const fetch = elapsedSince(started);
  const fetchRss = rssMb();
  started = performance.now();
  try {
    const whole = planChanges(desired.state, live, planOptionsOf(opts, connection));
    const plan = opts.target?.length ? targetPlan(whole, opts.target, liveKeyIds(indexLiveState(live))) : whole;
    const diff = elapsedSince(started);
    started = performance.now();
    plan.access = planAccessChanges(plan, live, desired.state);
    const access = elapsedSince(started);
    return {
      plan,
      timings: { load: desired.ms, fetch, diff, access, rss_mb: { load: desired.rss, fetch: fetchRss, diff: rssMb() } },
    };
  } catch (error) {
    if (error instanceof PlanError) throw new CliError(`cannot plan: ${error.message}`);
    if (error instanceof TargetError) throw new CliError(error.message);
    throw error;
  }
}

function planOptionsOf(opts: PlanningOptions, connection: Connection) {
  return {
    server: connection.url,
    createdAt: new Date().toISOString(),
    tokenUser: connection.tokenUser,
    replace: opts.replace ?? false,
    rotatePasswords: opts.rotatePasswords ?? false,
    allowDeletes: opts.allowDeletes,
    allowUpdates: opts.allowUpdates,
  };
}

/** `--base REF` / `--base-file PATH`: the base's desired state, read before anything else. */
type LoadedBase = { ref: string; commit?: string; where: string } & ({ result: LoadResult } | { missing: string });

async function loadBase(opts: { file: string; base?: string; baseFile?: string }): Promise<LoadedBase | undefined> {
  if (opts.base !== undefined && opts.baseFile !== undefined)
    throw new CliError('give --base REF or --base-file PATH, not both');
  if (opts.baseFile !== undefined) {
    const result = await loadDesiredState(opts.baseFile);
    if (!result.ok && result.diagnostics.some((d) => d.message === 'no such file or folder'))
      throw new CliError(`--base-file ${opts.baseFile}: no such file or folder`);
    return { ref: opts.baseFile, where: opts.baseFile, result };
  }
  if (opts.base === undefined) return undefined;
  try {
    const { repoPath, ref, commit, ...loaded } = await loadDesiredStateAtRef(opts.file, opts.base);
    return { ref, commit, where: repoPath, ...loaded };
  } catch (error) {
    if (error instanceof GitRefError) throw new CliError(error.message);
    throw error;
  }
}

/**
 * The plan with each change's origin (src/plan/base.ts): the base's files planned against the same
 * live state; the access changes in two parts (the base's changes, then this pull request's).
 */
async function compareToBase(
  plan: Plan,
  base: LoadedBase,
  desired: LoadedDesired,
  opts: PlanningOptions,
  connection: Connection,
  reading: Promise<LiveState>,
): Promise<Plan> {
  const info: PlanBase = { ref: base.ref, ...(base.commit ? { commit: base.commit } : {}) };
  const alone = (why: string): Plan =>
    compareWithBase(plan, null, {
      ...info,
      note: `${why}: every change counts as introduced by this pull request`,
      ...(plan.access ? { access_pr: plan.access } : {}),
    });
  if ('missing' in base) return alone(`${base.where} ${base.missing} at ${base.ref}`);
  if (!base.result.ok) {
    const [first, ...more] = base.result.diagnostics;
    return alone(
      `the desired state at ${base.ref} has errors (${formatDiagnostic(first!)}${more.length ? `, and ${more.length} more` : ''})`,
    );
  }
  let live = await reading;
  if (base.result.state.configuration !== undefined && live.configuration === undefined)
    live = await withConfiguration(reading, connection);
  let basePlan: Plan;
  try {
    const whole = planChanges(base.result.state, live, planOptionsOf(opts, connection));
    basePlan = opts.target?.length ? targetPlan(whole, opts.target) : whole;
  } catch (error) {
    if (error instanceof PlanError || error instanceof TargetError)
      return alone(`${base.ref}'s files cannot be planned (${error.message})`);
    throw error;
  }
  const compared = compareWithBase(plan, basePlan, info);
  const already = compared.changes.filter((c) => c.origin === 'base');
  const own = compared.changes.filter((c) => c.origin === 'pr');
  compared.base!.access_pr = accessChangesAfter(live, desired.state, already, own);
  compared.base!.access_base = accessChangesAfter(live, desired.state, [], already);
  return compared;
}

/** 3 over a limit; 2 changes or pending (the server does not match: src/plan/outcome.ts); else 0. */
export function planExitCode(plan: Plan): ExitCode {
  if (plan.limits.some((l) => l.exceeded)) return ExitCode.refused;
  return isPending(plan) ? ExitCode.changes : ExitCode.ok;
}

/** With NETFORM_TIMINGS set, one JSON line of phase durations (ms) on stderr, for bench/. */
export function reportTimings(timings: Timings): void {
  if (process.env.NETFORM_TIMINGS)
    process.stderr.write(
      `netform-timings ${JSON.stringify({ ...timings, rss_peak_mb: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`,
    );
}

function writeSavedPlan(out: string, json: string): void {
  if (out === '-') {
    process.stdout.write(json);
    return;
  }
  try {
    writeFileSync(out, json);
  } catch (error) {
    throw new CliError(`-o: cannot write ${out} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** `plan -f desired/netform.yaml -o desired/netform.yaml` would replace the files with a plan: refused. */
export function refuseOverwritingInput(out: string, input: string): void {
  if (out === '-' || input === '-') return;
  const target = resolve(out);
  const source = resolve(input);
  let inputIsFolder: boolean;
  try {
    inputIsFolder = statSync(source).isDirectory();
  } catch {
    return;
  }
  // A folder is read for its *.yaml/*.yml files, or its cdk.tf.json.
  const inside = inputIsFolder && dirname(target) === source && /(\.ya?ml|^cdk\.tf\.json)$/i.test(basename(target));
  if (target === source || inside) {
    throw new CliError(
      `-o ${out} would overwrite the desired state read from ${input}; write the saved plan elsewhere (such as plan.json)`,
    );
  }
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
    .addOption(new Option('--format <format>', 'output format').choices(PLAN_FORMATS as string[]).default('text'))
    .option(
      '--base <ref>',
      "compare with the same -f path at this git ref (a pull request's base): each change is marked as this pull request's or already there, and what it undoes is listed",
    )
    .option(
      '--base-file <path>',
      "like --base, with the base's desired state at this path (a synthesized cdk.tf.json)",
    );
  addPlanningOptions(cmd);
  addConnectionOptions(cmd);
  cmd.action(
    action(
      async (
        opts: PlanningOptions & { file: string; out?: string; format: PlanFormat; base?: string; baseFile?: string },
      ) => {
        if (opts.out) refuseOverwritingInput(opts.out, opts.file);
        checkTargets(opts);
        const base = await loadBase(opts);
        const { desired, connection, live } = await loadDesiredAndLive(opts.file, opts);
        try {
          for (const warning of portRuleWarnings(desired.state))
            process.stderr.write(`warning: ${formatDiagnostic(warning)}\n`);
          refuseFailingTests(desired.state);
          const made = await makePlan(desired, opts, connection, live);
          const timings = made.timings;
          const plan = base ? await compareToBase(made.plan, base, desired, opts, connection, live) : made.plan;
          const started = performance.now();
          // `-o -`: the saved plan goes to stdout, so the plan for people goes to stderr.
          const toStdout = opts.out === '-';
          const shownOn = toStdout ? process.stderr : process.stdout;
          // The JSON document is a saved plan, sealed with NETFORM_PLAN_KEY or the token (src/plan/seal.ts).
          const seal = opts.format === 'json' || opts.out ? planKeyOf(opts) : undefined;
          const output = renderPlan(plan, opts.format, {
            color: opts.format === 'text' && useColor(opts, shownOn),
            fullPlanAt: fullPlanAt(),
            seal,
          });
          timings.render = elapsedSince(started);
          if (!(toStdout && opts.format === 'json')) shownOn.write(output);
          if (opts.out)
            writeSavedPlan(
              opts.out,
              opts.format === 'json' ? output : renderPlan(plan, 'json', { color: false, seal }),
            );
          reportTimings(timings);
          return planExitCode(plan);
        } finally {
          await connection.close();
        }
      },
    ),
  );
}
