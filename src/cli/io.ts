/**
 * What one run of the command line talks to (run.ts): its three streams, its environment, its
 * working folder, whether each stream is a terminal, the secrets to cut out of what it prints,
 * where its stop requests come from, and how it ends at once. The bin gets the process's
 * (process.ts, processIo); a test or a library user gets one in memory (memoryIo). Nothing under
 * src/cli reads the process but through this, besides main.ts and process.ts.
 */
import { Readable, Writable } from 'node:stream';
import type { ScheduleClock } from '../drift/clock.js';

/** An environment: NETFORM_TOKEN, NETFORM_URL, NO_COLOR, ... */
export type Env = Readonly<Record<string, string | undefined>>;

/** Why a long-running command is asked to stop: a signal, or the parent process went away. */
export type StopReason = NodeJS.Signals | 'parent exited';

/** Where stop requests come from: the process's signals, or a test's hand (memoryIo's requestStop). */
export interface StopSource {
  /**
   * Calls `listener` at every request until the returned function is called. `parent`: also
   * when the parent process goes away (for the long-running commands; the process only).
   */
  subscribe(listener: (reason: StopReason) => void, options: { parent: boolean }): () => void;
}

/**
 * The values one run must never print (the API token, a token file's content): the error
 * boundary cuts them out of every message. One set per run: runs share nothing.
 */
export class Secrets {
  readonly #values = new Set<string>();

  /** A value of 4 characters or more (shorter ones would cut ordinary words). */
  add(value: string | undefined): void {
    if (value && value.length >= 4) this.#values.add(value);
  }

  /** `text` with every secret (and `also`, such as the environment's token) replaced by `(secret)`. */
  redact(text: string, also: readonly (string | undefined)[] = []): string {
    let out = text;
    const extra = also.map((v) => v?.trim()).filter((v): v is string => !!v && v.length >= 4);
    for (const secret of [...this.#values, ...extra]) {
      if (out.includes(secret)) out = out.split(secret).join('(secret)');
    }
    return out;
  }
}

export interface CliIo {
  out: Writable;
  err: Writable;
  in: Readable;
  env: Env;
  /** The working folder: relative paths the command line resolves itself start here. */
  cwd: string;
  isTTY: { in: boolean; out: boolean; err: boolean };
  /** The width of stdout and stderr when they are terminals (help text wraps at it). */
  columns?: { out?: number; err?: number };
  secrets: Secrets;
  stops: StopSource;
  /**
   * This run's clock: the instant expiries and acknowledgements are judged at. The process's
   * reads the system clock; read-only commands may be given another with the hidden `--now`.
   */
  clock(): Date;
  /**
   * The time a schedule (`drift --every`) keeps: its ticks wait on this clock, which a stop cuts
   * short. Absent (the process's, a library user's): the system clock. A test gives one it moves
   * forward by hand, so that its runs come when it says.
   */
  scheduleClock?: ScheduleClock;
  /**
   * Ends the run at once with this code, work in flight abandoned (a second Ctrl-C). The
   * process's io exits the process; run() resolves with the code in any case.
   */
  exit(code: number): void;
}

/**
 * Where the desired state's `{ env: NAME }` secrets and `-f -` are read from: this run's env and
 * stdin; and the clock its expiries are judged at (this run's, unless a read-only command's `--now`).
 */
export function inputOf(
  io: Pick<CliIo, 'env' | 'in' | 'clock'>,
  clock: () => Date = () => io.clock(),
): { env: Env; stdin: Readable; clock: () => Date } {
  return { env: io.env, stdin: io.in, clock };
}

/** An io in memory, with what was written and a hand to ask a long-running command to stop. */
export interface MemoryIo extends CliIo {
  stdout(): string;
  stderr(): string;
  /** A stop request, as SIGTERM (the default) or SIGINT would be for the process. */
  requestStop(reason?: StopReason): void;
  /** The codes exit() was called with (a second stop request). */
  readonly exits: number[];
}

export interface MemoryIoOptions {
  /** Default: an empty environment (nothing of the process's). */
  env?: Env;
  cwd: string;
  /** What stdin holds (for `-f -`). Default: nothing. */
  stdin?: string;
  isTTY?: Partial<CliIo['isTTY']>;
  /** The run's clock. Default: the system clock. */
  clock?: () => Date;
  /** The clock schedules keep (CliIo.scheduleClock). Default: the system clock. */
  scheduleClock?: ScheduleClock;
}

/** An io whose streams are strings in memory: for tests and for library use. */
export function memoryIo(options: MemoryIoOptions): MemoryIo {
  const text = { out: '', err: '' };
  const sink = (which: 'out' | 'err') =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        text[which] += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
        done();
      },
    });
  const listeners = new Set<(reason: StopReason) => void>();
  const exits: number[] = [];
  return {
    out: sink('out'),
    err: sink('err'),
    in: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    env: { ...options.env },
    cwd: options.cwd,
    isTTY: { in: false, out: false, err: false, ...options.isTTY },
    secrets: new Secrets(),
    stops: {
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    clock: options.clock ?? (() => new Date()),
    scheduleClock: options.scheduleClock,
    exit: (code) => exits.push(code),
    exits,
    stdout: () => text.out,
    stderr: () => text.err,
    requestStop(reason = 'SIGTERM') {
      for (const listener of [...listeners]) listener(reason);
    },
  };
}
