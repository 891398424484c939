/**
 * Approvals routed by impact: which reviewers of `settings.owners` (model/owners.ts) each change
 * of a plan needs, and why, in the plan's own words. Pure.
 *
 * The owners are those of the pull request's base (never the pull request's own: it could drop
 * them). A change needs an entry's reviewers when it touches the entry: a rule whose block meets
 * one of its blocks or whose user matches one of its globs, a user or device of such a user, a
 * global rule when it changes access for such a user. A change to `settings.owners` that removes
 * or narrows what a reviewer owns needs that reviewer for every change of the pull request. Why
 * is said from the access changes on the state after apply (gains and losses inside the blocks,
 * of the users), or by the change itself when they say nothing (a user created with its rules).
 */
import { emailGlobMatcher } from '../model/email-glob.js';
import { userKey } from '../model/keys.js';
import { parseCidrOrAddress, rangesIntersect, type ParsedCidr } from '../model/net.js';
import { handleKey, type OwnerEntry } from '../model/owners.js';
import type { Change, PlanOwnerRequirement } from '../plan/types.js';
import type { AccessBlock, AccessChanges } from './changes.js';

export interface OwnersInput {
  /** The changes to route (a pull request's plan, or the plan apply makes at merge). */
  changes: readonly Change[];
  /** Their access changes on the state after apply. */
  access?: AccessChanges;
  /** `settings.owners` as the base has it. */
  owners: readonly OwnerEntry[];
  /** Reviewers whose ownership the pull request removes or narrows, with what they lose (model/owners.ts narrowedOwnership). */
  narrowed?: ReadonlyMap<string, string[]>;
  /** Every user's email (live and declared): whom a change for everyone reaches. */
  users: readonly string[];
}

export interface RoutedOwners {
  /** The reviewers each change needs, by change id (changes that need none are absent). */
  byChange: Map<string, string[]>;
  /** Each reviewer needed, with why (at most MAX_REASONS lines, then how many more). */
  required: PlanOwnerRequirement[];
}

const MAX_REASONS = 5;

interface Scope {
  entry: OwnerEntry;
  blocks: ParsedCidr[];
  matches: (email: string) => boolean;
}

function scopesOf(owners: readonly OwnerEntry[]): Scope[] {
  return owners.map((entry) => ({
    entry,
    blocks: entry.blocks.map(parseCidrOrAddress).filter((b): b is ParsedCidr => b !== null),
    matches: emailGlobMatcher(entry.users),
  }));
}

/** The parts of `addresses` inside the scope's blocks (CIDR blocks nest or are apart: the smaller of two that meet). */
function inside(scope: Scope, addresses: readonly string[]): string[] {
  const out: string[] = [];
  for (const text of addresses) {
    const block = parseCidrOrAddress(text);
    if (!block) continue;
    for (const owned of scope.blocks) {
      if (!rangesIntersect(block, owned)) continue;
      out.push(block.end - block.start <= owned.end - owned.start ? block.canonical : owned.canonical);
    }
  }
  return [...new Set(out)];
}

/** `tcp/5432`, `udp/53, 123`, `all protocols`, `other protocols`. */
function protocolText(block: AccessBlock): string {
  if (block.protocol === 'all') return 'all protocols';
  if (block.protocol === 'other') return 'other protocols';
  return `${block.protocol}/${block.ports ?? ''}`;
}

/** Why each scope is touched by the access changes: `gains tcp/5432 to 10.20.0.0/16 for alice@example.com`. */
function accessReasons(
  scopes: Scope[],
  access: AccessChanges | undefined,
  users: readonly string[],
): Map<Scope, string[]> {
  const reasons = new Map<Scope, string[]>();
  if (!access) return reasons;
  const add = (scope: Scope, line: string) => {
    const list = reasons.get(scope) ?? [];
    if (!list.includes(line)) list.push(line);
    reasons.set(scope, list);
  };
  const visit = (
    who: string,
    touchesUsers: (scope: Scope) => boolean,
    c: { reachable: AccessBlock[]; blocked: AccessBlock[] },
  ) => {
    for (const scope of scopes)
      for (const [verb, blocks] of [
        ['gains', c.reachable],
        ['loses', c.blocked],
      ] as const)
        for (const block of blocks) {
          const where = touchesUsers(scope) ? block.addresses : inside(scope, block.addresses);
          if (where.length > 0) add(scope, `${verb} ${protocolText(block)} to ${where.join(', ')} for ${who}`);
        }
  };
  if (access.everyone) {
    const except = new Set(access.everyone.except.map(userKey));
    const reached = users.filter((u) => !except.has(userKey(u)));
    visit('everyone', (scope) => reached.some((u) => scope.matches(u)), access.everyone);
  }
  for (const change of access.users) visit(change.user, (scope) => scope.matches(change.user), change);
  return reasons;
}

