/**
 * A plan's access delta (schemas/access-delta.schema.json): what each user and device gains and
 * loses, from the server now to the state after apply; with `--base`, from after apply of the
 * changes already on the base to after apply of the pull request's own changes as well.
 */
import { stateAfterApply } from '../access/after-apply.js';
import { computeAccessDelta } from '../access/delta.js';
import { accessDeltaDocument, type AccessDeltaDocument } from '../access/delta-sets.js';
import { userKey } from '../model/keys.js';
import type { DesiredState, LiveState } from '../model/state.js';
import type { Change, Plan } from '../plan/types.js';

/** The admins (emails in normal form) once `changes` are made: creates, role updates and deletions over the live admins. */
export function adminsAfter(live: LiveState, changes: readonly Change[]): Set<string> {
  const admins = new Set(live.users.filter((u) => u.role === 'admin').map((u) => userKey(u.email)));
  for (const change of changes) {
    if (change.kind !== 'user') continue;
    if (change.action === 'delete') admins.delete(change.key);
    const role = change.body?.role ?? change.fields.find((f) => f.field === 'role')?.after;
    if (role === 'admin') admins.add(change.key);
    else if (role !== undefined) admins.delete(change.key);
  }
  return admins;
}

/** The plan's access delta: of its own changes (`origin: pr`) after the base's when it was compared with a base. */
export function planAccessDelta(plan: Plan, live: LiveState, desired: DesiredState): AccessDeltaDocument {
  const first = plan.base ? plan.changes.filter((c) => c.origin === 'base') : [];
  const then = plan.base ? plan.changes.filter((c) => c.origin !== 'base') : plan.changes;
  const before = stateAfterApply({ changes: first, live, desired });
  const after = plan.base
    ? stateAfterApply({ changes: [...first, ...then], live, desired })
    : stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired });
  const delta = computeAccessDelta({
    before: before.model,
    after: after.model,
    admins: { before: adminsAfter(live, first), after: adminsAfter(live, [...first, ...then]) },
    compared: plan.base
      ? { before: { code: 'after_apply_of_base', ref: plan.base.ref }, after: { code: 'after_apply_of_pr' } }
      : { before: { code: 'server_now' }, after: { code: 'after_apply' } },
  });
  return accessDeltaDocument(delta);
}
