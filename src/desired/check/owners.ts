/** `settings.owners`: each block a CIDR block or address, each glob usable, each reviewer a handle. */
import { emailGlobProblem } from '../../model/email-glob.js';
import { emailGlobProblemText } from '../../views/model-email.js';
import { handleProblemText } from '../../views/model-owners.js';
import { parseCidrOrAddress } from '../../model/net.js';
import { handleProblem } from '../../model/owners.js';
import type { DesiredState } from '../../model/state.js';
import type { Diagnostic } from '../types.js';
import { report, type Declared } from './report.js';

export function checkOwners(state: DesiredState, into: Diagnostic[]): void {
  (state.settings.owners ?? []).forEach((entry, i) => {
    const declared: Declared = { source: entry.source, fallbackPath: `settings.owners[${i}]` };
    if (entry.blocks.length === 0 && entry.users.length === 0)
      into.push(
        report(declared, undefined, 'an owners entry names the blocks or the users (email globs) its reviewers own'),
      );
    entry.blocks.forEach((block, j) => {
      if (parseCidrOrAddress(block) === null)
        into.push(
          report(
            declared,
            `blocks[${j}]`,
            `${JSON.stringify(block)} is not a CIDR block or an address (10.20.0.0/16, fd00::/64)`,
          ),
        );
    });
    entry.users.forEach((glob, j) => {
      const problem = glob.trim() === '' ? 'is blank' : globProblemText(emailGlobProblem(glob));
      if (problem) into.push(report(declared, `users[${j}]`, `the email glob ${problem}`));
    });
    entry.reviewers.forEach((reviewer, j) => {
      const problem = handleProblem(reviewer);
      if (problem)
        into.push(report(declared, `reviewers[${j}]`, `${JSON.stringify(reviewer)} ${handleProblemText(problem)}`));
    });
  });
}

function globProblemText(problem: ReturnType<typeof emailGlobProblem>): string | null {
  return problem === null ? null : emailGlobProblemText(problem);
}
