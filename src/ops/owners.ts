/**
 * The reviewers a plan needs (src/access/owners.ts), attached to it: each change's
 * `required_owners` and the plan's `owners`. The owners are read from the base (`--base`; at merge,
 * the first parent of the merge commit) when there is one, else from the files themselves.
 */
import { routeOwners } from '../access/owners.js';
import type { LoadResult } from '../desired/index.js';
import { narrowedOwnership, type OwnerEntry } from '../model/owners.js';
import type { DesiredState, LiveState } from '../model/state.js';
import { FileReadError, readBoundedFileSync, SECRET_FILE_MAX_BYTES, sizeLimit } from '../model/files.js';
import { ApprovalsError, parseApprovals, type Approval } from '../plan/approvals.js';
import type { Plan } from '../plan/types.js';
import type { OwnersSource } from '../plan/sources.js';
import { OpError } from './errors.js';

/** Where the owners come from: a base's desired state as loaded (or why there is none), or none (the files'). */
export type OwnersBase =
  { ref: string; commit?: string; result: LoadResult } | { ref: string; commit?: string; missing: string } | undefined;

export interface PullRequest {
  head: string;
  author: string;
}

function ownersFrom(
  base: OwnersBase,
  desired: DesiredState,
): { owners: readonly OwnerEntry[]; from: OwnersSource; base: boolean } {
  const own = desired.settings.owners ?? [];
  if (!base) return { owners: own, from: { code: 'files' }, base: false };
  const named = `${base.ref}${base.commit ? ` (${base.commit.slice(0, 12)})` : ''}`;
  if ('missing' in base) return { owners: own, from: { code: 'files_base_missing', base: named }, base: false };
  if (!base.result.ok) return { owners: own, from: { code: 'files_base_errors', base: named }, base: false };
  return { owners: base.result.state.settings.owners ?? [], from: { code: 'base', base: named }, base: true };
}

/** The plan with the reviewers its changes need; unchanged when neither side declares owners and no pull request is named. */
export function withOwners(
  plan: Plan,
  base: OwnersBase,
  desired: DesiredState,
  live: LiveState,
  pullRequest?: PullRequest,
): Plan {
  const { owners, from, base: fromBase } = ownersFrom(base, desired);
  const narrowed = fromBase ? narrowedOwnership(owners, desired.settings.owners ?? []) : new Map<string, string[]>();
  if (owners.length === 0 && narrowed.size === 0 && !pullRequest) return plan;
  const users = [...live.users.map((u) => u.email), ...desired.users.map((u) => u.email)];
  const routed = routeOwners({
    changes: plan.changes,
    access: plan.base?.access_pr ?? plan.access,
    owners,
    narrowed,
    users,
  });
  const changes = plan.changes.map((change) => {
    const needed = routed.byChange.get(change.id);
    return needed ? { ...change, required_owners: needed } : change;
  });
  return {
    ...plan,
    changes,
    owners: { from, required: routed.required, ...(pullRequest ? { pull_request: pullRequest } : {}) },
  };
}

/** The approvals file of `apply --reviewed --approvals FILE`, read whole within its bound; a bad one names the entry and field. */
export function readApprovals(path: string): Approval[] {
  let text: string;
  try {
    text = readBoundedFileSync(path, sizeLimit(SECRET_FILE_MAX_BYTES, 'approvals_file')).toString('utf8');
  } catch (error) {
    if (error instanceof FileReadError)
      throw new OpError('request', { code: 'approvals_unreadable', path, problem: error.problem });
    throw error;
  }
  try {
    return parseApprovals(text, path);
  } catch (error) {
    if (error instanceof ApprovalsError)
      throw new OpError('request', { code: 'approvals_refused', problem: error.problem });
    throw error;
  }
}
