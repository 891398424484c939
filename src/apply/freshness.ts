/**
 * Is a saved plan still true of the server? Every object the plan touches must be as the plan saw
 * it (same fingerprint), every key it creates must still be free, and every user it deletes must
 * take with it exactly the devices and rules the plan listed. Checked on one fresh read of the
 * live state before anything is written, so a stale plan changes nothing.
 */
import type { LiveState } from '../model/state.js';
import { fingerprintOf } from '../plan/fingerprint.js';
import { indexLiveState, liveObjectById, type LiveIndex } from '../plan/live-index.js';
import type { Change, ObjectKind, Plan, ResourceKind } from '../plan/types.js';
import { staleConfiguration } from './configuration.js';

function keyTaken(index: LiveIndex, kind: ResourceKind, key: string): boolean {
  const map = kind === 'user' ? index.usersByKey : kind === 'device' ? index.devicesByKey : index.rulesByKey;
  return map.has(key);
}

/** Why the plan no longer holds, one line per object; empty when it can be applied. */
export function findStaleChanges(plan: Plan, live: LiveState): string[] {
  const index = indexLiveState(live);
  const find = (kind: ObjectKind, id: string) => liveObjectById(index, kind, id);
  const reasons: string[] = [];
  for (const change of plan.changes) {
    if (change.kind === 'configuration') {
      for (const item of staleConfiguration(change, live.configuration)) reasons.push(item);
      continue;
    }
    const { label } = change;
    if (change.action === 'create') {
      if (keyTaken(index, change.kind, change.key))
        reasons.push(`${label}: created on the server since the plan was made`);
      const owner = change.body?.user_id;
      if (typeof owner === 'string' && !index.usersById.has(owner))
        reasons.push(`${label}: its user was deleted since the plan was made`);
      continue;
    }
    if (
      (change.action === 'update' || change.action === 'replace') &&
      change.kind === 'rule' &&
      keyTaken(index, 'rule', change.key)
    ) {
      reasons.push(`${label}: a rule with this key was created since the plan was made`);
    }
    const object = change.liveId ? find(change.kind, change.liveId) : undefined;
    if (!object) {
      reasons.push(`${label}: deleted since the plan was made`);
      continue;
    }
    if (fingerprintOf(change.kind, object) !== change.fingerprint)
      reasons.push(`${label}: changed since the plan was made`);
    if (change.kind === 'user' && change.action === 'delete')
      for (const item of staleCascade(change, index, find)) reasons.push(item);
  }
  return reasons;
}

function staleCascade(
  change: Change,
  index: LiveIndex,
  find: (kind: ObjectKind, id: string) => ReturnType<typeof liveObjectById>,
): string[] {
  const reasons: string[] = [];
  const listed = new Set((change.cascade ?? []).map((item) => item.liveId));
  for (const item of change.cascade ?? []) {
    const object = find(item.kind, item.liveId);
    const { label } = item;
    if (!object) reasons.push(`${label} (goes with ${change.label}): deleted since the plan was made`);
    else if (item.fingerprint && fingerprintOf(item.kind, object) !== item.fingerprint)
      reasons.push(`${label} (goes with ${change.label}): changed since the plan was made`);
  }
  const now = [
    ...(index.devicesByUserId.get(change.liveId!) ?? []),
    ...(index.rulesByUserId.get(change.liveId!) ?? []),
  ];
  const added = now.filter((o) => !listed.has(o.id)).length;
  if (added > 0)
    reasons.push(
      `${change.label}: ${added} device(s) or rule(s) were added to it since the plan was made, and would be deleted with it`,
    );
  return reasons;
}
