/**
 * The command line's one error boundary: how any failure becomes words on stderr and an exit code.
 *
 * - An expected failure (a CliError, or an OpError of the operations) prints `error: <message>` and
 *   exits with its code (exit.ts).
 * - Anything else is a bug: `error: <message> (internal error at <file>:<line>; NETFORM_DEBUG=1
 *   shows the stack)`, exit 1. With NETFORM_DEBUG the stack follows.
 * - Nothing is ever printed through util.inspect, which shows an error's own properties: got's
 *   errors carry the request's options, the API token among them. The bin
 *   holds to that for what nothing caught as well (process.ts, installErrorBoundary).
 * - Every secret the run was given (the API token: io.secrets, and NETFORM_TOKEN) is cut out of
 *   what the boundary prints.
 */
import { fileURLToPath } from 'node:url';
import { inertMessage } from '../views/escape.js';
import { expectedFailure, ExitCode } from './exit.js';
import { Secrets, type Env } from './io.js';

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

/** What the boundary needs of a run: its secrets and environment (NETFORM_TOKEN, NETFORM_DEBUG). */
export interface FailureContext {
  secrets?: Secrets;
  env?: Env;
  /** Default: NETFORM_DEBUG of `env`. */
  debug?: boolean;
}

/** The lines the boundary prints for an error (each ending in a newline), and the exit code. */
export function describeFailure(error: unknown, context: FailureContext = {}): { text: string; code: ExitCode } {
  const env = context.env ?? {};
  const debug = context.debug ?? !!env.NETFORM_DEBUG;
  const secrets = context.secrets ?? new Secrets();
  const redact = (text: string) => secrets.redact(text, [env.NETFORM_TOKEN]);
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
