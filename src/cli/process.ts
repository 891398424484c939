/**
 * The process side of the command line, for the bin (main.ts) alone: the process's io (its
 * streams, environment, folder; SIGTERM, SIGINT and the parent going away as stop requests;
 * process.exit) and the last-resort error boundary for what nothing else caught.
 *
 * The parent is watched for `npx netform …`: npx does not pass SIGTERM or SIGINT on to netform,
 * so a supervisor that signals the process it started (npx) left netform running as an orphan
 * (newcomer review 2.13). The README says to `exec node_modules/.bin/netform` instead; this is the
 * safety net when that advice was not followed: a process whose parent changes (it was adopted by
 * init or a subreaper) stops as if it had been sent SIGTERM. npx runs the bin through a shell,
 * which a killed npx leaves behind: there, npx itself is watched as well (Linux).
 */
import { readFileSync } from 'node:fs';
import { describeFailure } from './boundary.js';
import { ExitCode } from './exit.js';
import { Secrets, type CliIo, type StopReason, type StopSource } from './io.js';
import { startedByNpx } from './signals.js';

/** How often the parent is looked at. */
const PARENT_CHECK_MS = 1_000;

/** SIGTERM, SIGINT and (with `parent`) the parent process going away. */
export const processStops: StopSource = {
  subscribe(listener, { parent }) {
    const onSignal = (signal: NodeJS.Signals) => listener(signal);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    let timer: NodeJS.Timeout | undefined;
    if (parent) {
      const first = process.ppid;
      // npx starts netform through a shell (`sh -c netform …`) that outlives a killed npx: then
      // the shell's parent, npx, is watched too.
      const npx = startedByNpx(process.env) && isShell(first) ? parentOf(first) : null;
      timer = setInterval(() => {
        if (process.ppid !== first || (npx !== null && parentOf(first) !== npx)) {
          clearInterval(timer);
          listener('parent exited' satisfies StopReason);
        }
      }, PARENT_CHECK_MS);
      timer.unref();
    }
    return () => {
      clearInterval(timer);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    };
  },
};

/** The parent of process `pid`, where the system shows it (Linux: /proc), else null. */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isSafeInteger(ppid) && ppid > 0 ? ppid : null;
  } catch {
    return null;
  }
}

/** Whether process `pid` is a POSIX shell (npm runs a package's bin through one). */
function isShell(pid: number): boolean {
  try {
    return ['sh', 'dash', 'bash', 'zsh'].includes(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
  } catch {
    return false;
  }
}

/** This process's io: its streams, environment and folder, its signals; exit() ends the process. */
export function processIo(): CliIo {
  return {
    out: process.stdout,
    err: process.stderr,
    in: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    isTTY: {
      in: process.stdin.isTTY === true,
      out: process.stdout.isTTY === true,
      err: process.stderr.isTTY === true,
    },
    columns: {
      ...(process.stdout.isTTY ? { out: process.stdout.columns } : {}),
      ...(process.stderr.isTTY ? { err: process.stderr.columns } : {}),
    },
    secrets: new Secrets(),
    stops: processStops,
    clock: () => new Date(),
    exit: (code) => process.exit(code),
  };
}

let installed = false;

/**
 * Catches what nothing else caught: uncaught exceptions (an 'error' event without a listener is
 * one), unhandled rejections. Prints it as the boundary does (with the run's secrets cut out) and
 * exits 1 at once: after an uncaught exception the process's state is unknown. Nothing is ever
 * printed through util.inspect, which shows an error's own properties: got's errors carry the
 * request's options, the API token among them.
 */
export function installErrorBoundary(io: CliIo): void {
  if (installed) return;
  installed = true;
  const fatal = (error: unknown) => {
    try {
      if (isClosedOutput(error)) {
        // `netform plan | head`: the reader left. Nothing to say to it; stderr may still be open.
        process.stderr.write('error: the output was closed before netform finished writing it\n');
      } else {
        process.stderr.write(describeFailure(error, io).text);
      }
    } finally {
      process.exit(ExitCode.error);
    }
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
}

function isClosedOutput(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EPIPE';
}
