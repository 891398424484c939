/**
 * Runs `netform ARGS` in this process through run(argv, io) (src/cli/run.ts) with memory
 * streams: no child process and no built dist/ (vitest imports the sources). The same options
 * and result as runCli (cli.ts), which runs the built CLI as a process: use that where the
 * process is what is tested (signals, EPIPE, terminals, the bin's error boundary).
 *
 * The environment is this process's with NO_COLOR=1 and `env` over it (undefined removes a
 * variable), as runCli gives its child. With `cwd`, the run happens in that folder: the
 * operations resolve relative paths against the process's folder, so this process changes to it
 * for the run (runs with a cwd are taken one at a time).
 */
import { memoryIo, type Env, type MemoryIo, type StopReason } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

export interface InProcessOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** What stdin holds (for `-f -`). */
  stdin?: string;
  /** Also accepted under runCli's name. */
  input?: string;
  /** Whether stdin, stdout, stderr are terminals (default: none is). */
  isTTY?: Partial<MemoryIo['isTTY']>;
}

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunningInProcess {
  io: MemoryIo;
  /** Resolves with the exit code and the output once the command ends. */
  done: Promise<InProcessResult>;
  /** A stop request (SIGTERM by default), as a signal is to the process. */
  stop(reason?: StopReason): void;
}

let queue: Promise<unknown> = Promise.resolve();
/**
 * While a run in a folder of its own is under way (the process changed to it), the folder the
 * process was in before: a run started meanwhile, even one for that same folder, waits its turn,
 * since the folder changes back when the first run ends.
 */
let away: string | undefined;

/** The run's environment: this process's, NO_COLOR=1, then `env`; undefined values removed. */
export function inProcessEnv(env: Record<string, string | undefined> = {}): Env {
  const merged: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...env };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  return merged;
}

/** Starts `netform ARGS` in-process; `stop()` asks a long-running command (serve, drift --every) to stop. */
export function startInProcess(args: string[], options: InProcessOptions = {}): RunningInProcess {
  const cwd = options.cwd ?? away ?? process.cwd();
  const stdin = options.stdin ?? options.input;
  const io = memoryIo({
    env: inProcessEnv(options.env),
    cwd,
    ...(stdin !== undefined ? { stdin } : {}),
    ...(options.isTTY ? { isTTY: options.isTTY } : {}),
  });
  const once = async (): Promise<InProcessResult> => {
    const code = await run(args, io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  };
  let done: Promise<InProcessResult>;
  if (away === undefined && cwd === process.cwd()) done = once();
  else {
    done = queue.then(async () => {
      const before = process.cwd();
      process.chdir(cwd);
      away = before;
      try {
        return await once();
      } finally {
        process.chdir(before);
        away = undefined;
      }
    });
    queue = done.catch(() => undefined);
  }
  return { io, done, stop: (reason) => io.requestStop(reason) };
}

/** Runs `netform ARGS` in-process to its end: its exit code, stdout and stderr. */
export function runInProcess(args: string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  return startInProcess(args, options).done;
}
