/** What `netform export` says besides the files: the objects it left out, and what to do about them. */
import { inertText } from './escape.js';

/** One warning per object the export left out (by id, with why), then what to do about them; empty when none. */
export function leftOutText(leftOut: readonly string[]): string {
  if (leftOut.length === 0) return '';
  const one = leftOut.length === 1;
  return (
    leftOut.map((line) => `warning: left out ${inertText(line)}\n`).join('') +
    `warning: no desired state can declare ${one ? 'that object' : `those ${leftOut.length} objects`} as the server holds ${one ? 'it' : 'them'}: fix or delete ${one ? 'it' : 'them'} on the server (by id), then export again; until then \`netform plan\` shows ${one ? 'it' : 'them'} (with prune on, as deletions)\n`
  );
}
