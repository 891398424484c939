/**
 * A key of `forget:` and `acknowledged:` that is not one, in the words of the desired state's
 * diagnostics (the planner's TargetError carries a code; src/views/plan-target.ts words the same
 * codes for the command line's `--target`, which the domain cannot import).
 */
import type { RuleKeyProblem, TargetProblem } from '../plan/target.js';

const RULE_KEY_SHAPE =
  'a rule is rule:OWNER|ACTION|DESTINATION|PORTS, OWNER an email or * (or global) for a rule of no user, ' +
  'ACTION accept or drop, PORTS any or TYPE:RANGE (tcp:22, tcp/22, tcp:20-22, udp:53)';

function ruleKeyProblem(problem: RuleKeyProblem): string {
  switch (problem.code) {
    case 'parts':
      return `a rule key has 4 parts separated by |, this has ${problem.parts}`;
    case 'owner':
      return `the owner ${JSON.stringify(problem.owner)} is no email, * or global`;
    case 'action':
      return `the action ${JSON.stringify(problem.action)} is not accept or drop`;
    case 'destination':
      return `the destination ${JSON.stringify(problem.destination)} is no address or CIDR block`;
    case 'ports':
      return `the ports ${JSON.stringify(problem.ports)} are not any or TYPE:RANGE`;
  }
}

/** `alice: expected user:EMAIL, …`: the key as written, and what is wrong with it. */
export function keyProblem(problem: TargetProblem): string {
  switch (problem.code) {
    case 'shape':
      return `${problem.target}: expected user:EMAIL, device:EMAIL/NAME, rule:KEY or configuration (the ids netform plan --format json shows)`;
    case 'device':
      return `${problem.target}: a device is device:EMAIL/NAME`;
    case 'rule':
      return `${problem.target}: ${ruleKeyProblem(problem.problem)}; ${RULE_KEY_SHAPE}`;
  }
}
