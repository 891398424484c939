/**
 * The built CLI as real processes started by a small process of their own (spawner-process.mjs),
 * not by the test worker: forking costs the parent in proportion to its memory, and a test
 * worker of hundreds of MB spends tens of milliseconds of CPU per spawn, its event loop blocked
 * meanwhile (its proxies and servers waiting). For a file that starts hundreds of processes (the
 * safety-net table). The processes are the same (the same node, flags, bin, arguments, environment
 * and folder); their parent is the spawner, which lives until close() (or the test process ends).
 *
 *   const spawner = new Spawner();
 *   const cli = spawner.startCli(SHORT_LIVED_NODE, ['plan', '-f', dir], { env });
 *   cli.child.kill('SIGTERM');
 *   const { code, signal } = await cli.exited;
 *   await spawner.close();   // in afterAll: its children's CPU then counts as the test process's
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { builtCli, OutputWatch, type CliOptions, type RunningCli } from './cli.js';

const SCRIPT = fileURLToPath(new URL('./spawner-process.mjs', import.meta.url));

/** The part of a ChildProcess the tests use, for a process the spawner started. */
export interface SpawnedChild {
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  /** Sends the signal (SIGTERM by default) to the process; false once it has exited. */
  kill(signal?: NodeJS.Signals): boolean;
}

export type SpawnedCli = Omit<RunningCli, 'child'> & { child: SpawnedChild };

type Message =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'data'; id: number; stream: 'stdout' | 'stderr'; chunk: string }
  | { op: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { op: 'error'; id: number; message: string };

export class Spawner {
  #process: ChildProcess | undefined;
  #exited: Promise<void> | undefined;
  #next = 0;
  readonly #handlers = new Map<number, (message: Message) => void>();

  #started(): ChildProcess {
    if (this.#process) return this.#process;
    const spawner = fork(SCRIPT, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    spawner.on('message', (message: Message) => this.#handlers.get(message.id)?.(message));
    this.#exited = new Promise((resolve) => spawner.once('exit', () => resolve()));
    // It never holds the test process open by itself.
    spawner.unref();
    spawner.channel?.unref();
    this.#process = spawner;
    return spawner;
  }

  /** startCliNode (test/helpers/cli.ts) through the spawner: `netform ARGS` with `node` as Node's flags. */
  startCli(node: readonly string[], args: string[], options: CliOptions = {}): SpawnedCli {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    const spawner = this.#started();
    const id = ++this.#next;
    const state = {
      pid: undefined as number | undefined,
      exitCode: null as number | null,
      signalCode: null as NodeJS.Signals | null,
      done: false,
    };
    const output = new OutputWatch(() => (state.done ? { exitCode: state.exitCode } : null));
    let resolveExit!: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => (resolveExit = r));
    this.#handlers.set(id, (message) => {
      if (message.op === 'spawned') state.pid = message.pid;
      else if (message.op === 'data') output.add(message.stream, message.chunk);
      else if (message.op === 'close' || message.op === 'error') {
        this.#handlers.delete(id);
        if (message.op === 'error') output.text.stderr += `(the spawner could not start netform: ${message.message})\n`;
        state.exitCode = message.op === 'close' ? message.code : 1;
        state.signalCode = message.op === 'close' ? message.signal : null;
        state.done = true;
        resolveExit({ code: state.exitCode, signal: state.signalCode });
        output.notify();
      }
    });
    spawner.send({
      op: 'spawn',
      id,
      file: process.execPath,
      args: [...node, builtCli(), ...args],
      cwd: options.cwd,
      env,
      input: options.input ?? '',
    });
    const child: SpawnedChild = {
      get pid() {
        return state.pid;
      },
      get exitCode() {
        return state.exitCode;
      },
      get signalCode() {
        return state.signalCode;
      },
      kill: (signal: NodeJS.Signals = 'SIGTERM') => {
        if (state.done) return false;
        spawner.send({ op: 'kill', id, signal });
        return true;
      },
    };
    return {
      child,
      stdout: () => output.text.stdout,
      stderr: () => output.text.stderr,
      waitForStdout: (pattern, timeoutMs) => output.waitFor('stdout', pattern, timeoutMs),
      waitForStderr: (pattern, timeoutMs) => output.waitFor('stderr', pattern, timeoutMs),
      exited,
      kill: () => void child.kill('SIGKILL'),
    };
  }

  /** Ends the spawner (its processes killed, if any still run) and waits for it to exit. */
  async close(): Promise<void> {
    const spawner = this.#process;
    if (!spawner) return;
    this.#process = undefined;
    if (spawner.connected) spawner.send({ op: 'exit' });
    await this.#exited;
  }
}
