/**
 * Ordering: the phase of each change and the order changes are listed and run in. Changes that
 * free something another change needs run before it; nothing else moves.
 */
import { PHASE, type PlanContext } from './context.js';
import type { Change } from './types.js';

/**
 * Device deletions go first when the plan creates devices: they free tunnel addresses the new
 * devices may need (the server hands out the lowest free one), and a user's device limit.
 */
export function makeRoomForNewDevices(ctx: PlanContext): void {
  let newDevices = false;
  for (const change of ctx.changes.values())
    if (change.kind === 'device' && change.action === 'create') newDevices = true;
  if (!newDevices) return;
  for (const change of ctx.changes.values()) {
    if (change.kind === 'device' && change.action === 'delete' && change.liveId) change.phase = PHASE.makeRoom;
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
