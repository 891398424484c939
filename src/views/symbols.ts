/** The marks and word lists every view shares: one copy each. */
import type { ChangeAction } from '../plan/types.js';

/** The fields shown as changed, never as values (one list, in the model). */
export { isSecretField } from '../model/secret.js';

/** The mark of each action in plans, apply summaries and progress lines. */
export const SYMBOL: Record<ChangeAction, string> = { create: '+', update: '~', delete: '-', replace: '-/+' };

/** The past tense of each action: `created user alice@example.com`. */
export const DONE_VERB: Record<ChangeAction, string> = {
  create: 'created',
  update: 'updated',
  delete: 'deleted',
  replace: 'replaced',
};
