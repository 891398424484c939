/**
 * The CLI for tests. `runCli` runs `netform ARGS` in the test process through run(argv, io) with
 * memory streams (test/helpers/run-in-process.ts): no child process, no build. `runCliProcess` and
 * `startCli` run the built CLI as a real child process, for the tests whose subject is the process
 * (signals, EPIPE, terminals, the bin's error boundary, the package, the safety-net table): build
 * first (`npm test` does). A dist/ built from other sources than src/ and server/ hold now is
 * refused, by name, before the first process starts (scripts/source-stamp.mjs).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { staleBuild } from '../../scripts/source-stamp.mjs';
import { runInProcess } from './run-in-process.js';

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

let checked = false;
/** The path of the built CLI, once its build is known to match the sources (else an error naming why). */
export function builtCli(): string {
  if (!checked) {
    const stale = staleBuild();
    if (stale) throw new Error(`${stale} (this test runs the built CLI)`);
    checked = true;
  }
  return CLI;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  input?: string;
  /** For a process: SIGKILL after this long (default 60 s). */
  timeoutMs?: number;
}

/**
 * Runs `netform ARGS` in this process (no build needed): this process's environment with
 * NO_COLOR=1 and `env` over it, stdin `input`, in `cwd`; resolves with its exit code and output.
 */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return runInProcess(args, { env: options.env, cwd: options.cwd, stdin: options.input ?? '' });
}

/** Runs the built `netform ARGS` as a child process, with the same options and result as runCli. */
export function runCliProcess(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return runCliProcessNode([], args, options);
}

/**
 * Node's flags for a process that lives a second or less: V8's optimizing compiler off. Such a
 * process spends its CPU loading and compiling modules; optimizing the few functions that get
 * hot before it exits costs more than it saves (about a fifth of a failing `plan`'s CPU). What
 * the process does and prints is the same: the flag changes how fast V8 runs the code, not what
 * it runs.
 */
export const SHORT_LIVED_NODE: readonly string[] = ['--no-opt'];

/** runCliProcess, with `node` (say, SHORT_LIVED_NODE) as Node's own flags before the bin. */
export function runCliProcessNode(
  node: readonly string[],
  args: string[],
  options: CliOptions = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    const child = spawn(process.execPath, [...node, builtCli(), ...args], {
      cwd: options.cwd,
      env: env as NodeJS.ProcessEnv,
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

export interface RunningCli {
  child: import('node:child_process').ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout matches (already or later); rejects after the timeout or if the process exits first. */
  waitForStdout(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  waitForStderr(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running (cleanup). */
  kill(): void;
}

/**
 * A running process's stdout and stderr as they arrive, and waits for a pattern in either: met
 * (already or later), or failed once the process has ended without it (`ended` says so, with its
 * exit code) or after the timeout.
 */
export class OutputWatch {
  readonly text = { stdout: '', stderr: '' };
  readonly #waiters = new Set<() => void>();

  constructor(private readonly ended: () => { exitCode: number | null } | null) {}

  add(which: 'stdout' | 'stderr', chunk: string): void {
    this.text[which] += chunk;
    this.notify();
  }

  /** Checks every wait again (on new output, and when the process has ended). */
  notify(): void {
    for (const check of [...this.#waiters]) check();
  }

  waitFor(which: 'stdout' | 'stderr', pattern: string | RegExp, timeoutMs = 20_000): Promise<void> {
    const { text } = this;
    return new Promise<void>((resolve, reject) => {
      const matches = () => (typeof pattern === 'string' ? text[which].includes(pattern) : pattern.test(text[which]));
      const describe = () => `--- stdout\n${text.stdout}\n--- stderr\n${text.stderr}`;
      const check = () => {
        if (matches()) {
          finish();
          resolve();
          return;
        }
        const end = this.ended();
        if (end) {
          finish();
          reject(
            new Error(`netform exited (${end.exitCode}) before ${which} matched ${String(pattern)}\n${describe()}`),
          );
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${which} did not match ${String(pattern)} within ${timeoutMs} ms\n${describe()}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }
}

/** Starts `netform ARGS` and lets a test read its output while it runs (stdout and stderr are pipes). */
export function startCli(args: string[], options: CliOptions = {}): RunningCli {
  return startCliNode([], args, options);
}

/** startCli, with `node` (say, SHORT_LIVED_NODE) as Node's own flags before the bin. */
export function startCliNode(node: readonly string[], args: string[], options: CliOptions = {}): RunningCli {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const child = spawn(process.execPath, [...node, builtCli(), ...args], {
    cwd: options.cwd,
    env: env as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin!.end(options.input ?? '');
  let done = false;
  const output = new OutputWatch(() => (done || child.exitCode !== null ? { exitCode: child.exitCode } : null));
  child.stdout!.setEncoding('utf8').on('data', (c: string) => output.add('stdout', c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => output.add('stderr', c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      resolve({ code, signal });
      output.notify();
    });
  });
  void exited.then(() => (done = true));
  return {
    child,
    stdout: () => output.text.stdout,
    stderr: () => output.text.stderr,
    waitForStdout: (p, t) => output.waitFor('stdout', p, t),
    waitForStderr: (p, t) => output.waitFor('stderr', p, t),
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
