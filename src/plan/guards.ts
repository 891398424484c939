/**
 * Guards: protected users, the token's owner and the last admin are never deleted or demoted.
 * Runs after every stage that plans a user's deletion or demotion, and cancels those it must.
 */
import { userKey } from '../model/keys.js';
import { PHASE, type PlanContext } from './context.js';
import type { Change } from './types.js';
import { noteParts, withNotePart } from './notes.js';
import type { GuardWhy } from './warnings.js';

/**
 * A `--token-user` that names no live admin is a mistake (a typo, a stale CI variable): the token's
 * owner is always an admin, so the guard below would protect the wrong user. Refused before any write.
 */
export function checkTokenUser(ctx: PlanContext): void {
  const given = ctx.options.tokenUser;
  if (!given) return;
  const live = ctx.index.usersByKey.get(userKey(given));
  if (!live) ctx.problems.push({ code: 'token_user_unknown', given });
  else if (live.role !== 'admin') ctx.problems.push({ code: 'token_user_not_admin', given });
}

export function guardUserRemovals(ctx: PlanContext): void {
  const tokenUser = ctx.options.tokenUser ? userKey(ctx.options.tokenUser) : null;
  const removals = [...ctx.changes.values()].filter(
    (c) => c.kind === 'user' && (c.action === 'delete' || (c.action === 'update' && c.body?.role === 'unprivileged')),
  );
  const cancel = (change: Change, why: GuardWhy) => {
    const guarded = {
      code: 'guarded',
      action: change.action === 'delete' ? 'delete' : 'demote',
      label: change.label,
      why,
    } as const;
    ctx.warnings.push(guarded);
    // Protected: kept, as the files ask. Any other guard leaves the server unlike the files: pending.
    if (why === 'protected')
      ctx.held.kept.push({ reason: 'protected', id: change.id, text: { code: 'protected', label: change.label } });
    else ctx.held.pending.push({ reason: 'guard', id: change.id, text: guarded });
    if (change.action === 'update' && change.fields.some((f) => f.field !== 'role')) {
      // Keep the rest of the update (a password rotation); drop only the demotion.
      change.fields = change.fields.filter((f) => f.field !== 'role');
      delete change.body!.role;
      if (change.now_managed?.includes('role')) {
        delete change.now_managed;
        const rest = noteParts(change.note).filter((part) => part.code !== 'now_managed');
        if (rest.length) change.note = rest;
        else delete change.note;
      }
      change.phase = PHASE.users;
      return;
    }
    ctx.changes.delete(change.id);
    if (change.liveId) ctx.deletedUserIds.delete(change.liveId);
  };
  for (const change of removals) {
    const live = ctx.index.usersById.get(change.liveId!)!;
    if (ctx.scope.isProtected(live.email)) cancel(change, 'protected');
    else if (tokenUser !== null && userKey(live.email) === tokenUser) cancel(change, 'token_owner');
    else if (tokenUser === null && change.action === 'delete' && live.role === 'admin') cancel(change, 'owner_unknown');
  }
  // Protected users that prune would have deleted.
  if (ctx.prune) {
    for (const user of ctx.live.users) {
      if (
        !ctx.declaredUsers.has(userKey(user.email)) &&
        !ctx.matchedUserIds.has(user.id) &&
        ctx.scope.managesUser(user.email) &&
        ctx.scope.isProtected(user.email)
      ) {
        ctx.warnings.push({ code: 'guarded', action: 'delete', label: `user ${user.email}`, why: 'protected' });
      }
    }
  }
  // The last admin: at least one admin must remain after the plan.
  const admins = new Set(ctx.live.users.filter((u) => u.role === 'admin').map((u) => u.id));
  let remaining = admins.size;
  for (const change of ctx.changes.values()) {
    if (change.kind !== 'user') continue;
    if (change.action === 'create' && change.body?.role === 'admin') remaining++;
    if (change.action === 'update' && change.body?.role === 'admin') remaining++;
  }
  const adminRemovals = [...ctx.changes.values()]
    .filter(
      (c) =>
        c.kind === 'user' &&
        c.liveId &&
        admins.has(c.liveId) &&
        (c.action === 'delete' || c.body?.role === 'unprivileged'),
    )
    .sort((a, b) => (a.key < b.key ? -1 : 1));
  if (admins.size > 0 && adminRemovals.length >= remaining) {
    for (const change of adminRemovals.slice(Math.max(0, remaining - 1))) cancel(change, 'last_admin');
  }
  for (const change of ctx.changes.values()) {
    if (change.kind === 'user' && change.action === 'delete' && change.liveId && admins.has(change.liveId)) {
      change.note = withNotePart(change.note, { code: 'admin_delete' });
    }
  }
}
