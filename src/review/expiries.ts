/**
 * The review's expiries (with `-f`): grants whose `expires:` (or `role_expires:`) has passed but that
 * are still on the server (a missed `apply --expired-only` stays visible), and grants that expire
 * within the next days. Pure.
 */
import { deviceKey, ruleKey, userKey } from '../model/keys.js';
import type { DesiredState, Expiry, ExpiryKind, LiveState } from '../model/state.js';

export const DEFAULT_EXPIRING_DAYS = 14;
const DAY_MS = 86_400_000;

export interface ReviewExpiry {
  kind: ExpiryKind;
  key: string;
  label: string;
  /** As written in the files. */
  expires: string;
  /** `file:line` of the expiry, when known. */
  at?: string;
  /** Whole days from the review to the expiry (0 or negative once passed: that many whole days ago). */
  days: number;
  expired: boolean;
}

export interface ReviewExpiries {
  expiring_days: number;
  /** Passed, and the grant is still on the server. */
  expired: ReviewExpiry[];
  /** Not passed, within `expiring_days`. */
  expiring: ReviewExpiry[];
}

/** The keys of what the server holds: users, admins, devices and rules, as the plan keys them. */
function liveKeys(live: LiveState): Record<ExpiryKind, Set<string>> {
  const emailOf = new Map(live.users.map((u) => [u.id, u.email]));
  const keys: Record<ExpiryKind, Set<string>> = {
    user: new Set(live.users.map((u) => userKey(u.email))),
    role: new Set(live.users.filter((u) => u.role === 'admin').map((u) => userKey(u.email))),
    device: new Set(),
    rule: new Set(),
  };
  for (const d of live.devices) {
    const owner = emailOf.get(d.user_id);
    if (owner !== undefined) keys.device.add(deviceKey(owner, d.name));
  }
  for (const r of live.rules) {
    const owner = r.user_id === null ? null : emailOf.get(r.user_id);
    if (owner === undefined) continue;
    keys.rule.add(ruleKey({ ownerEmail: owner, ...r }));
  }
  return keys;
}

function entry(item: Expiry, nowMs: number): ReviewExpiry {
  const when = Date.parse(item.instant);
  const days = when > nowMs ? Math.floor((when - nowMs) / DAY_MS) : -Math.floor((nowMs - when) / DAY_MS);
  return {
    kind: item.kind,
    key: item.key,
    label: item.label,
    expires: item.expires,
    ...(item.source ? { at: `${item.source.file}:${item.source.line}` } : {}),
    days,
    expired: when <= nowMs,
  };
}

export function reviewExpiries(
  desired: DesiredState,
  live: LiveState,
  now: Date,
  expiringDays: number,
): ReviewExpiries {
  const onServer = liveKeys(live);
  const nowMs = now.getTime();
  const horizon = nowMs + expiringDays * DAY_MS;
  const expired: ReviewExpiry[] = [];
  const expiring: ReviewExpiry[] = [];
  for (const item of desired.expiries ?? []) {
    const when = Date.parse(item.instant);
    if (when <= nowMs) {
      if (onServer[item.kind].has(item.key)) expired.push(entry(item, nowMs));
    } else if (when <= horizon) expiring.push(entry(item, nowMs));
  }
  const byTime = (a: ReviewExpiry, b: ReviewExpiry) => a.days - b.days || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  return { expiring_days: expiringDays, expired: expired.sort(byTime), expiring: expiring.sort(byTime) };
}
