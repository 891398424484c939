/**
 * A saved plan read for apply (`apply PLANFILE`, `apply -f --reviewed`): its own module, so that
 * `apply -f` does not load the saved-plan reader.
 */
import { readSavedPlan, SavedPlanError } from '../plan/planfile.js';
import type { PlanKey } from '../plan/seal.js';
import type { WordedPlan } from '../plan/types.js';
import { OpError } from './errors.js';

/** A saved plan (`netform plan -o`), if this netform can apply it exactly: sealed with `key`, unedited. */
export function readSavedPlanFile(path: string, key: PlanKey): WordedPlan {
  try {
    return readSavedPlan(path, key);
  } catch (error) {
    if (error instanceof SavedPlanError)
      throw new OpError('saved-plan', { code: 'saved_plan_refused', refusal: error.refusal });
    throw error;
  }
}
