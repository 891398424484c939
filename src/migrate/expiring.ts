/** The grants of a desired state that end (`expires:`), for migrate's report of what will lapse. */
import { userKey } from '../model/keys.js';
import type { DesiredState } from '../model/state.js';
import { describeRule } from '../views/model-rule.js';
import type { ExpiringGrant } from './types.js';

/**
 * Grants that end: rules with `expires:` (declared by the desired state once it has that key).
 * Read structurally so that this works before and after the key exists.
 */
export function expiringOf(desired: DesiredState | undefined): ExpiringGrant[] {
  if (!desired) return [];
  const out: ExpiringGrant[] = [];
  const visit = (owner: string | null, rules: readonly object[]) => {
    for (const rule of rules) {
      const expires = (rule as { expires?: unknown }).expires;
      if (typeof expires !== 'string' || expires === '') continue;
      const r = rule as Parameters<typeof describeRule>[0];
      out.push({ owner, rule: describeRule({ ...r, owner }), expires });
    }
  };
  for (const user of desired.users) visit(userKey(user.email), user.rules);
  visit(null, desired.rules);
  return out;
}
