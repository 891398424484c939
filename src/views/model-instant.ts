/** Why a text is not an instant, in words (the codes are src/model/instant.ts's). */
import type { InstantProblem } from '../model/instant.js';

const EXPECTED = 'expected a date (2026-12-31) or a date-time with an offset (2026-12-31T18:00:00Z)';

export function instantProblemText(problem: InstantProblem): string {
  switch (problem.code) {
    case 'not_a_string':
      return `${EXPECTED}, as a quoted string`;
    case 'not_an_instant':
      return EXPECTED;
    case 'no_such_day':
      return `no such day: ${problem.text}`;
    case 'no_such_instant':
      return `no such instant: ${problem.text}`;
  }
}
