/**
 * Rules: declared rules matched to live ones by natural key. A declared rule with no exact live
 * match may overlap live rules of the same owner and action, which the server would refuse it
 * beside: a managed one is replaced, others are deleted first (prune) or reported.
 */
import { normalizeDestination, ruleKey, userKey } from '../model/keys.js';
import { normalizePortRange } from '../model/ports.js';
import { overlapGroup, parseRule, rulesOverlap, storedForm, type ParsedRule } from '../model/rule.js';
import type { DesiredRule } from '../model/state.js';
import type { ApiRule, ApiUser } from '../model/types.js';
import { PHASE, type PlanContext } from './context.js';
import { planRuleDelete } from './deletions.js';
import { fingerprintOf } from './fingerprint.js';
import { ruleLabel } from './live-index.js';
import type { FieldChange } from './types.js';
import type { NotePart } from './notes.js';

interface RuleCandidate {
  /** Change id once planned. */
  key: string;
  ownerEmail: string | null;
  rule: DesiredRule;
  parsed: ParsedRule | null;
}

interface SpareRule {
  rule: ApiRule;
  parsed: ParsedRule | null;
  used: boolean;
}

/** Live rules no declaration matches, indexed twice. */
interface SpareRules {
  /** By overlap group: the only live rules a declared rule can overlap with on the server. */
  byGroup: Map<string, SpareRule[]>;
  /** By owner and action (`OWNER|ACTION`, `*` for global rules): where an edited rule's previous version is looked for. */
  byOwnerAction: Map<string, SpareRule[]>;
}

export function planRules(ctx: PlanContext): void {
  const unmatched = unmatchedRules(ctx);
  if (unmatched.length === 0) return;
  const spare = spareLiveRules(ctx);
  unmatched.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const candidate of unmatched) planUnmatchedRule(ctx, candidate, spare);
}

/** Declared rules without an exact live match; live rules with an exact match are claimed. */
function unmatchedRules(ctx: PlanContext): RuleCandidate[] {
  const unmatched: RuleCandidate[] = [];
  // With port_rules false, overlaps are decided on the rule as the server stores it, without ports.
  const portRules = ctx.desired.settings.port_rules !== false;
  /** `renamed`: the owner's live email is another one (its rules are found under that email). */
  const consider = (ownerEmail: string | null, rule: DesiredRule, ownerLive: ApiUser | undefined, renamed: boolean) => {
    const key = ruleKey({
      ownerEmail,
      action: rule.action,
      destination: rule.destination,
      port_type: rule.port_type,
      port_range: rule.port_range,
    });
    const liveKey =
      ownerLive && renamed
        ? ruleKey({
            ownerEmail: ownerLive.email,
            action: rule.action,
            destination: rule.destination,
            port_type: rule.port_type,
            port_range: rule.port_range,
          })
        : key;
    if (claimLive(ctx, ownerEmail, ownerLive, liveKey)) return;
    // A server without port-rule support stored the rule without its ports: that live rule is it.
    const stored = storedForm({ port_type: rule.port_type, port_range: rule.port_range }, portRules);
    if (stored.port_type !== rule.port_type || stored.port_range !== rule.port_range) {
      const storedKey = ruleKey({
        ownerEmail: ownerLive && renamed ? ownerLive.email : ownerEmail,
        action: rule.action,
        destination: rule.destination,
        ...stored,
      });
      if (claimLive(ctx, ownerEmail, ownerLive, storedKey)) return;
    }
    const parsed = parseRule({
      action: rule.action,
      destination: rule.destination,
      ...stored,
      owner: ownerEmail === null ? null : userKey(ownerEmail),
    });
    unmatched.push({ key, ownerEmail, rule, parsed });
  };
  for (const { user, live } of ctx.declaredUsers.values()) {
    // A renamed user's rules are found under its live (old) email: compared once per user.
    const renamed = live !== undefined && userKey(live.email) !== userKey(user.email);
    for (const rule of user.rules) consider(user.email, rule, live, renamed);
  }
  for (const rule of ctx.desired.rules) consider(null, rule, undefined, false);
  return unmatched;
}

