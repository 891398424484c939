/**
 * Approvals of `apply --reviewed --approvals FILE`: the file (a JSON list of
 * `{ "login": "…", "teams": ["@org/db-team"], "commit": "<sha>" }`, as the merge workflow builds it
 * from the pull request's reviews and the reviewers' teams), and the changes withheld for want of
 * one. An approval counts only for the reviewed pull request's head commit, never from its author,
 * and only for the teams it lists (and its own `@login`). Pure.
 */
import { handleKey, handleProblem } from '../model/owners.js';
import { narrowPlan } from './target.js';
import { WITHHELD_REASONS, type ReviewedIntersection, type WithheldChange } from './reviewed.js';
import type { PlanOwners } from './types.js';

export interface Approval {
  login: string;
  teams: string[];
  commit: string;
}

/**
 * Why an approvals file is refused, as a code, the file and, for an entry, its number (from 1) and
 * the field at fault: src/views/plan-approvals.ts words it.
 */
export type ApprovalsProblem = { path: string } & (
  | { code: 'not_json' }
  | { code: 'not_list' }
  | { code: 'not_object'; entry: number }
  | { code: 'unknown_field'; entry: number; field: string }
  | { code: 'login'; entry: number }
  | { code: 'teams'; entry: number }
  | { code: 'team'; entry: number; index: number }
  | { code: 'commit'; entry: number }
);

export class ApprovalsError extends Error {
  override readonly name = 'ApprovalsError';
  constructor(readonly problem: ApprovalsProblem) {
    super(`${problem.code} ${JSON.stringify(problem)}`);
  }
}

const COMMIT = /^[0-9a-f]{7,64}$/i;

/** The approvals in `text` (the file at `path`); an ApprovalsError names the entry and field at fault. */
export function parseApprovals(text: string, path: string): Approval[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ApprovalsError({ path, code: 'not_json' });
  }
  if (!Array.isArray(doc)) throw new ApprovalsError({ path, code: 'not_list' });
  return doc.map((item: unknown, i): Approval => {
    const entry = i + 1;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new ApprovalsError({ path, code: 'not_object', entry });
    const { login, teams, commit, ...rest } = item as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new ApprovalsError({ path, code: 'unknown_field', entry, field: extra });
    if (typeof login !== 'string' || handleProblem(login) !== null || login.includes('/'))
      throw new ApprovalsError({ path, code: 'login', entry });
    if (!Array.isArray(teams)) throw new ApprovalsError({ path, code: 'teams', entry });
    teams.forEach((team, j) => {
      if (typeof team !== 'string' || handleProblem(team) !== null)
        throw new ApprovalsError({ path, code: 'team', entry, index: j });
    });
    if (typeof commit !== 'string' || !COMMIT.test(commit)) throw new ApprovalsError({ path, code: 'commit', entry });
    return { login, teams: teams as string[], commit };
  });
}

/** The handles (handleKey) the approvals vouch for: approvals of the head commit, by someone not its author. */
export function approvedHandles(approvals: readonly Approval[], pullRequest: PlanOwners['pull_request']): Set<string> {
  const handles = new Set<string>();
  if (!pullRequest) return handles;
  const head = pullRequest.head.toLowerCase();
  for (const approval of approvals) {
    if (approval.login.toLowerCase() === pullRequest.author.toLowerCase()) continue;
    const commit = approval.commit.toLowerCase();
    if (!(head.startsWith(commit) || commit.startsWith(head)) || commit.length < 7) continue;
    handles.add(handleKey(approval.login));
    for (const team of approval.teams) handles.add(handleKey(team));
  }
  return handles;
}

/**
 * The intersection with every kept change whose reviewers have not all approved withheld too
 * (and what depends on it). `needed`: the reviewers each change needs, by id.
 */
export function withholdUnapproved(
  result: ReviewedIntersection,
  needed: ReadonlyMap<string, readonly string[]>,
  approved: ReadonlySet<string>,
): ReviewedIntersection & { missing: string[] } {
  const withheld = new Map<string, WithheldChange>(result.withheld.map((w) => [w.change.id, w]));
  const missing = new Set<string>();
  for (const change of result.plan.changes) {
    const lacking = (needed.get(change.id) ?? []).filter((owner) => !approved.has(handleKey(owner)));
    if (lacking.length === 0) continue;
    for (const owner of lacking) missing.add(owner);
    withheld.set(change.id, {
      change,
      reason: WITHHELD_REASONS.needsApproval,
      detail: { code: 'approval_from', owners: lacking },
    });
  }
  for (let grew = true; grew;) {
    grew = false;
    for (const change of result.plan.changes) {
      if (withheld.has(change.id)) continue;
      const blocking = (change.dependsOn ?? []).filter((id) => withheld.has(id));
      if (blocking.length === 0) continue;
      withheld.set(change.id, {
        change,
        reason: WITHHELD_REASONS.dependsOnWithheld,
        detail: { code: 'needs', changes: blocking },
      });
      grew = true;
    }
  }
  if (missing.size === 0) return { ...result, missing: [] };
  const kept = narrowPlan(
    result.plan,
    result.plan.changes.filter((c) => !withheld.has(c.id)),
  );
  const order = [...result.withheld.map((w) => w.change.id), ...result.plan.changes.map((c) => c.id)];
  return {
    plan: { ...kept, undeclared: result.plan.undeclared },
    withheld: order.filter((id) => withheld.has(id)).map((id) => withheld.get(id)!),
    notNeeded: result.notNeeded,
    missing: [...missing].sort(),
  };
}
