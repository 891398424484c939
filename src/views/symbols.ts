/** The marks and word lists every view shares: one copy each. */
import type { ChangeAction, FieldChange } from '../plan/types.js';

/** The mark of each action in plans, apply summaries and progress lines. */
export const SYMBOL: Record<ChangeAction, string> = { create: '+', update: '~', delete: '-', replace: '-/+' };

/** The past tense of each action: `created user alice@example.com`. */
export const DONE_VERB: Record<ChangeAction, string> = {
  create: 'created',
  update: 'updated',
  delete: 'deleted',
  replace: 'replaced',
};

/** Fields whose values are secrets even if a plan forgot to mark them: shown (and reported) as changed, never as values. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'password',
  'password_confirmation',
  'preshared_key',
  'token',
]);

/** Whether a field change must never show its values. */
export function isSecretField(change: FieldChange): boolean {
  return !!change.sensitive || SECRET_FIELDS.has(change.field);
}
