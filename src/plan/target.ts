/**
 * `--target KEY`: a plan limited to some objects and what they need, as `terraform -target`. A
 * filter applied after planning, so the planner stays whole: keep the changes whose id is a
 * target (a user's take its devices and rules with them), then, transitively, the changes they depend on (the user a device belongs to, the rule
 * that must make room first). Summary and limits are counted again over what is kept.
 */
import { ruleKey, userKey } from '../model/keys.js';
import { parseCidrOrAddress } from '../model/net.js';
import { parsePortRange } from '../model/ports.js';
import { evaluateLimits, summarize } from './limits.js';
import type { LiveIndex } from './live-index.js';
import { outcomeOf, planOutcome } from './outcome.js';
import type { Change, Plan } from './types.js';
import type { PlanWarning } from './warnings.js';

/** What is wrong with a rule key (parseRuleKey), as a code and the part at fault. */
export type RuleKeyProblem =
  | { code: 'parts'; parts: number }
  | { code: 'owner'; owner: string }
  | { code: 'action'; action: string }
  | { code: 'destination'; destination: string }
  | { code: 'ports'; ports: string };

/** Why a target is refused, as a code and the target as given (src/views/model-target.ts words it). */
export type TargetProblem =
  /** Not `user:`, `device:`, `rule:` nor `configuration`. */
  | { code: 'shape'; target: string }
  /** A device without its `EMAIL/NAME`. */
  | { code: 'device'; target: string }
  /** A rule whose key cannot be read. */
  | { code: 'rule'; target: string; problem: RuleKeyProblem };

export class TargetError extends Error {
  override readonly name = 'TargetError';
  constructor(readonly problem: TargetProblem) {
    super(`${problem.code} ${JSON.stringify(problem)}`);
  }
}

/**
 * A target in the plan's key notation, normalised as change ids are: `user:EMAIL`,
 * `device:EMAIL/NAME`, `rule:OWNER|ACTION|DEST|PORTS`, `configuration`. A rule's owner is an email,
 * or `*` or `global` for a rule bound to no user; its ports are `any`, or a type and a range written
 * as the server answers them or as files do: `tcp:22`, `tcp/22`, `tcp:22-22`, `tcp:20 - 22`. The key
 * holds the one canonical form, `tcp:20 - 22`. Anything else is a TargetError giving the shape.
 */
export function normalizeTarget(target: string): string {
  if (target.trim() === 'configuration') return 'configuration';
  const colon = target.indexOf(':');
  const kind = colon === -1 ? '' : target.slice(0, colon).trim();
  const rest = target.slice(colon + 1).trim();
  if (!['user', 'device', 'rule'].includes(kind) || rest === '') {
    throw new TargetError({ code: 'shape', target });
  }
  if (kind === 'user') return `user:${userKey(rest)}`;
  if (kind === 'device') {
    const slash = rest.lastIndexOf('/');
    if (slash <= 0) throw new TargetError({ code: 'device', target });
    return `device:${userKey(rest.slice(0, slash))}/${rest.slice(slash + 1).trim()}`;
  }
  const parsed = parseRuleKey(rest);
  if (typeof parsed !== 'string') throw new TargetError({ code: 'rule', target, problem: parsed.problem });
  return `rule:${parsed}`;
}

/** `OWNER|ACTION|DEST|PORTS` as ruleKey writes it, or what is wrong with it. */
export function parseRuleKey(text: string): string | { problem: RuleKeyProblem } {
  const parts = text.split('|').map((part) => part.trim());
  if (parts.length !== 4) return { problem: { code: 'parts', parts: parts.length } };
  const [owner, action, destination, ports] = parts as [string, string, string, string];
  const global = owner === '*' || owner.toLowerCase() === 'global';
  if (!global && !owner.includes('@')) return { problem: { code: 'owner', owner } };
  const act = action.toLowerCase();
  if (act !== 'accept' && act !== 'drop') return { problem: { code: 'action', action } };
  if (parseCidrOrAddress(destination) === null) return { problem: { code: 'destination', destination } };
  let portType: string | null = null;
  let portRange: string | null = null;
  if (ports !== '' && ports.toLowerCase() !== 'any') {
    const match = /^(tcp|udp)\s*(?:[:/]\s*(.*))?$/i.exec(ports);
    const range = match?.[2]?.trim();
    if (!match || (range !== undefined && range !== '' && !parsePortRange(range).ok))
      return { problem: { code: 'ports', ports } };
    portType = match[1]!.toLowerCase();
    portRange = range === undefined || range === '' ? null : range;
  }
  return ruleKey({
    ownerEmail: global ? null : owner,
    action: act,
    destination,
    port_type: portType,
    port_range: portRange,
  });
}