/** Claims the live rules of `liveKey`, when there is one to claim. */
function claimLive(
  ctx: PlanContext,
  ownerEmail: string | null,
  ownerLive: ApiUser | undefined,
  liveKey: string,
): boolean {
  const existing =
    ownerEmail !== null && !ownerLive ? undefined : ctx.uniqueLive('rule', liveKey, ctx.index.rulesByKey.get(liveKey));
  if (!existing) return false;
  for (const same of ctx.allWithKey('rule', liveKey, existing)) ctx.claimedRules.add(same);
  return true;
}

function addTo(map: Map<string, SpareRule[]>, key: string, entry: SpareRule): void {
  const list = map.get(key);
  if (list) list.push(entry);
  else map.set(key, [entry]);
}

/** The live rules no declaration matches, in live order within each index. */
function spareLiveRules(ctx: PlanContext): SpareRules {
  const spare: SpareRules = { byGroup: new Map(), byOwnerAction: new Map() };
  for (const rule of ctx.live.rules) {
    if (ctx.claimedRules.has(rule)) continue;
    const owner = ctx.index.ruleOwnerOf(rule);
    const parsed = parseRule({
      action: rule.action,
      destination: rule.destination,
      port_type: rule.port_type,
      port_range: rule.port_range,
      owner: owner === null ? null : userKey(owner),
    });
    const entry = { rule, parsed, used: false };
    addTo(spare.byOwnerAction, `${owner === null ? '*' : userKey(owner)}|${rule.action}`, entry);
    if (parsed) addTo(spare.byGroup, overlapGroup(parsed).key, entry);
  }
  return spare;
}

function planUnmatchedRule(ctx: PlanContext, candidate: RuleCandidate, spare: SpareRules): void {
  const { ownerEmail, rule, key, parsed } = candidate;
  const owner = ownerEmail === null ? undefined : ctx.declaredUsers.get(userKey(ownerEmail));
  const ownerRef = owner ? ctx.ownerRef(owner.user, owner.live) : { userId: null, dependsOn: [] as string[] };
  const overlapping = parsed
    ? (spare.byGroup.get(overlapGroup(parsed).key) ?? []).filter((e) => rulesOverlap(parsed, e.parsed!))
    : [];
  const label = `rule ${ruleLabel(rule, ownerEmail)}`;
  const wanted = {
    action: rule.action,
    destination: rule.destination.trim(),
    port_type: rule.port_type,
    port_range: rule.port_range?.trim() || null,
  };
  const adoptable = overlapping.find((e) => !e.used && ctx.managesLiveRule(e.rule));
  const id = `rule:${key}`;
  const makeRoom = overlapping.filter((e) => e !== adoptable);
  const dependsOn = [...ownerRef.dependsOn];
  for (const other of makeRoom) {
    // Another live rule in the way: it must be gone before this one fits (prune deletes it).
    const otherKey = ctx.index.ruleKeyOf.get(other.rule)!;
    if (ctx.prune && ctx.managesLiveRule(other.rule) && !other.used) {
      other.used = true;
      ctx.claimedRules.add(other.rule);
      planRuleDelete(ctx, other.rule, PHASE.makeRoom, [{ code: 'pruned_to_make_room', label }]);
      dependsOn.push(`rule:${otherKey}`);
    } else if (!other.used) {
      // A conflict caught at plan time, never a 422 in the middle of apply.
      ctx.problems.push({
        code: 'rule_overlaps',
        label,
        live: ruleLabel(other.rule, ctx.index.ruleOwnerOf(other.rule)),
        prune: ctx.prune,
      });
    }
  }
  const replaced = adoptable ?? previousVersion(ctx, candidate, spare);
  if (replaced) {
    replaced.used = true;
    ctx.claimedRules.add(replaced.rule);
    planRuleReplace(
      ctx,
      candidate,
      replaced.rule,
      { ...wanted, user_id: ownerRef.userId },
      dependsOn,
      adoptable !== undefined,
    );
    return;
  }
  const kept = ctx.prune ? undefined : keptPreviousVersion(ctx, candidate, spare);
  const body: Record<string, unknown> = { ...wanted, user_id: ownerRef.userId };
  const fields: FieldChange[] = (['action', 'destination', 'port_type', 'port_range'] as const)
    .filter((f) => wanted[f] !== null)
    .map((f) => ({ field: f, before: null, after: wanted[f] }));
  if (ownerEmail !== null) fields.push({ field: 'user', before: null, after: ownerEmail });
  ctx.add({
    id,
    kind: 'rule',
    action: 'create',
    key,
    label,
    phase: PHASE.members,
    fingerprint: null,
    fields,
    body,
    ...(dependsOn.length ? { dependsOn } : {}),
    ...(kept ? { note: kept } : {}),
  });
}

