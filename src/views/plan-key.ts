/** Why the saved-plan key cannot be used, in words (the codes are src/plan/seal.ts's). */
import type { PlanKeyProblem } from '../plan/seal.js';

export function planKeyProblemText(problem: PlanKeyProblem): string {
  switch (problem.code) {
    case 'too_short':
      return `${problem.variable} is too short to seal saved plans: it must have at least ${problem.minChars} characters (make one with: openssl rand -base64 32)`;
  }
}