/**
 * The known key nearest to `wanted`, for a hint: `did you mean rule:*|accept|10.0.0.0/8|tcp:22 - 22?`.
 * First one that is the same by letters and digits, a `+tag` of an email ignored
 * (`user:oneil@corp.example` -> `user:o'neil+vpn@corp.example`); else the fewest edits, closer than
 * half its length. Undefined when none is near.
 */
export function nearestKey(wanted: string, known: Iterable<string>): string | undefined {
  const keys = [...known];
  const skeleton = keySkeleton(wanted);
  const same = keys.find((key) => keySkeleton(key) === skeleton);
  if (same !== undefined) return same;
  let best: string | undefined;
  let bestDistance = Math.max(3, Math.floor(wanted.length / 2)) + 1;
  for (const key of keys) {
    if (Math.abs(key.length - wanted.length) >= bestDistance) continue;
    const d = editDistance(wanted, key, bestDistance);
    if (d < bestDistance) [best, bestDistance] = [key, d];
  }
  return best;
}

/** A key by its letters and digits only, lower case, with an email's `+tag` left out. */
function keySkeleton(key: string): string {
  return key
    .toLowerCase()
    .replace(/\+[^@/|]*@/g, '@')
    .replace(/[^\p{L}\p{N}]/gu, '');
}

/** Levenshtein distance, stopping at `limit` (returns `limit` when at least that). */
function editDistance(a: string, b: string, limit: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      rowMin = Math.min(rowMin, current[j]!);
    }
    if (rowMin >= limit) return limit;
    previous = current;
  }
  return Math.min(previous[b.length]!, limit);
}

/** The ids (`user:…`, `device:…`, `rule:…`) of every live object, for nearestKey. */
export function liveKeyIds(index: LiveIndex): Set<string> {
  const ids = new Set<string>();
  for (const key of index.usersByKey.keys()) ids.add(`user:${key}`);
  for (const key of index.devicesByKey.keys()) ids.add(`device:${key}`);
  for (const key of index.rulesByKey.keys()) ids.add(`rule:${key}`);
  return ids;
}

/**
 * Whether a change belongs to a target: its own id, or, for `user:KEY`, that user's devices
 * (`device:KEY/…`) and rules (`rule:KEY|…`), as a Terraform target on a module takes its resources.
 */
function inTarget(change: Change, target: string): boolean {
  if (change.id === target) return true;
  if (!target.startsWith('user:')) return false;
  const owner = target.slice('user:'.length);
  return change.id.startsWith(`device:${owner}/`) || change.id.startsWith(`rule:${owner}|`);
}

/** `knownKeys`: the live and declared objects' ids, for the nearest-key hint of a target that matches nothing. */
export function targetPlan(plan: Plan, targets: readonly string[], knownKeys?: ReadonlySet<string>): Plan {
  const wanted = targets.map(normalizeTarget);
  const byId = new Map(plan.changes.map((c) => [c.id, c]));
  const keep = new Set<string>();
  const visit = (id: string) => {
    const change = byId.get(id);
    if (!change || keep.has(id)) return;
    keep.add(id);
    for (const dep of change.dependsOn ?? []) visit(dep);
  };
  for (const change of plan.changes) if (wanted.some((id) => inTarget(change, id))) visit(change.id);
  const left = plan.changes.length - keep.size;
  const outcome = planOutcome(plan);
  const narrowed = narrowPlan(
    {
      ...plan,
      outcome: {
        ...outcome,
        pending: [
          ...outcome.pending,
          ...(left > 0 ? [{ reason: 'target' as const, text: { code: 'target_left' as const, count: left } }] : []),
        ],
      },
    },
    plan.changes.filter((c) => keep.has(c.id)),
  );
  const unmatched = wanted.filter((id) => !plan.changes.some((c) => inTarget(c, id)));
  const warnings: PlanWarning[] = [
    ...plan.warnings,
    { code: 'target_limited', targets: [...wanted], left },
    ...unmatched.map((id): PlanWarning => {
      const near = knownKeys && !knownKeys.has(id) ? nearestKey(id, knownKeys) : undefined;
      return { code: 'target_unmatched', target: id, ...(near ? { near } : {}) };
    }),
  ];
  return { ...narrowed, warnings };
}

/**
 * The plan with only some of its changes (a subset, in the plan's order): summary and limits
 * counted again over what is kept, against the limits the plan was made with.
 */
export function narrowPlan(plan: Plan, changes: Change[]): Plan {
  const summary = summarize(changes);
  // The allowances the whole plan was given (`--allow-*` included), against what is kept.
  const limits = evaluateLimits(summary, plan.limits);
  return { ...plan, changes, summary, limits, outcome: outcomeOf(changes, planOutcome(plan)) };
}
