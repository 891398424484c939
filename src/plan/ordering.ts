/**
 * Ordering: the phase of each change and the order changes are listed and run in. Changes that
 * free something another change needs run before it; nothing else moves.
 */
import { PHASE, type PlanContext } from './context.js';
import type { Change } from './types.js';

/** A user's device limit: deletions of its devices go first when it also gets new devices. */
export function makeRoomForNewDevices(ctx: PlanContext): void {
  const usersWithNewDevices = new Set<string>();
  for (const change of ctx.changes.values()) {
    if (change.kind === 'device' && change.action === 'create' && typeof change.body?.user_id === 'string')
      usersWithNewDevices.add(change.body.user_id);
  }
  for (const change of ctx.changes.values()) {
    if (change.kind !== 'device' || change.action !== 'delete' || !change.liveId) continue;
    const device = ctx.index.devicesById.get(change.liveId);
    if (device && usersWithNewDevices.has(device.user_id)) change.phase = PHASE.makeRoom;
  }
}

const KIND_ORDER = { configuration: -1, user: 0, device: 1, rule: 2 } as const;

/**
 * "Now managed" changes first (they exist only because a left-out field means its default:
 * defaults.ts), then by phase, then users before devices before rules, then by key. Apply runs
 * changes by phase whatever their place in the list.
 */
export function orderedChanges(ctx: PlanContext): Change[] {
  const nowManaged = (c: Change) => (c.now_managed?.length ? 0 : 1);
  return [...ctx.changes.values()].sort(
    (a, b) =>
      nowManaged(a) - nowManaged(b) ||
      a.phase - b.phase ||
      KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}