/**
 * A rule is never updated in place: a real 0.7.x server's firewall applies only inserts and
 * deletes of rules (docs/rule-semantics.md §5.6). The live rule is deleted, then the declared one
 * created, as one `replace` change (counted once).
 */
function planRuleReplace(
  ctx: PlanContext,
  candidate: RuleCandidate,
  live: ApiRule,
  body: Record<string, unknown>,
  dependsOn: string[],
  overlaps: boolean,
): void {
  const liveOwner = ctx.index.ruleOwnerOf(live);
  const fields: FieldChange[] = [];
  if (live.action !== body.action) fields.push({ field: 'action', before: live.action, after: body.action });
  if (normalizeDestination(live.destination) !== normalizeDestination(String(body.destination))) {
    fields.push({ field: 'destination', before: live.destination, after: body.destination });
  }
  if (live.port_type !== body.port_type)
    fields.push({ field: 'port_type', before: live.port_type, after: body.port_type });
  if (normalizePortRange(live.port_range) !== normalizePortRange(body.port_range as string | null)) {
    fields.push({ field: 'port_range', before: live.port_range, after: body.port_range });
  }
  ctx.add({
    id: `rule:${candidate.key}`,
    kind: 'rule',
    action: 'replace',
    key: candidate.key,
    label: `rule ${ruleLabel(candidate.rule, candidate.ownerEmail)}`,
    liveId: live.id,
    phase: PHASE.members,
    fingerprint: fingerprintOf('rule', live),
    fields,
    body,
    note: [{ code: 'rule_replaces', live: ruleLabel(live, liveOwner), overlaps }],
    ...(dependsOn.length ? { dependsOn } : {}),
  });
}

/** Live rules of the owner, unclaimed, in any action group. */
function spareOfOwner(candidate: RuleCandidate, spare: SpareRules): SpareRule[] {
  const owner = candidate.ownerEmail === null ? '*' : userKey(candidate.ownerEmail);
  const { byOwnerAction } = spare;
  return [...(byOwnerAction.get(`${owner}|accept`) ?? []), ...(byOwnerAction.get(`${owner}|drop`) ?? [])].filter(
    (e) => !e.used,
  );
}

/**
 * The live rule a declared rule most likely is an edit of: same owner, and the same destination
 * (its ports or action changed) or the same action and ports (its destination changed).
 */
function looksLikePreviousVersion(candidate: RuleCandidate, live: ApiRule): boolean {
  const rule = candidate.rule;
  if (normalizeDestination(live.destination) === normalizeDestination(rule.destination)) return true;
  return (
    live.action === rule.action &&
    live.port_type === rule.port_type &&
    normalizePortRange(live.port_range) === normalizePortRange(rule.port_range)
  );
}

/** With prune on, a managed live rule no file declares that the declared rule is an edit of: replaced. */
function previousVersion(ctx: PlanContext, candidate: RuleCandidate, spare: SpareRules): SpareRule | undefined {
  if (!ctx.prune) return undefined;
  return spareOfOwner(candidate, spare).find(
    (e) => ctx.managesLiveRule(e.rule) && looksLikePreviousVersion(candidate, e.rule),
  );
}

/** With prune off, the create says in words that the rule it looks like an edit of stays, with its access. */
function keptPreviousVersion(ctx: PlanContext, candidate: RuleCandidate, spare: SpareRules): NotePart[] | undefined {
  const previous = spareOfOwner(candidate, spare).filter((e) => looksLikePreviousVersion(candidate, e.rule));
  if (previous.length === 0) return undefined;
  return [{ code: 'previous_rule_kept', rules: previous.map((e) => ruleLabel(e.rule, ctx.index.ruleOwnerOf(e.rule))) }];
}
