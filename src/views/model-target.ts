/** A refused `--target` (or a key `show` and `adopt` take) in words; the codes are src/plan/target.ts's. */
import type { RuleKeyProblem, TargetProblem } from '../plan/target.js';

/** How a rule key is written, for error messages. */
export const RULE_KEY_SHAPE =
  'a rule is rule:OWNER|ACTION|DESTINATION|PORTS, OWNER an email or * (or global) for a rule of no user, ' +
  'ACTION accept or drop, PORTS any or TYPE:RANGE (tcp:22, tcp/22, tcp:20-22, udp:53)';

export function ruleKeyProblemText(problem: RuleKeyProblem): string {
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

/**
 * Why a target is refused. `flag`: it was given as `--target` (plan, apply), and the words name
 * the flag; show and adopt take keys as arguments, without it.
 */
export function targetProblemText(problem: TargetProblem, flag: boolean): string {
  const given = `${flag ? '--target ' : ''}${problem.target}`;
  switch (problem.code) {
    case 'shape':
      return `${given}: expected user:EMAIL, device:EMAIL/NAME, rule:KEY or configuration (the ids netform plan --format json shows)`;
    case 'device':
      return `${given}: a device is device:EMAIL/NAME`;
    case 'rule':
      return `${problem.target}: ${ruleKeyProblemText(problem.problem)}; ${RULE_KEY_SHAPE}`;
  }
}
