/**
 * Where command output goes and how it looks on this terminal: colours, the saved plan's file,
 * the GitHub-artifact URL of a truncated plan comment, and the phase timings (NETFORM_TIMINGS).
 */
import { statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { writeFileAtomically } from '../model/files.js';
// The process's memory, for the timings: the same in-process or not.
import { memoryUsage, resourceUsage } from 'node:process';
import { OpError, type OpWords } from '../ops/errors.js';
import type { OpEvents, Phase } from '../ops/events.js';
import { progressReporter, type ProgressReporter } from '../views/progress.js';
import { CliError } from './exit.js';
import type { CliIo } from './io.js';
import { wholeNumberFromEnv } from './flags/numbers.js';

/** Whether text output gets colours: a terminal, no NO_COLOR, no --no-color. */
export function useColor(
  opts: { color?: boolean },
  io: Pick<CliIo, 'env' | 'isTTY'>,
  stream: 'out' | 'err' = 'out',
): boolean {
  const noColor = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '';
  return opts.color !== false && io.isTTY[stream] && !noColor;
}

/**
 * Where the full plan is, for a markdown comment that had to leave changes out: in a GitHub
 * Actions run, that run's page (its artifacts); elsewhere NETFORM_FULL_PLAN_AT if set.
 */
export function fullPlanAt(env: CliIo['env']): string | undefined {
  if (env.NETFORM_FULL_PLAN_AT) return env.NETFORM_FULL_PLAN_AT;
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID) {
    return `the artifacts of ${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`;
  }
  return undefined;
}

/**
 * Output made by `render`, or, when it is longer than a JavaScript string can be (V8's RangeError
 * "Invalid string length"), an expected failure saying what was too large and what to do.
 */
export function wholeOutput<T>(output: Extract<OpWords, { code: 'output_too_large' }>['output'], render: () => T): T {
  try {
    return render();
  } catch (error) {
    if (error instanceof RangeError && error.message === 'Invalid string length')
      throw new OpError('request', { code: 'output_too_large', output });
    throw error;
  }
}

/** `-o PATH`: the saved plan into PATH (replaced whole; a link there is replaced, not followed), or onto stdout for `-`. */
export function writeSavedPlan(out: string, json: string, io: Pick<CliIo, 'out'>): void {
  if (out === '-') {
    io.out.write(json);
    return;
  }
  try {
    writeFileAtomically(out, json);
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

/** Apply's progress on the run's streams; NETFORM_PROGRESS_EVERY_MS sets the running count's interval (tests). */
export function progressOnTerminal(total: number, io: CliIo): ProgressReporter {
  return progressReporter({
    total,
    terminal: io.isTTY.err,
    everyMs: wholeNumberFromEnv(io.env.NETFORM_PROGRESS_EVERY_MS, { min: 1 }),
    out: (text) => io.out.write(text),
    err: (text) => io.err.write(text),
  });
}

function rssMb(): number {
  return Math.round(memoryUsage.rss() / 1048576);
}

/**
 * The phases of one run as the operations report them (OpEvents.phase), with the resident memory
 * (MB) at the end of each, to see which phase needs the memory. With NETFORM_TIMINGS set, report()
 * prints them as one JSON line on stderr, for bench/.
 */
export class Timings implements OpEvents {
  #ms: Partial<Record<Phase | 'render', number>> = {};
  #rss: Partial<Record<Phase, number>> = {};
  readonly #io: Pick<CliIo, 'env' | 'err'>;

  constructor(io: Pick<CliIo, 'env' | 'err'>) {
    this.#io = io;
  }

  readonly phase = (name: Phase | 'render', ms: number): void => {
    this.#ms[name] = ms;
    if (name !== 'render' && name !== 'writes') this.#rss[name] = rssMb();
  };

  report(): void {
    if (!this.#io.env.NETFORM_TIMINGS) return;
    const { writes: _writes, ...phases } = this.#ms;
    const peak = Math.round(resourceUsage().maxRSS / 1024);
    this.#io.err.write(`netform-timings ${JSON.stringify({ ...phases, rss_mb: this.#rss, rss_peak_mb: peak })}\n`);
    this.#ms = {};
    this.#rss = {};
  }

  /** Apply's writes alone, on a line of their own. */
  reportWrites(): void {
    if (this.#io.env.NETFORM_TIMINGS && this.#ms.writes !== undefined)
      this.#io.err.write(`netform-write-timings ${JSON.stringify({ writes: Math.round(this.#ms.writes) })}\n`);
  }
}
