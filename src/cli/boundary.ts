/**
 * The command line's one error boundary: how any failure becomes words on stderr and an exit code.
 *
 * - An expected failure (a CliError, or an OpError of the operations) prints `error: <message>` and
 *   exits with its code (exit.ts).
 * - Anything else is a bug: `error: <message> (internal error at <file>:<line>; NETFORM_DEBUG=1
 *   shows the stack)`, exit 1. With NETFORM_DEBUG the stack follows.
 * - Nothing is ever printed through util.inspect, which shows an error's own properties: got's
 *   errors carry the request's options, the API token among them (security review F1). That holds
 *   for uncaught exceptions, unhandled rejections and 'error' events nobody listened to, which
 *   Node would otherwise print whole before exiting.
 * - Every secret the process was given (the API token) is cut out of what the boundary prints.
 */
import { fileURLToPath } from 'node:url';
import { inertMessage } from '../views/escape.js';
import { expectedFailure, ExitCode } from './exit.js';

const secrets = new Set<string>();

/** A value that must never appear in an error message (the API token): the boundary cuts it out. */
export function rememberSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

function redact(text: string): string {
  let out = text;
  const token = process.env.NETFORM_TOKEN?.trim();
  for (const secret of token && token.length >= 4 ? [...secrets, token] : secrets) {
    if (out.includes(secret)) out = out.split(secret).join('(secret)');
  }
  return out;
}

/** The package's root folder, to name files relative to it (`dist/src/cli/plan.js:97`); built or not. */
const PACKAGE_ROOT = ((here: string) => /^(.*\/)(?:dist\/)?src\/cli\/$/.exec(here)?.[1] ?? here)(
  fileURLToPath(new URL('.', import.meta.url)),
);

/** Where an error was thrown: the first stack frame in netform's own files, else the first frame at all. */
export function thrownAt(error: unknown): string | undefined {
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : '';
  const places: string[] = [];
  for (const line of stack.split('\n')) {
    if (!/^\s+at /.test(line)) continue;
    const match = /(?:\(|at )((?:file:\/\/)?\/[^()\s]*?):(\d+):\d+\)?\s*$/.exec(line);
    if (!match) continue;
    let file = match[1]!;
    if (file.startsWith('file://')) {
      try {
        file = fileURLToPath(file);
      } catch {
        continue;
      }
    }
    places.push(`${file}:${match[2]}`);
  }
  const ours = places.find((p) => p.startsWith(PACKAGE_ROOT) && !p.includes('/node_modules/'));
  const place = ours ?? places[0];
  if (place === undefined) return undefined;
  return place.startsWith(PACKAGE_ROOT) ? place.slice(PACKAGE_ROOT.length) : place;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  // A thrown non-Error: its type only. Never its properties (they may hold anything).
  return `a ${error === null ? 'null' : typeof error} was thrown`;
}

/** The lines the boundary prints for an error (each ending in a newline), and the exit code. */
export function describeFailure(error: unknown, debug = !!process.env.NETFORM_DEBUG): { text: string; code: ExitCode } {
  const expected = expectedFailure(error);
  if (expected) return { text: `error: ${inertMessage(redact(expected.message))}\n`, code: expected.code };
  const at = thrownAt(error);
  let text = `error: ${inertMessage(redact(messageOf(error)))} (internal error${at ? ` at ${at}` : ''}; NETFORM_DEBUG=1 shows the stack)\n`;
  if (debug && error instanceof Error && typeof error.stack === 'string') {
    // The stack alone: its first line is name and message, then the frames. Never the error's own properties.
    text += `${redact(error.stack)}\n`;
  }
  return { text, code: ExitCode.error };
}

/** Prints a failure as the boundary does and sets the exit code (the process ends when its work does). */
export function reportFailure(error: unknown): ExitCode {
  const { text, code } = describeFailure(error);
  process.stderr.write(text);
  process.exitCode = code;
  return code;
}

/**
 * Wraps a command's action: a returned exit code becomes the process's; a failure goes through
 * the boundary (reportFailure).
 */
export function action<A extends unknown[]>(
  run: (...args: A) => Promise<ExitCode | void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const code = await run(...args);
      process.exitCode = code ?? ExitCode.ok;
    } catch (error) {
      reportFailure(error);
    }
  };
}

let installed = false;

/**
 * Catches what nothing else caught: uncaught exceptions (an 'error' event without a listener is
 * one), unhandled rejections. Prints it as the boundary does and exits 1 at once: after an
 * uncaught exception the process's state is unknown.
 */
export function installErrorBoundary(): void {
  if (installed) return;
  installed = true;
  const fatal = (error: unknown) => {
    try {
      if (isClosedOutput(error)) {
        // `netform plan | head`: the reader left. Nothing to say to it; stderr may still be open.
        process.stderr.write('error: the output was closed before netform finished writing it\n');
      } else {
        process.stderr.write(describeFailure(error).text);
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
