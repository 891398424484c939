/**
 * Apply what was reviewed, and nothing else (`netform apply -f PATH --reviewed PLANFILE`): the
 * merged files are planned again against the live state, and of that fresh plan only the changes
 * that also appear, identically, in the reviewed plan are kept (compare.ts: same object, action,
 * fields and body, server-assigned ids aside, the same secrets by reference and HMAC, planned
 * against the same live object). The fresh plan's secrets must carry their HMAC under the key the
 * reviewed plan was sealed with (seal.ts withSecretHmacs), or they match no reviewed one. Every other
 * change is withheld, with its reason. The kept plan is always a subset of the fresh plan: a
 * forged or stale reviewed plan can keep fewer changes, never add one the merged files do not
 * ask for. Pure.
 */
import type { SecretRef } from '../model/secret.js';
import { canonicalJson } from './canonical.js';
import { compareChanges, refOf } from './compare.js';
import { grantsExpiredAt } from './expiries.js';
import { sameHmac } from './seal.js';
import { narrowPlan } from './target.js';
import type { Change, Plan } from './types.js';

/** Why a change is withheld, as a code (src/views/reviewed.ts words it). */
export const WITHHELD_REASONS = {
  /** No change to this object in the reviewed plan. */
  notReviewed: 'not_reviewed',
  /** The reviewed plan changes this object, but differently (other fields, values or action). */
  changed: 'changed',
  /** The same change, but the live object it acts on changed since review. */
  noLongerHolds: 'no_longer_holds',
  /** Kept on its own, but it needs a change that is withheld (the user a device belongs to). */
  dependsOnWithheld: 'depends_on_withheld',
  /** Its reviewers (`settings.owners` of the base) have not all approved the pull request's head commit (approvals.ts). */
  needsApproval: 'needs_approval',
  /** The reviewed change grants something whose `expires:` has passed since (judged at apply's clock). */
  expiredSinceReview: 'expired_since_review',
} as const;

export type WithheldReason = (typeof WITHHELD_REASONS)[keyof typeof WITHHELD_REASONS];

/**
 * More about a reason, as a code and its values: what differs from the reviewed change (`action`
 * … `request`), what changed on the server, when it expired, or what it waits for.
 */
export type WithheldDetail =
  | { code: 'action'; reviewed: string; now: string }
  | { code: 'fields'; fields: string[] }
  | { code: 'secret_source'; field: string; source: string; reviewedSource: string | null }
  | { code: 'secret_not_compared'; source: string }
  | { code: 'secret_value'; source: string }
  | { code: 'cascade' }
  | { code: 'request' }
  | { code: 'live_changed'; label: string }
  | { code: 'cascade_live_changed' }
  | { code: 'expired'; expires: string }
  | { code: 'needs'; changes: string[] }
  | { code: 'approval_from'; owners: string[] };

export interface WithheldChange {
  change: Change;
  reason: WithheldReason;
  detail?: WithheldDetail;
}

export interface ReviewedIntersection {
  /** The fresh plan narrowed to the reviewed changes: what apply writes. */
  plan: Plan;
  /** The fresh plan's other changes, in its order. */
  withheld: WithheldChange[];
  /** Changes of the reviewed plan the fresh plan does not make (done since, or no longer asked for). */
  notNeeded: Change[];
}

/** The reviewed plan was made against another server than this apply's: nothing can be kept. */
export class ReviewedPlanError extends Error {
  override readonly name = 'ReviewedPlanError';
  constructor(
    readonly reviewedServer: string,
    readonly server: string,
  ) {
    super(`${reviewedServer} != ${server}`);
  }
}

/** How a secret reference is named in words: its variable, its file, or its Terraform variable (never its value). */
function refName(ref: SecretRef): string {
  if ('env' in ref) return ref.env;
  if ('tfvar' in ref) return `var.${ref.tfvar}`;
  return ref.file;
}

/**
 * What differs in the secrets of two changes, or null when they are the same: another
 * reference, or the same reference with another value (the fresh plan's HMAC, taken under this
 * run's key, is not the reviewed plan's), or a value that was not compared (no HMAC taken).
 */
function secretDifference(fresh: Change, reviewed: Change): WithheldDetail | null {
  const before = new Map((reviewed.secrets ?? []).map((s) => [s.field, s]));
  for (const secret of fresh.secrets ?? []) {
    const seen = before.get(secret.field);
    if (!seen || canonicalJson(refOf(seen.ref)) !== canonicalJson(refOf(secret.ref)))
      return {
        code: 'secret_source',
        field: secret.field,
        source: refName(secret.ref),
        reviewedSource: seen ? refName(seen.ref) : null,
      };
    if (secret.hmac === undefined) return { code: 'secret_not_compared', source: refName(secret.ref) };
    if (!sameHmac(seen.hmac, secret.hmac)) return { code: 'secret_value', source: refName(secret.ref) };
  }
  return null;
}

