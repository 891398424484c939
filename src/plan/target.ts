/**
 * `--target KEY`: a plan limited to some objects and what they need, as `terraform -target`. A
 * filter applied after planning, so the planner stays whole: keep the changes whose id is a
 * target, then, transitively, the changes they depend on (the user a device belongs to, the rule
 * that must make room first). Summary and limits are counted again over what is kept.
 */
import { ruleKey, userKey } from '../model/keys.js';
import { evaluateLimits, summarize } from './limits.js';
import type { Change, Plan } from './types.js';

export class TargetError extends Error {
  override readonly name = 'TargetError';
}

/**
 * A target in the plan's key notation, normalised as change ids are: `user:EMAIL`,
 * `device:EMAIL/NAME`, `rule:OWNER|ACTION|DEST|PORTS`, `configuration`. A rule's ports may be
 * written as the server answers them or as files do (`tcp:443`, `tcp:443-443`): the key holds
 * the one canonical form, `tcp:443 - 443`.
 */
export function normalizeTarget(target: string): string {
  if (target.trim() === 'configuration') return 'configuration';
  const colon = target.indexOf(':');
  const kind = colon === -1 ? '' : target.slice(0, colon);
  const rest = target.slice(colon + 1).trim();
  if (!['user', 'device', 'rule'].includes(kind) || rest === '') {
    throw new TargetError(
      `--target ${target}: expected user:EMAIL, device:EMAIL/NAME, rule:KEY or configuration (the ids netform plan --format json shows)`,
    );
  }
  if (kind === 'user') return `user:${userKey(rest)}`;
  if (kind === 'device') {
    const slash = rest.lastIndexOf('/');
    if (slash <= 0) throw new TargetError(`--target ${target}: a device is device:EMAIL/NAME`);
    return `device:${userKey(rest.slice(0, slash))}/${rest.slice(slash + 1)}`;
  }
  return `rule:${normalizeRuleKey(rest)}`;
}

/** `OWNER|ACTION|DEST|PORTS` as ruleKey writes it; text that is not four parts is left as it is (it matches nothing). */
function normalizeRuleKey(text: string): string {
  const parts = text.split('|').map((part) => part.trim());
  if (parts.length !== 4) return text;
  const [owner, action, destination, ports] = parts as [string, string, string, string];
  const colon = ports.indexOf(':');
  const any = ports.toLowerCase() === 'any' || ports === '';
  return ruleKey({
    ownerEmail: owner === '*' ? null : owner,
    action: action.toLowerCase(),
    destination,
    port_type: any ? null : colon === -1 ? ports : ports.slice(0, colon),
    port_range: any || colon === -1 ? null : ports.slice(colon + 1).trim(),
  });
}

export function targetPlan(plan: Plan, targets: readonly string[]): Plan {
  const wanted = targets.map(normalizeTarget);
  const byId = new Map(plan.changes.map((c) => [c.id, c]));
  const keep = new Set<string>();
  const visit = (id: string) => {
    const change = byId.get(id);
    if (!change || keep.has(id)) return;
    keep.add(id);
    for (const dep of change.dependsOn ?? []) visit(dep);
  };
  for (const id of wanted) visit(id);
  const narrowed = narrowPlan(
    plan,
    plan.changes.filter((c) => keep.has(c.id)),
  );
  const unmatched = wanted.filter((id) => !byId.has(id));
  const left = plan.changes.length - narrowed.changes.length;
  const warnings = [
    ...plan.warnings,
    `limited by --target ${wanted.join(', ')}: ${left} other change(s) are left out of this plan; a run without --target makes them`,
    ...unmatched.map(
      (id) => `--target ${id}: no change is planned for it (already as declared, or not a key of these files)`,
    ),
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
  return { ...plan, changes, summary, limits };
}
