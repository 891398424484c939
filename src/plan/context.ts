/**
 * What the planning stages share: the inputs, the live index, the scope, and the plan being
 * built (changes, problems, warnings, which live objects a declaration accounts for). Each stage
 * (matching, renames, rules, deletions, guards, ordering, document) reads and adds to it.
 */
import { userKey } from '../model/keys.js';
import type { DesiredState, DesiredUser, LiveState } from '../model/state.js';
import type { ApiDevice, ApiRule, ApiUser } from '../model/types.js';
import { indexLiveState, type LiveIndex } from './live-index.js';
import { buildScope, type Scope } from './scope.js';
import type { PlanProblem } from './problems.js';
import type { Change, NotCheckedField, OutcomeItem } from './types.js';
import type { PlanWarning } from './warnings.js';

export interface PlanOptions {
  /** The server the live state came from (shown, and checked when a saved plan is applied). */
  server: string;
  /** ISO time the plan is made at (a parameter: the planner reads no clock). */
  createdAt: string;
  /** Email of the token's owner; when unknown, no admin is deleted. */
  tokenUser?: string | null;
  /** Plan device changes that upstream 0.7.26+ ignores on update as delete-then-create. */
  replace?: boolean;
  /** Send declared passwords to existing users too. */
  rotatePasswords?: boolean;
  allowDeletes?: number;
  allowUpdates?: number;
  /**
   * A change that would send a secret that cannot be read (secrets are read where used): `refuse` (default; plan and
   * apply) makes it a problem naming the reference; `report` (drift, which never sends) plans the
   * change all the same and reads no password; `unpin` (plan) plans a change whose variable
   * (`env`, `tfvar`) cannot be read here with that secret not pinned (read at apply), and refuses
   * as `refuse` does for a file.
   */
  unreadableSecrets?: 'refuse' | 'report' | 'unpin';
}

/**
 * The plan cannot be made: every reason, each naming the objects at fault, as codes and values
 * (src/views/plan-problems.ts words them). The message is for programs: the codes, one a line.
 */
export class PlanError extends Error {
  override readonly name = 'PlanError';
  constructor(readonly problems: PlanProblem[]) {
    super(problems.map(problemCode).join('\n'));
  }
}

function problemCode(problem: PlanProblem): string {
  if (typeof problem === 'string') return problem;
  const { code, ...values } = problem;
  return Object.keys(values).length > 0 ? `${code} ${JSON.stringify(values)}` : code;
}

export const PHASE = { users: 1, makeRoom: 2, members: 3, memberDeletes: 4, userDeletes: 5 } as const;

export type OwnerRef = { userId: unknown; dependsOn: string[] };

export class PlanContext {
  readonly index: LiveIndex;
  readonly scope: Scope;
  readonly changes = new Map<string, Change>();
  readonly problems: PlanProblem[] = [];
  readonly warnings: PlanWarning[] = [];
  /** Fields left uncompared: their secret cannot be read; never reported as matching. */
  readonly notChecked: NotCheckedField[] = [];
  readonly #reportedDuplicates = new Set<string>();
  /** Declared users by key, the live user each was matched to, and its old email when renamed. */
  readonly declaredUsers = new Map<string, { user: DesiredUser; live: ApiUser | undefined; renamedFrom?: string }>();
  /** Ids of live users a declaration accounts for (by email, or renamed). */
  readonly matchedUserIds = new Set<string>();
  /** Live objects a declaration or an absent entry accounts for (never pruned). */
  readonly claimedDevices = new Set<ApiDevice>();
  readonly claimedRules = new Set<ApiRule>();
  /** Users planned for deletion: their devices and rules go with them. */
  readonly deletedUserIds = new Set<string>();
  /** What the plan does not change although it differs (outcome.ts): guards' cancellations, ignored fields. */
  readonly held: { pending: OutcomeItem[]; kept: OutcomeItem[] } = { pending: [], kept: [] };

  constructor(
    readonly desired: DesiredState,
    readonly live: LiveState,
    readonly options: PlanOptions,
  ) {
    this.index = indexLiveState(live);
    this.scope = buildScope(desired.settings);
  }

  get prune(): boolean {
    return this.desired.settings.prune;
  }

  /** Device changes a 0.7.26+ server ignores are replacements: `--replace`, or `settings.device_updates: replace`. */
  get replaceDevices(): boolean {
    return this.options.replace === true || this.desired.settings.device_updates === 'replace';
  }

  add(change: Change): void {
    this.changes.set(change.id, change);
  }

  /** The live object of a key; several with one key is a problem reported, never a guess. */
  uniqueLive<T>(kind: 'user' | 'device' | 'rule', key: string, found: T | undefined): T | undefined {
    this.isDuplicated(kind, key);
    return found;
  }

  /** Whether several live objects share the key; reports it (once) as a problem. */
  isDuplicated(kind: 'user' | 'device' | 'rule', key: string): boolean {
    // Most servers hold no duplicates: then no lookup key is built for each of their objects.
    if (this.index.duplicates.size === 0) return false;
    const all = this.index.duplicates.get(`${kind}:${key}`);
    if (!all) return false;
    if (!this.#reportedDuplicates.has(`${kind}:${key}`)) {
      this.#reportedDuplicates.add(`${kind}:${key}`);
      this.problems.push({ code: 'duplicate_key', kind, count: all.length, key });
    }
    return true;
  }

  /** Every live object with the key (one, or all duplicates). */
  allWithKey<T>(kind: 'device' | 'rule', key: string, found: T): T[] {
    if (this.index.duplicates.size === 0) return [found];
    return (this.index.duplicates.get(`${kind}:${key}`) as T[] | undefined) ?? [found];
  }

  /** How a device or rule body names its owner: the live id, or a reference to the user created in this plan. */
  ownerRef(user: DesiredUser, live: ApiUser | undefined): OwnerRef {
    if (live) return { userId: live.id, dependsOn: [] };
    const id = `user:${userKey(user.email)}`;
    return { userId: { $ref: id }, dependsOn: [id] };
  }

  /** Whether a live rule lies inside what this repository manages. */
  managesLiveRule(rule: ApiRule): boolean {
    if (rule.user_id === null) return this.scope.managesGlobalRule(rule.destination);
    const owner = this.index.usersById.get(rule.user_id);
    return owner !== undefined && this.scope.managesUser(owner.email);
  }
}
