/**
 * `settings.owners`: who reviews access to what. Each entry names address blocks and user globs
 * and the reviewers (handles such as `@org/db-team`, or a login) who own them. An access change
 * that touches an entry's blocks or users needs an approval from one of its reviewers before
 * `apply --reviewed` writes it. The rules of a handle live here, for validate and the approvals file.
 */
import { cidrContains, parseCidrOrAddress } from './net.js';
import type { SourceLocation } from './state.js';

export interface OwnerEntry {
  /** CIDR blocks (or addresses) as written; a rule or an access change inside or across one touches it. */
  blocks: string[];
  /** Email globs (as `manage.users`); a change of such a user's access touches it. */
  users: string[];
  /** Handles: `@org/team`, `@login`, or a login. */
  reviewers: string[];
  /** Where the entry was declared (with `fields` for its values), when the front end knows it. */
  source?: SourceLocation;
}

/** A GitHub login, or `@login`, or `@org/team`: letters, digits and `-`, a team slug also `_` and `.`. */
const HANDLE = /^@?[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\/[A-Za-z0-9][A-Za-z0-9._-]{0,99})?$/;

/**
 * Why a text is not a reviewer handle, as a code (src/views/model-owners.ts words it): not of a
 * handle's form, or a team written without its `@`.
 */
export type HandleProblem = { code: 'not_a_handle' } | { code: 'team_without_at' };

/** Why `text` is not a reviewer handle, or null. */
export function handleProblem(text: unknown): HandleProblem | null {
  if (typeof text !== 'string' || !HANDLE.test(text)) return { code: 'not_a_handle' };
  if (!text.startsWith('@') && text.includes('/')) return { code: 'team_without_at' };
  return null;
}

/** A handle in the form it is compared by: `@` first, lower case (`alice` and `@Alice` are one reviewer). */
export function handleKey(handle: string): string {
  return (handle.startsWith('@') ? handle : `@${handle}`).toLowerCase();
}

/** How one reviewer's ownership narrows from `before` to `after`: what it owned before and no longer does, in words. */
export function narrowedOwnership(before: readonly OwnerEntry[], after: readonly OwnerEntry[]): Map<string, string[]> {
  const scopeOf = (entries: readonly OwnerEntry[]) => {
    const scopes = new Map<string, { blocks: string[]; users: Set<string>; shown: string }>();
    for (const entry of entries)
      for (const reviewer of entry.reviewers) {
        const key = handleKey(reviewer);
        let scope = scopes.get(key);
        if (!scope) scopes.set(key, (scope = { blocks: [], users: new Set(), shown: reviewer }));
        scope.blocks.push(...entry.blocks);
        for (const glob of entry.users) scope.users.add(glob.toLowerCase());
      }
    return scopes;
  };
  const was = scopeOf(before);
  const now = scopeOf(after);
  const narrowed = new Map<string, string[]>();
  for (const [key, scope] of was) {
    const kept = now.get(key);
    const lost: string[] = [];
    for (const block of scope.blocks) {
      const parsed = parseCidrOrAddress(block);
      const covered = kept?.blocks.some((other) => {
        const outer = parseCidrOrAddress(other);
        return parsed !== null && outer !== null && cidrContains(outer, parsed);
      });
      if (!covered) lost.push(block);
    }
    for (const glob of scope.users) if (!kept?.users.has(glob)) lost.push(`users ${glob}`);
    if (lost.length > 0) narrowed.set(scope.shown, [...new Set(lost)]);
  }
  return narrowed;
}
