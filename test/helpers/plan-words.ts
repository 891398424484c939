/**
 * The planner's refusals in words, for tests that assert them: a PlanError's problems are codes,
 * worded by src/views/plan-problems.ts as the command line prints them.
 */
import { PlanError } from '../../src/plan/context.js';
import { planProblemsText } from '../../src/views/plan-problems.js';

/** `run`, with a PlanError thrown again as an Error whose message is its words. */
export function inWords<T>(run: () => T): () => T {
  return () => {
    try {
      return run();
    } catch (error) {
      if (error instanceof PlanError) throw new Error(planProblemsText(error.problems), { cause: error });
      throw error;
    }
  };
}