/** The user a change is about (its email key), or null for a global rule and the configuration. */
function userOf(change: Change): string | null {
  if (change.kind === 'user') return change.key;
  if (change.kind === 'device') return change.key.slice(0, change.key.lastIndexOf('/'));
  if (change.kind === 'rule') {
    const owner = change.key.split('|')[0]!;
    return owner === '*' ? null : owner;
  }
  return null;
}

/** The blocks a rule change writes or removes: its key's destination, and a destination before and after. */
function blocksOf(change: Change): ParsedCidr[] {
  if (change.kind !== 'rule') return [];
  const texts = [change.key.split('|')[2]];
  for (const field of change.fields)
    if (field.field === 'destination') texts.push(field.before as string, field.after as string);
  return texts
    .filter((t): t is string => typeof t === 'string')
    .map(parseCidrOrAddress)
    .filter((b): b is ParsedCidr => b !== null);
}

function touches(scope: Scope, change: Change, everyoneTouches: boolean): boolean {
  const user = userOf(change);
  if (user !== null && scope.matches(user)) return true;
  if (blocksOf(change).some((b) => scope.blocks.some((owned) => rangesIntersect(b, owned)))) return true;
  // A global rule reaches every user: it touches their owners when the access changes say it does.
  return change.kind === 'rule' && user === null && everyoneTouches;
}

export function routeOwners(input: OwnersInput): RoutedOwners {
  const scopes = scopesOf(input.owners);
  const reasons = accessReasons(scopes, input.access, input.users);
  const byChange = new Map<string, Set<string>>();
  const because = new Map<string, { shown: string; lines: string[] }>();
  const need = (change: Change, reviewer: string, line?: string) => {
    const set = byChange.get(change.id) ?? new Set<string>();
    set.add(reviewer);
    byChange.set(change.id, set);
    const entry = because.get(handleKey(reviewer)) ?? { shown: reviewer, lines: [] };
    if (line && !entry.lines.includes(line)) entry.lines.push(line);
    because.set(handleKey(reviewer), entry);
  };
  for (const scope of scopes) {
    const said = reasons.get(scope) ?? [];
    const everyone = said.some((line) => line.endsWith(' for everyone'));
    const touched = input.changes.filter((change) => touches(scope, change, everyone));
    // Access moved inside the entry by changes none of which names it: every rule change answers for it.
    const answerable =
      touched.length > 0 || said.length === 0 ? touched : input.changes.filter((c) => c.kind === 'rule');
    for (const change of answerable)
      for (const reviewer of scope.entry.reviewers)
        need(change, reviewer, said.length === 0 ? `${change.action} ${change.label}` : undefined);
    for (const reviewer of scope.entry.reviewers)
      if (answerable.length > 0) for (const line of said) need(answerable[0]!, reviewer, line);
  }
  for (const [reviewer, lost] of input.narrowed ?? []) {
    const line = `settings.owners no longer gives it ${lost.join(', ')}`;
    const entry = because.get(handleKey(reviewer)) ?? { shown: reviewer, lines: [] };
    entry.lines.unshift(line);
    because.set(handleKey(reviewer), entry);
    for (const change of input.changes) if (change.origin !== 'base') need(change, reviewer);
  }
  const required = [...because.values()]
    .map(({ shown, lines }) => ({
      owner: shown,
      because:
        lines.length > MAX_REASONS ? [...lines.slice(0, MAX_REASONS), `and ${lines.length - MAX_REASONS} more`] : lines,
    }))
    .sort((a, b) => a.owner.localeCompare(b.owner));
  return {
    byChange: new Map([...byChange].map(([id, set]) => [id, [...set].sort()])),
    required,
  };
}