/** What differs between a fresh change and the reviewed one with the same id. */
function differences(fresh: Change, reviewed: Change): WithheldDetail {
  if (fresh.action !== reviewed.action) return { code: 'action', reviewed: reviewed.action, now: fresh.action };
  const shown = (c: Change) => new Map(c.fields.map((f) => [f.field, JSON.stringify([f.before, f.after])]));
  const a = shown(fresh);
  const b = shown(reviewed);
  const fields = [...new Set([...a.keys(), ...b.keys()])].filter((f) => a.get(f) !== b.get(f));
  if (fields.length > 0) return { code: 'fields', fields };
  const secret = secretDifference(fresh, reviewed);
  if (secret) return secret;
  const cascade = (c: Change) => (c.cascade ?? []).map((i) => `${i.kind}:${i.key}`).sort();
  if (JSON.stringify(cascade(fresh)) !== JSON.stringify(cascade(reviewed))) return { code: 'cascade' };
  return { code: 'request' };
}

/**
 * `at`: apply's clock. A reviewed change that grants something expired by then is withheld as
 * "expired since review" (the fresh plan, made at the same instant, no longer grants it).
 */
export function intersectReviewed(fresh: Plan, reviewed: Plan, at: Date = new Date()): ReviewedIntersection {
  if (reviewed.server !== fresh.server) {
    throw new ReviewedPlanError(reviewed.server, fresh.server);
  }
  const reviewedById = new Map(reviewed.changes.map((c) => [c.id, c]));
  const withheld = new Map<string, WithheldChange>();
  for (const change of fresh.changes) {
    const seen = reviewedById.get(change.id);
    if (!seen) {
      withheld.set(change.id, { change, reason: WITHHELD_REASONS.notReviewed });
      continue;
    }
    const comparison = compareChanges(change, seen);
    if (change.expired !== undefined && comparison !== 'same')
      withheld.set(change.id, {
        change,
        reason: WITHHELD_REASONS.expiredSinceReview,
        detail: { code: 'expired', expires: change.expired },
      });
    else if (comparison === 'different')
      withheld.set(change.id, { change, reason: WITHHELD_REASONS.changed, detail: differences(change, seen) });
    else if (comparison === 'premise')
      withheld.set(change.id, {
        change,
        reason: WITHHELD_REASONS.noLongerHolds,
        detail:
          change.fingerprint !== seen.fingerprint
            ? { code: 'live_changed', label: change.label }
            : { code: 'cascade_live_changed' },
      });
  }
  // A kept change that needs a withheld one (its user's create, a rule that makes room) is withheld too.
  const labelOf = (id: string) => {
    const c = fresh.changes.find((x) => x.id === id);
    return c?.label ?? id;
  };
  for (let grew = true; grew;) {
    grew = false;
    for (const change of fresh.changes) {
      if (withheld.has(change.id)) continue;
      const blocking = (change.dependsOn ?? []).filter((id) => withheld.has(id));
      if (blocking.length === 0) continue;
      withheld.set(change.id, {
        change,
        reason: WITHHELD_REASONS.dependsOnWithheld,
        detail: { code: 'needs', changes: blocking.map(labelOf) },
      });
      grew = true;
    }
  }
  const freshIds = new Set(fresh.changes.map((c) => c.id));
  const kept = narrowPlan(
    fresh,
    fresh.changes.filter((c) => !withheld.has(c.id)),
  );
  // An undeclared object whose deletion is withheld stays: the plan says so.
  if (fresh.undeclared)
    kept.undeclared = fresh.undeclared.map((item) => {
      const held = item.fate === 'delete' ? withheld.get(`${item.kind}:${item.key}`) : undefined;
      return held ? { ...item, fate: 'keep', withheld: held.reason } : item;
    });
  // What the reviewed plan grants that has expired since: withheld (the fresh plan no longer makes it).
  const expiredSince = grantsExpiredAt(reviewed, at).filter((c) => !freshIds.has(c.id));
  const expiredIds = new Set(expiredSince.map((c) => c.id));
  return {
    plan: kept,
    withheld: [
      ...fresh.changes.filter((c) => withheld.has(c.id)).map((c) => withheld.get(c.id)!),
      ...expiredSince.map((change) => ({
        change,
        reason: WITHHELD_REASONS.expiredSinceReview,
        detail: { code: 'expired' as const, expires: change.expires! },
      })),
    ],
    notNeeded: reviewed.changes.filter((c) => !freshIds.has(c.id) && !expiredIds.has(c.id)),
  };
}
